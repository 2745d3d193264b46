#include "records/record_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "core/error.hpp"
#include "core/regular_file.hpp"
#include "records/frame.hpp"
#include "records/posix_io.hpp"

namespace pemc::records {

namespace {

constexpr std::size_t kBufferBytes = std::size_t{1} << 20;

std::string hex32(std::uint32_t v) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

}  // namespace

RecordReader::RecordReader(const std::filesystem::path& path) : path_(path) {
  // O_NONBLOCK: a FIFO must not block the open; only regular files are read.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) throw IoError(detail::io_message(path_, "cannot open record file", errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(std::exchange(fd_, -1));
    throw UntrustedInputError(path_.string() + " is " + file_kind(st.st_mode) +
                              ", not a record file (pemc-report reads regular files only)");
  }
  (void)::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  (void)::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  buffer_.resize(kBufferBytes);
  try {
    if (!ensure(kMagic.size())) {
      if (available() == 0) throw IoError(path_.string() + ": empty file, not a pemc record file");
      throw IoError(path_.string() + ": not a pemc record file (only " + std::to_string(available()) +
                    " bytes, shorter than the magic \"" + std::string(kMagic) + "\")");
    }
    if (std::string_view(buffer_.data() + begin_, kMagic.size()) != kMagic) {
      throw IoError(path_.string() + ": not a pemc record file (bad magic: expected \"" + std::string(kMagic) +
                    "\")");
    }
  } catch (...) {
    ::close(std::exchange(fd_, -1));
    throw;
  }
  begin_ += kMagic.size();
  offset_ = kMagic.size();
}

RecordReader::~RecordReader() {
  if (fd_ >= 0) ::close(fd_);
}

bool RecordReader::ensure(std::size_t n) {
  if (available() >= n) return true;
  if (eof_) return false;
  // Move the unread tail to the front, grow only if one frame is larger than the buffer, then fill.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, available());
    end_ -= begin_;
    begin_ = 0;
  }
  if (buffer_.size() < n) {
    // Grow only as far as the file can fill: a damaged length field in a large file must not cost a
    // buffer of kMaxFrameBytes (found by tests/fuzz/fuzz_records). The +1 leaves room to see EOF.
    std::size_t grow_to = n;
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
      const auto size = static_cast<std::uint64_t>(st.st_size);
      const std::uint64_t in_file = size > offset_ ? size - offset_ : 0;
      if (in_file < n) grow_to = std::max<std::size_t>(buffer_.size(), in_file + 1);
    }
    buffer_.resize(grow_to);
  }
  while (end_ < n && !eof_) {
    const std::size_t want = buffer_.size() - end_;
    if (want == 0) break;  // the file grew after fstat: report what was there, as for a torn tail
    const std::size_t got = detail::read_some(fd_, buffer_.data() + end_, want, path_);
    end_ += got;
    if (got < want) eof_ = true;  // read_some only returns short at end of file
  }
  return available() >= n;
}

bool RecordReader::stop(std::string message) {
  if (problem_)  // a gap was skipped before: it stays the first problem
    problem_->message += "; reading stopped at byte " + std::to_string(offset_) + ": " + message;
  else
    problem_ = ReadProblem{offset_, records_read_, std::move(message)};
  done_ = true;
  return false;
}

bool RecordReader::frame_starts_here() {
  if (!ensure(kFrameHeaderBytes)) return false;
  const FrameHeader h = decode_frame_header(buffer_.data() + begin_);
  if (h.payload_bytes == 0 || h.payload_bytes > kMaxFrameBytes) return false;
  if (!ensure(kFrameHeaderBytes + h.payload_bytes)) return false;
  const char* payload = buffer_.data() + begin_ + kFrameHeaderBytes;
  pemc::v1::Record probe;
  return payload_crc32(std::string_view(payload, h.payload_bytes)) == h.crc32 &&
         probe.ParseFromArray(payload, static_cast<int>(h.payload_bytes));
}

bool RecordReader::skip_zero_gap() {
  const std::uint64_t gap_start = offset_;
  // Consume zeros up to the first non-zero byte, keeping the last 3 (a frame's u32 length, little
  // endian, can begin with up to 3 zero bytes: records are far below 2^24 bytes).
  constexpr std::size_t kKeep = 3;
  while (true) {
    const char* first = buffer_.data() + begin_;
    const char* last = buffer_.data() + end_;
    const char* nonzero = std::find_if(first, last, [](char c) { return c != 0; });
    const std::size_t zeros = static_cast<std::size_t>(nonzero - first);
    const std::size_t drop = zeros > kKeep ? zeros - kKeep : 0;
    begin_ += drop;
    offset_ += drop;
    if (nonzero != last) break;
    // Only zeros so far: jump over a hole of a sparse file instead of reading it.
    const auto at_fd = static_cast<off_t>(offset_ + available());
    const off_t data = ::lseek(fd_, at_fd, SEEK_DATA);
    if (data < 0 && errno == ENXIO) return false;  // no data after: zeros to the end of the file
    if (data > at_fd) offset_ = static_cast<std::uint64_t>(data) - available();  // read from there
    if (!ensure(available() + 1)) return false;  // zeros to the end of the file
  }
  // The frame after the gap starts at most kKeep bytes before the first non-zero byte.
  for (std::size_t k = 0; k <= kKeep && available() > 0; ++k) {
    if (offset_ > gap_start && frame_starts_here()) {
      const std::string gap = "a zero-filled gap of " + std::to_string(offset_ - gap_start) + " bytes";
      if (problem_)
        problem_->message += "; " + gap + " at byte " + std::to_string(gap_start);
      else
        problem_ = ReadProblem{gap_start, records_read_,
                               gap + ": records a rank was given room for but never wrote (it "
                                     "was killed: docs/checkpointing.md#what-a-crash-can-lose); "
                                     "the records after it were read"};
      return true;
    }
    if (buffer_[begin_] != 0) break;
    ++begin_;
    ++offset_;
  }
  return false;
}

bool RecordReader::next(pemc::v1::Record& record) {
  if (done_) return false;
  if (!ensure(kFrameHeaderBytes)) {
    if (available() == 0) {  // clean end of file: exactly at a frame boundary
      done_ = true;
      return false;
    }
    return stop("torn frame: only " + std::to_string(available()) + " of " + std::to_string(kFrameHeaderBytes) +
                " header bytes remain");
  }
  const FrameHeader h = decode_frame_header(buffer_.data() + begin_);
  if (h.payload_bytes > kMaxFrameBytes) {
    return stop("frame length " + std::to_string(h.payload_bytes) + " exceeds the limit of " +
                std::to_string(kMaxFrameBytes) + " bytes (damaged length field)");
  }
  if (h.payload_bytes == 0) {
    // No record serializes to zero bytes (the kind oneof always takes some); eight zero bytes are
    // the start of a zero-filled region, as a crash can leave at the end of a file. Reading them as
    // empty records would hide the damage (and a large zero region would read as millions of them).
    // A region followed by whole frames is the range of a rank killed before it wrote there
    // (direct writes): the first problem, and reading goes on after it.
    const std::uint64_t at = offset_;
    if (skip_zero_gap()) return next(record);
    offset_ = at;
    return stop(
        "zero-length frame: the file holds zeros from here (records not written yet, if a job is "
        "still writing it; after a crash, a zero-filled tail or records a chain's leader never "
        "wrote: docs/checkpointing.md#what-a-crash-can-lose)");
  }
  const std::size_t frame_bytes = kFrameHeaderBytes + h.payload_bytes;
  if (!ensure(frame_bytes)) {
    return stop("torn frame: header says " + std::to_string(h.payload_bytes) + " bytes but only " +
                std::to_string(available() - kFrameHeaderBytes) + " remain");
  }
  const char* payload = buffer_.data() + begin_ + kFrameHeaderBytes;
  const std::uint32_t crc = payload_crc32(std::string_view(payload, h.payload_bytes));
  if (crc != h.crc32) {
    return stop("checksum mismatch (stored " + hex32(h.crc32) + ", computed " + hex32(crc) + ")");
  }
  if (!record.ParseFromArray(payload, static_cast<int>(h.payload_bytes))) {
    return stop("payload does not parse as a Record");
  }
  begin_ += frame_bytes;
  offset_ += frame_bytes;
  ++records_read_;
  return true;
}

ReadAllResult read_all(const std::filesystem::path& path) {
  RecordReader reader(path);
  ReadAllResult result;
  pemc::v1::Record record;
  while (reader.next(record)) result.records.push_back(std::move(record));
  result.problem = reader.problem();
  return result;
}

VerifyResult verify(const std::filesystem::path& path) {
  RecordReader reader(path);
  VerifyResult result{0, 0, std::nullopt, false, false};
  pemc::v1::Record record;
  bool last_is_footer = false;
  while (reader.next(record)) {
    if (reader.records_read() == 1) result.has_header = record.has_header();
    last_is_footer = record.has_footer();
  }
  result.n_records = reader.records_read();
  result.n_bytes = reader.offset();
  result.problem = reader.problem();
  result.has_footer = last_is_footer;
  return result;
}

}  // namespace pemc::records
