// Fuzzes load_numeric_csv (the data files of the regression targets) on arbitrary file content.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "targets/csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static pemc::fuzz::MemFile file("fuzz.csv");
  const auto& path = file.set(data, size);
  try {
    const auto table = pemc::targets::load_numeric_csv(path);
    // The documented invariants of a loaded table.
    if (table.header.empty() || table.values.rows() < 1 ||
        table.values.cols() != static_cast<Eigen::Index>(table.header.size()) ||
        !table.values.allFinite())
      __builtin_trap();
  } catch (const pemc::Error& e) {
    pemc::fuzz::check_message(e);
  }
  return 0;
}
