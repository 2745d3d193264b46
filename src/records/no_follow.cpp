#include "records/no_follow.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "core/error.hpp"
#include "core/regular_file.hpp"
#include "records/posix_io.hpp"

namespace pemc::records {

void refuse_link_at(const std::filesystem::path& path, const std::string& role,
                    bool allow_devices) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;  // nothing there: it will be created
  if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(path, ec);
    throw UntrustedInputError(path.string() + " is a symbolic link" +
                              (ec ? std::string() : " (to " + target.string() + ")") +
                              ": pemc-dist creates " + role +
                              " itself and never follows a link there; remove the link");
  }
  if (S_ISREG(st.st_mode) || (allow_devices && S_ISCHR(st.st_mode))) return;
  throw UntrustedInputError(path.string() + " is " + file_kind(st.st_mode) + ": pemc-dist creates " +
                            role + " there as a regular file; remove it or choose another path");
}

int create_fresh_file(const std::filesystem::path& path, mode_t mode, const std::string& role) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    throw IoError(detail::io_message(path, "cannot remove the old " + role, errno));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) throw IoError(detail::io_message(path, "cannot create " + role, errno));
  return fd;
}

}  // namespace pemc::records
