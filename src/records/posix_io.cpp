#include "records/posix_io.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "core/error.hpp"

namespace pemc::records::detail {

namespace {

const char* errno_name(int e) {
  switch (e) {
    case ENOSPC: return "ENOSPC";
    case EFBIG: return "EFBIG";
    case EDQUOT: return "EDQUOT";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR";
    case EEXIST: return "EEXIST";
    case EROFS: return "EROFS";
    case EIO: return "EIO";
    case EBADF: return "EBADF";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    default: return nullptr;
  }
}

}  // namespace

std::string describe_errno(int error_number) {
  if (error_number == ENOSPC) return "disk full (ENOSPC)";
  std::string text = std::strerror(error_number);
  if (const char* name = errno_name(error_number)) {
    text += " (";
    text += name;
    text += ")";
  }
  return text;
}

std::string io_message(const std::filesystem::path& path, const std::string& what, int error_number) {
  return path.string() + ": " + what + ": " + describe_errno(error_number);
}

void write_all(int fd, const char* data, std::size_t size, const std::filesystem::path& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(io_message(path, "write failed", errno));
    }
    if (n == 0) {
      // write() returning 0 for a non-zero size means the device accepts nothing more.
      throw IoError(io_message(path, "write failed", ENOSPC));
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

void pwrite_all(int fd, const char* data, std::size_t size, std::uint64_t offset,
                const std::filesystem::path& path) {
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)  // 0 for a non-zero size: the device takes nothing more
      throw IoError(io_message(path, "write failed", n < 0 ? errno : ENOSPC) + " (at byte " +
                    std::to_string(offset) + ")");
    data += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

std::size_t read_some(int fd, char* data, std::size_t size, const std::filesystem::path& path) {
  std::size_t total = 0;
  while (total < size) {
    const ssize_t n = ::read(fd, data + total, size - total);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(io_message(path, "read failed", errno));
    }
    if (n == 0) break;
    total += static_cast<std::size_t>(n);
  }
  return total;
}

void fsync_parent_directory(const std::filesystem::path& path) {
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return;
  (void)::fsync(dfd);
  (void)::close(dfd);
}

}  // namespace pemc::records::detail
