// Fuzzes the record file reader (pemc-report's input): RecordReader via verify() and read_all(), and
// count_frames (the collector's check of worker batches) on the bytes after the magic.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.hpp"
#include "records/record_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static pemc::fuzz::MemFile file("fuzz.pemc");
  const auto& path = file.set(data, size);
  try {
    const auto v = pemc::records::verify(path);
    const auto all = pemc::records::read_all(path);
    // verify and read_all must agree on how much of the file is good.
    if (static_cast<std::int64_t>(all.records.size()) != v.n_records ||
        all.problem.has_value() != v.problem.has_value() || v.n_bytes > size)
      __builtin_trap();
    if (v.problem && v.problem->offset != v.n_bytes) __builtin_trap();
  } catch (const pemc::Error& e) {
    pemc::fuzz::check_message(e);
  }
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto frames = bytes.size() >= pemc::records::kMagic.size()
                          ? bytes.substr(pemc::records::kMagic.size())
                          : bytes;
  try {
    (void)pemc::records::count_frames(frames);
  } catch (const pemc::Error& e) {
    pemc::fuzz::check_message(e);
  }
  return 0;
}
