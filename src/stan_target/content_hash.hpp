#pragma once
// A content hash for cache keys: two 64-bit FNV-1a hashes with different offsets, as 32 hex
// digits. Not cryptographic: it tells apart the model sources and toolchains a cache holds.
#include <cstdint>
#include <string>
#include <string_view>

namespace pemc::stan_target {

class ContentHash {
 public:
  void add(std::string_view bytes) {
    for (const char c : bytes) {
      const auto b = static_cast<std::uint8_t>(c);
      a_ = (a_ ^ b) * kPrime;
      b_ = (b_ ^ b) * kPrime;
    }
    // A separator, so that add("ab"), add("c") and add("a"), add("bc") differ.
    a_ = (a_ ^ 0xffu) * kPrime;
    b_ = (b_ ^ 0xfeu) * kPrime;
  }
  // Adds the file's bytes; a missing file adds its name and a marker instead.
  void add_file(const std::string& path);
  std::string hex() const;

 private:
  static constexpr std::uint64_t kPrime = 0x100000001b3ull;
  std::uint64_t a_ = 0xcbf29ce484222325ull;
  std::uint64_t b_ = 0x84222325cbf29ce4ull;
};

}  // namespace pemc::stan_target
