#include "records/record_writer.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <utility>

#include "core/error.hpp"
#include "core/regular_file.hpp"
#include "records/frame.hpp"
#include "records/posix_io.hpp"

namespace pemc::records {

namespace {

// Buffered bytes are pushed to the OS once they pass this; larger frame batches bypass the buffer.
constexpr std::size_t kBufferBytes = std::size_t{1} << 20;

// Walks frame lengths (no checksums) and returns the number of whole frames, or -1 if the bytes do
// not end exactly at a frame boundary or a length is out of bounds.
std::int64_t count_frame_lengths(std::string_view frames) {
  std::int64_t n = 0;
  std::size_t pos = 0;
  while (pos < frames.size()) {
    if (frames.size() - pos < kFrameHeaderBytes) return -1;
    const FrameHeader h = decode_frame_header(frames.data() + pos);
    if (h.payload_bytes > kMaxFrameBytes || h.payload_bytes > frames.size() - pos - kFrameHeaderBytes) return -1;
    pos += kFrameHeaderBytes + h.payload_bytes;
    ++n;
  }
  return n;
}

// Continues a zlib crc32 over `bytes`.
std::uint32_t crc32_update(std::uint32_t crc, std::string_view bytes) {
  uLong c = crc;
  const auto* data = reinterpret_cast<const Bytef*>(bytes.data());
  std::size_t left = bytes.size();
  while (left > 0) {
    const std::size_t n = std::min<std::size_t>(left, std::numeric_limits<uInt>::max());
    c = ::crc32(c, data, static_cast<uInt>(n));
    data += n;
    left -= n;
  }
  return static_cast<std::uint32_t>(c);
}

}  // namespace

RecordWriter::RecordWriter(const std::filesystem::path& path, Options options) : path_(path) {
  // Never through a link (records/no_follow.hpp), and never blocked by a FIFO (O_NONBLOCK, cleared
  // below): the record file is a regular file or a character device such as /dev/null.
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
                    (options.overwrite ? O_TRUNC : O_EXCL);
  fd_ = ::open(path_.c_str(), flags, 0644);
  if (fd_ < 0) throw_open_error(errno);
  struct stat st {};
  is_regular_file_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  if (!is_regular_file_ && !S_ISCHR(st.st_mode)) {
    release();
    throw UntrustedInputError(path_.string() + " is " + file_kind(st.st_mode) +
                              ": a record file is written to a regular file (or a device such as "
                              "/dev/null); remove it or choose another path");
  }
  (void)::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  buffer_.reserve(kBufferBytes);
  try {
    append(kMagic);
    drain();  // write the magic now so an unwritable target fails here, not at the first flush
  } catch (...) {
    release();
    // With O_EXCL the file is ours and holds nothing useful; remove it so a retry is not refused.
    if (!options.overwrite && is_regular_file_) (void)::unlink(path_.c_str());
    throw;
  }
}

RecordWriter::~RecordWriter() {
  try {
    close();
  } catch (const std::exception& e) {
    spdlog::error("closing record file: {}", e.what());
  }
}

RecordWriter::RecordWriter(RecordWriter&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      is_regular_file_(other.is_regular_file_),
      buffer_(std::move(other.buffer_)),
      error_(std::move(other.error_)),
      records_written_(other.records_written_),
      bytes_written_(other.bytes_written_),
      crc32_(other.crc32_),
      records_flushed_(other.records_flushed_),
      bytes_flushed_(other.bytes_flushed_),
      fd_offset_(other.fd_offset_) {}

RecordWriter& RecordWriter::operator=(RecordWriter&& other) noexcept {
  if (this != &other) {
    try {
      close();
    } catch (const std::exception& e) {
      spdlog::error("closing record file: {}", e.what());
    }
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    is_regular_file_ = other.is_regular_file_;
    buffer_ = std::move(other.buffer_);
    error_ = std::move(other.error_);
    records_written_ = other.records_written_;
    bytes_written_ = other.bytes_written_;
    crc32_ = other.crc32_;
    records_flushed_ = other.records_flushed_;
    bytes_flushed_ = other.bytes_flushed_;
    fd_offset_ = other.fd_offset_;
  }
  return *this;
}

void RecordWriter::throw_open_error(int e) const {
  if (e == EEXIST)
    throw ConfigError(path_.string() +
                      ": output file already exists (use --overwrite to replace it, or --resume)");
  if (e == ELOOP)
    throw UntrustedInputError(path_.string() +
                              " is a symbolic link: pemc-dist creates its record file itself and "
                              "never follows a link there; remove the link or give the real path");
  if (e == ENXIO)
    throw UntrustedInputError(path_.string() +
                              " is a FIFO (named pipe): a record file is written to a regular file; "
                              "remove it or choose another path");
  std::string message = detail::io_message(path_, "cannot create output file", e);
  const std::filesystem::path dir = path_.parent_path();
  std::error_code ec;
  if (e == ENOENT && !dir.empty() && !std::filesystem::exists(dir, ec))
    message += "; directory " + dir.string() + " does not exist";
  throw IoError(message);
}

void RecordWriter::check_usable() const {
  if (!error_.empty()) throw IoError(path_.string() + ": record writer unusable after an earlier error: " + error_);
  if (fd_ < 0) throw IoError(path_.string() + ": record writer is closed");
}

void RecordWriter::fail(const std::string& message) {
  error_ = message;
  buffer_.clear();
  throw IoError(message);
}

void RecordWriter::append(std::string_view bytes) {
  buffer_.append(bytes);
  bytes_written_ += bytes.size();
  crc32_ = crc32_update(crc32_, bytes);
}

void RecordWriter::write_at_end(const char* data, std::size_t size) {
  try {
    if (fd_offset_ != bytes_flushed_ &&
        ::lseek(fd_, static_cast<off_t>(bytes_flushed_), SEEK_SET) == static_cast<off_t>(-1))
      throw IoError(detail::io_message(path_, "cannot seek past the reserved records", errno));
    detail::write_all(fd_, data, size, path_);
    fd_offset_ = bytes_flushed_ + size;
  } catch (const IoError& e) {
    fail(e.what());
  }
}

void RecordWriter::drain() {
  if (buffer_.empty()) return;
  write_at_end(buffer_.data(), buffer_.size());
  buffer_.clear();
  // Everything accepted so far has reached the OS (the buffer holds what came after the last
  // drain).
  bytes_flushed_ = bytes_written_;
  records_flushed_ = records_written_;
}

void RecordWriter::write(const pemc::v1::Record& record) {
  check_usable();
  const std::size_t before = buffer_.size();
  append_frame(record, buffer_);
  bytes_written_ += buffer_.size() - before;
  crc32_ = crc32_update(crc32_, std::string_view(buffer_).substr(before));
  ++records_written_;
  if (buffer_.size() >= kBufferBytes) drain();
}

void RecordWriter::write_frames(std::string_view frames, std::int64_t n_records) {
  check_usable();
  const std::int64_t counted = count_frame_lengths(frames);
  if (counted != n_records) {
    throw IoError(path_.string() + ": write_frames given " + std::to_string(frames.size()) + " bytes said to hold " +
                  std::to_string(n_records) + " records, but " +
                  (counted < 0 ? std::string("they are not a whole number of frames")
                               : "they hold " + std::to_string(counted) + " frames"));
  }
  if (buffer_.size() + frames.size() < kBufferBytes) {
    append(frames);
    records_written_ += n_records;
  } else {
    drain();
    write_at_end(frames.data(), frames.size());
    bytes_written_ += frames.size();
    crc32_ = crc32_update(crc32_, frames);
    records_written_ += n_records;
    bytes_flushed_ = bytes_written_;
    records_flushed_ = records_written_;
  }
}

std::uint64_t RecordWriter::reserve(std::uint64_t n_bytes, std::int64_t n_records,
                                    std::uint32_t crc) {
  check_usable();
  if (!is_regular_file_)
    throw IoError(path_.string() + ": ranges are reserved in a regular file only");
  drain();
  const std::uint64_t offset = bytes_written_;
  bytes_written_ += n_bytes;
  records_written_ += n_records;
  crc32_ = static_cast<std::uint32_t>(
      ::crc32_combine(crc32_, crc, static_cast<z_off_t>(n_bytes)));
  // Handed to their writer: the range counts as flushed, and this writer's next bytes go after it.
  bytes_flushed_ = bytes_written_;
  records_flushed_ = records_written_;
  return offset;
}

void RecordWriter::fill(std::uint64_t offset, std::string_view frames, std::int64_t n_records) {
  check_usable();
  if (!is_regular_file_ || offset < kMagic.size() || offset + frames.size() > bytes_flushed_ ||
      count_frame_lengths(frames) != n_records)
    throw IoError(path_.string() + ": " + std::to_string(frames.size()) + " bytes (" +
                  std::to_string(n_records) + " records) to write at byte " +
                  std::to_string(offset) + " are not whole frames of a range reserved before");
  try {
    detail::pwrite_all(fd_, frames.data(), frames.size(), offset, path_);
  } catch (const IoError& e) {
    fail(e.what());
  }
}

void RecordWriter::flush() {
  check_usable();
  drain();
}

void RecordWriter::close() {
  if (fd_ < 0) return;
  if (!error_.empty()) {  // already reported to the caller; just let go of the file
    release();
    return;
  }
  try {
    drain();
    if (::fsync(fd_) != 0) {
      const int e = errno;
      // EINVAL/EROFS: the target is a special file (a pipe, /dev/...) that cannot be synced.
      if (!(e == EINVAL || e == EROFS) || is_regular_file_) fail(detail::io_message(path_, "fsync failed", e));
    }
  } catch (...) {
    release();
    throw;
  }
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    const int e = errno;
    if (e != EINTR) {  // on Linux the descriptor is released even on EINTR; do not retry
      error_ = detail::io_message(path_, "close failed", e);
      throw IoError(error_);
    }
  }
  if (is_regular_file_) detail::fsync_parent_directory(path_);
}

void RecordWriter::release() noexcept {
  if (fd_ >= 0) (void)::close(std::exchange(fd_, -1));
}

}  // namespace pemc::records
