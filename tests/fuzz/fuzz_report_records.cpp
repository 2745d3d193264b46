// Fuzzes pemc-report on hostile record files: the input is a sequence of records, each a 2-byte
// little-endian length and that many bytes of a serialised pemc.v1.Record, which are framed with
// correct checksums, so that every input reaches the readers' content checks (header bounds, the
// file's structure, draws against their runs) instead of stopping at a checksum. Every report
// command that reads draws runs on it: verify, summarize, diagnose, compare and export (CSV to
// memory). Each must end with a pemc::Error or a result: no crash, no allocation over the fuzzer's
// limit, no hang, and nothing run or opened that a header names (no target is ever built).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz_support.hpp"
#include "records/frame.hpp"
#include "report/compare.hpp"
#include "report/diagnostics.hpp"
#include "report/export.hpp"
#include "report/summary.hpp"
#include "report/verify.hpp"

namespace {

// The input's records as a record file: magic, then one frame per record.
std::string as_record_file(const std::uint8_t* data, std::size_t size) {
  std::string file(pemc::records::kMagic);
  std::size_t pos = 0;
  while (pos + 2 <= size) {
    const std::size_t n = std::min<std::size_t>(data[pos] | (data[pos + 1] << 8), size - pos - 2);
    const std::string_view payload(reinterpret_cast<const char*>(data + pos + 2), n);
    const std::uint32_t crc = pemc::records::payload_crc32(payload);
    for (const std::uint32_t v : {static_cast<std::uint32_t>(n), crc})
      for (int b = 0; b < 4; ++b) file += static_cast<char>((v >> (8 * b)) & 0xff);
    file += payload;
    pos += 2 + n;
  }
  return file;
}

template <typename F>
void run(F&& command) {
  try {
    command();
  } catch (const pemc::Error& e) {
    pemc::fuzz::check_message(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static pemc::fuzz::MemFile file("fuzz-report.pemc");
  const std::string bytes = as_record_file(data, size);
  const std::filesystem::path path =
      file.set(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  run([&] { (void)pemc::report::verify_file(path); });
  run([&] { (void)pemc::report::summarize_file(path); });
  run([&] { (void)pemc::report::diagnose_files({path}, pemc::report::TraceOptions{}); });
  run([&] { (void)pemc::report::compare_files({path}, pemc::report::CompareOptions{}); });
  run([&] {
    std::ostringstream out;
    (void)pemc::report::export_draws(path, out, pemc::report::ExportOptions{});
  });
  return 0;
}
