// Fuzzes the checkpoint reader (pemc-dist --resume's input, runner/checkpoint.hpp): read_checkpoint
// on the bytes as a file (magic, version, length and checksum checks), and decode_checkpoint on the
// bytes wrapped in a correct header, so that the content's parse and consistency checks are reached
// too (a fuzzer cannot forge the crc32 that guards them in a file).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.hpp"
#include "runner/checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static pemc::fuzz::MemFile file("fuzz.ckpt");
  const auto& path = file.set(data, size);
  try {
    const auto c = pemc::runner::read_checkpoint(path);
    // Accepted content round-trips: what the reader accepts, the writer would write the same way.
    if (pemc::runner::decode_checkpoint(pemc::runner::encode_checkpoint(c), "again")
            .ByteSizeLong() != c.ByteSizeLong())
      __builtin_trap();
  } catch (const pemc::Error& e) {
    pemc::fuzz::check_message(e);
  }
  const std::string_view content(reinterpret_cast<const char*>(data), size);
  try {
    (void)pemc::runner::decode_checkpoint(pemc::runner::checkpoint_file_bytes(content),
                                          "fuzz.ckpt");
  } catch (const pemc::Error& e) {
    pemc::fuzz::check_message(e);
  }
  return 0;
}
