#include "records/frame_range_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "core/error.hpp"
#include "records/frame.hpp"
#include "records/posix_io.hpp"

namespace pemc::records {
FilePrefix read_file_prefix(const std::filesystem::path& path, std::uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) throw IoError(detail::io_message(path, "cannot open to read its first bytes", errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    (void)::close(fd);
    throw IoError(path.string() + ": not a regular file");
  }
  std::string bytes(std::min<std::uint64_t>(max_bytes, static_cast<std::uint64_t>(st.st_size)),
                    '\0');
  try {
    if (detail::read_some(fd, bytes.data(), bytes.size(), path) != bytes.size())
      throw IoError(path.string() + ": the file shrank while its first bytes were read");
  } catch (...) {
    (void)::close(fd);
    throw;
  }
  (void)::close(fd);
  return {bytes.size(), payload_crc32(bytes)};
}

std::unique_ptr<FrameRangeWriter> FrameRangeWriter::open(const std::filesystem::path& path,
                                                         const FilePrefix& expected,
                                                         std::string& why) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    why = detail::io_message(path, "cannot open for writing", errno);
    return nullptr;
  }
  std::unique_ptr<FrameRangeWriter> w(new FrameRangeWriter(path, fd));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = path.string() + " is not a regular file here";
    return nullptr;
  }
  std::string bytes(expected.bytes, '\0');
  try {
    if (detail::read_some(fd, bytes.data(), bytes.size(), path) != bytes.size() ||
        payload_crc32(bytes) != expected.crc32) {
      why = path.string() + " here begins differently from the collector's file (another file of "
                            "that name, e.g. in a directory local to this host)";
      return nullptr;
    }
  } catch (const IoError& e) {
    why = e.what();
    return nullptr;
  }
  return w;
}

FrameRangeWriter::~FrameRangeWriter() {
  if (fd_ >= 0) (void)::close(fd_);
}

void FrameRangeWriter::write_at(std::uint64_t offset, std::string_view frames) {
  detail::pwrite_all(fd_, frames.data(), frames.size(), offset, path_);
}

void FrameRangeWriter::sync() {
  if (::fdatasync(fd_) != 0) throw IoError(detail::io_message(path_, "fdatasync failed", errno));
}

}  // namespace pemc::records
