#pragma once
// Helpers shared by the fuzzers: the loaders under test read files by path, so each input is written
// to an in-memory file (memfd) and handed over as /proc/self/fd/N. No disk I/O per input.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include "core/error.hpp"

namespace pemc::fuzz {

class MemFile {
 public:
  explicit MemFile(const char* name) : fd_(::memfd_create(name, MFD_CLOEXEC)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  // Replaces the file's content.
  const std::string& set(const std::uint8_t* data, std::size_t size) {
    if (::ftruncate(fd_, 0) != 0) std::abort();
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

// Every failure a loader may report is a pemc::Error with a non-empty message; anything else
// escaping (std::bad_alloc, std::out_of_range, a crash) is a finding.
inline void check_message(const Error& e) {
  if (std::string(e.what()).empty()) std::abort();
}

}  // namespace pemc::fuzz
