// Fuzzes load_boltzmann_machine and read_number_matrix. The input is split at its first NUL byte:
// the part before is the weights file, the part after the bias file (a second NUL splits off a
// third part: a matrix read with read_number_matrix, its row count taken from the first byte).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/number_file.hpp"
#include "fuzz_support.hpp"
#include "targets/boltzmann_machine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static pemc::fuzz::MemFile w("fuzz_w.txt"), b("fuzz_b.txt"), q("fuzz_q.txt");
  const auto* split = static_cast<const std::uint8_t*>(std::memchr(data, 0, size));
  const std::size_t w_size = split ? static_cast<std::size_t>(split - data) : size;
  const std::uint8_t* b_data = split ? split + 1 : data + size;
  std::size_t b_size = static_cast<std::size_t>(data + size - b_data);
  const auto* split2 = static_cast<const std::uint8_t*>(std::memchr(b_data, 0, b_size));
  const std::uint8_t* q_data = nullptr;
  std::size_t q_size = 0;
  if (split2) {
    q_data = split2 + 1;
    q_size = static_cast<std::size_t>(data + size - q_data);
    b_size = static_cast<std::size_t>(split2 - b_data);
  }
  try {
    const auto m = pemc::targets::load_boltzmann_machine(w.set(data, w_size), b.set(b_data, b_size));
    if (m.W.rows() != m.W.cols() || m.b.size() != m.W.rows() || !m.W.allFinite() ||
        !m.b.allFinite() || (m.W - m.W.transpose()).cwiseAbs().maxCoeff() != 0.0)
      __builtin_trap();
  } catch (const pemc::Error& e) {
    pemc::fuzz::check_message(e);
  }
  if (q_data && q_size > 0) {
    try {
      const Eigen::Index rows = static_cast<Eigen::Index>(q_data[0]) - 8;  // may be <= 0
      (void)pemc::read_number_matrix(q.set(q_data + 1, q_size - 1), rows, "fuzz matrix");
    } catch (const pemc::Error& e) {
      pemc::fuzz::check_message(e);
    }
  }
  return 0;
}
