#include "runner/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "config/created_files.hpp"
#include "core/error.hpp"
#include "core/regular_file.hpp"
#include "records/no_follow.hpp"

namespace pemc::runner {
namespace {

// The holder's line, as written into the lock file.
std::string describe_self() {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  char when[64] = {0};
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return "pid " + std::to_string(::getpid()) + " on host " + host + " since " + when;
}

// What the lock file says about its holder (first line, printable characters only).
std::string read_holder(int fd) {
  char buf[512];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "holder not recorded yet";
  std::string s(buf, static_cast<std::size_t>(n));
  s = s.substr(0, s.find('\n'));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return s.empty() ? "holder not recorded yet" : s;
}

bool lock_unsupported(int e) { return e == ENOLCK || e == ENOSYS || e == EOPNOTSUPP; }

// The lock file must be a regular file with no other name: a hard link planted at the lock's name
// would have the holder's line written into the file it shares. Closes `fd` before refusing.
void check_lock_file(int fd, const std::filesystem::path& lock_path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return;
  std::string why;
  if (!S_ISREG(st.st_mode))
    why = "is " + file_kind(st.st_mode);
  else if (st.st_nlink > 1)
    why = "has " + std::to_string(st.st_nlink) + " names (hard links)";
  if (why.empty()) return;
  ::close(fd);
  throw UntrustedInputError(lock_path.string() + " " + why +
                            ": pemc-dist creates the output's lock file itself and writes into "
                            "it; remove it");
}

}  // namespace

std::filesystem::path OutputLock::lock_path_of(const std::filesystem::path& path) {
  return path.string() + std::string(config::kLockSuffix);
}

std::unique_ptr<OutputLock> OutputLock::acquire(const std::filesystem::path& path,
                                                std::string* warning) {
  const auto lock_path = lock_path_of(path);
  // A holder removes its lock file before releasing the lock: a lock taken on a file that is no
  // longer the one at lock_path is worthless, so check and try again.
  for (int attempt = 0; attempt < 20; ++attempt) {
    // Never through a link, never blocked by a FIFO, and only a file of its own (see
    // check_lock_file): the holder writes its line into it.
    const int fd = ::open(lock_path.c_str(),
                          O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd < 0 && errno == ELOOP) records::refuse_link_at(lock_path, "the output's lock file");
    if (fd < 0)
      throw ConfigError(
          path.string() + ": cannot create the lock file " + lock_path.string() +
          " that keeps a second job from writing the same output: " + std::strerror(errno));
    check_lock_file(fd, lock_path);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      if (e == EWOULDBLOCK || e == EAGAIN) {
        const std::string who = read_holder(fd);
        ::close(fd);
        throw ConfigError(path.string() + " is in use by another pemc-dist job (" + who +
                          "; lock file " + lock_path.string() +
                          "): two jobs must not write one output; wait for it to "
                          "end, or choose another --output");
      }
      ::close(fd);
      if (lock_unsupported(e)) {
        ::unlink(lock_path.c_str());
        if (warning)
          *warning =
              path.string() + ": the filesystem does not support flock (" + std::strerror(e) +
              "): running without the lock that keeps a second job from writing the same output";
        return nullptr;
      }
      throw ConfigError(path.string() + ": cannot lock " + lock_path.string() + ": " +
                        std::strerror(e));
    }
    struct stat held {
    }, now{};
    if (::fstat(fd, &held) != 0 || ::lstat(lock_path.c_str(), &now) != 0 ||
        held.st_ino != now.st_ino || held.st_dev != now.st_dev) {
      ::close(fd);  // the previous holder removed it meanwhile
      continue;
    }
    const std::string line = describe_self() + "\n";
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
      // The lock holds without the description; a refused job then says "holder not recorded".
    }
    return std::unique_ptr<OutputLock>(new OutputLock(lock_path, fd));
  }
  throw ConfigError(path.string() + ": cannot take the lock " + lock_path.string() +
                    ": it keeps being replaced (other jobs starting on the same output?)");
}

std::optional<std::string> OutputLock::holder(const std::filesystem::path& path) {
  const auto lock_path = lock_path_of(path);
  const int fd = ::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> who;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK || errno == EAGAIN) who = read_holder(fd);
  }
  ::close(fd);  // releases a shared lock taken just now
  return who;
}

OutputLock::~OutputLock() {
  // Removed while still held: a job that opens it now finds it gone after taking it and retries.
  ::unlink(lock_path_.c_str());
  ::close(fd_);
}

}  // namespace pemc::runner
