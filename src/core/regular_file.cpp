#include "core/regular_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.hpp"

namespace pemc {
namespace {

std::string not_regular(const std::filesystem::path& path, const std::string& what, mode_t mode) {
  return what + " '" + path.string() + "' is " + file_kind(mode) +
         ", not a regular file (pemc reads regular files only: a FIFO would block the run)";
}

}  // namespace

std::string file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISREG(mode)) return "a regular file";
  return "a special file";
}

void refuse_special_file(const std::filesystem::path& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  if (!S_ISREG(st.st_mode)) throw UntrustedInputError(not_regular(path, what, st.st_mode));
}

int open_regular_file(const std::filesystem::path& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw IoError("cannot open " + what + " '" + path.string() + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const mode_t mode = st.st_mode;
    ::close(fd);
    throw UntrustedInputError(not_regular(path, what, mode));
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

void read_regular_file(const std::filesystem::path& path, const std::string& what,
                       std::uintmax_t max_bytes,
                       const std::function<void(const char* data, std::size_t n)>& chunk) {
  const int fd = open_regular_file(path, what);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<std::uintmax_t>(st.st_size) > max_bytes)
    throw UntrustedInputError(what + " '" + path.string() + "' is " + std::to_string(st.st_size) +
                              " bytes; files larger than " + std::to_string(max_bytes) +
                              " bytes are refused");
  std::vector<char> buffer(std::size_t{1} << 20);
  std::uintmax_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError("cannot read " + what + " '" + path.string() + "': " + std::strerror(errno));
    }
    total += static_cast<std::uintmax_t>(n);
    if (total > max_bytes)
      throw UntrustedInputError(what + " '" + path.string() + "' grew past " +
                                std::to_string(max_bytes) + " bytes while read");
    chunk(buffer.data(), static_cast<std::size_t>(n));
  }
}

}  // namespace pemc
