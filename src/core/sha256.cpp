#include "core/sha256.hpp"

#include <openssl/evp.h>

#include <array>
#include <limits>
#include <memory>

#include "core/error.hpp"
#include "core/regular_file.hpp"

namespace pemc {
namespace {

struct DigestContext {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  DigestContext() {
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
      throw Error("SHA-256: OpenSSL could not set up a digest");
  }
  void add(const void* data, std::size_t size) {
    if (EVP_DigestUpdate(ctx.get(), data, size) != 1) throw Error("SHA-256: digest update failed");
  }
  std::string hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(ctx.get(), digest.data(), &n) != 1)
      throw Error("SHA-256: digest failed");
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < n; ++i) {
      out += kDigits[digest[i] >> 4];
      out += kDigits[digest[i] & 0xf];
    }
    return out;
  }
};

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  DigestContext d;
  d.add(bytes.data(), bytes.size());
  return d.hex();
}

std::string sha256_of_file(const std::filesystem::path& path, const std::string& what) {
  DigestContext d;
  read_regular_file(path, what, std::numeric_limits<std::uintmax_t>::max(),
                    [&](const char* data, std::size_t n) { d.add(data, n); });
  return d.hex();
}

}  // namespace pemc
