#include "core/sha256.hpp"

#include <openssl/evp.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

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
  const int fd = open_regular_file(path, what);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  DigestContext d;
  std::vector<char> buffer(std::size_t{1} << 20);
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError("cannot read " + what + " '" + path.string() + "': " + std::strerror(errno));
    }
    d.add(buffer.data(), static_cast<std::size_t>(n));
  }
  return d.hex();
}

}  // namespace pemc
