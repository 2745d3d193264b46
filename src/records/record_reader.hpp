#pragma once
// RecordReader: streams the records of a pemc record file (format: see record_file.hpp), stopping at
// the first damaged frame and saying where it is, so a crashed run's file still yields every record
// written before the damage. read_all and verify are conveniences built on it.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pemc/v1/records.pb.h"

namespace pemc::records {

// Why reading stopped before the end of the file.
struct ReadProblem {
  std::uint64_t offset;       // byte offset (from the start of the file) of the first bad frame
  std::int64_t record_index;  // 0-based index of the record that could not be read
  std::string message;        // e.g. "torn frame: header says 1234 bytes but only 56 remain"
};

class RecordReader {
 public:
  // Opens `path` and checks the magic. IoError if the file cannot be opened or read, is empty, or is
  // not a pemc record file (bad magic); UntrustedInputError if it is not a regular file (a FIFO is
  // refused without blocking).
  explicit RecordReader(const std::filesystem::path& path);
  ~RecordReader();

  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // Reads the next record into `record`. Returns false at a clean end of file (the file ends exactly
  // at a frame boundary) or at damage, in which case problem() is set and `record` is unspecified.
  // One exception: a zero-filled gap followed by whole frames (the range of a rank killed before it
  // wrote there) sets problem() and reading goes on after it; problem()->record_index then counts
  // the records before the gap, records_read() all of them.
  // A torn tail (file ends mid-frame, as after a crash), an out-of-bounds length, a checksum mismatch
  // and an unparsable payload are damage; a failing read() system call is an IoError instead.
  // Memory use is one buffer (1 MiB, or the largest frame if bigger), independent of file size.
  bool next(pemc::v1::Record& record);

  const std::optional<ReadProblem>& problem() const { return problem_; }
  std::int64_t records_read() const { return records_read_; }
  // Byte offset of the next frame to read: after the last good frame, or of the bad frame.
  std::uint64_t offset() const { return offset_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  bool ensure(std::size_t n);  // makes n bytes available at buffer_[begin_]; false if the file ends first
  std::size_t available() const { return end_ - begin_; }
  bool stop(std::string message);
  // At a zero-length frame: skips the zero-filled region when whole frames follow it (recording it
  // as the problem) and returns true; false when zeros run to the end or no frame follows.
  bool skip_zero_gap();
  bool frame_starts_here();  // a whole frame with a matching checksum that parses is at begin_

  std::filesystem::path path_;
  int fd_ = -1;
  std::string buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  bool done_ = false;
  std::uint64_t offset_ = 0;
  std::int64_t records_read_ = 0;
  std::optional<ReadProblem> problem_;
};

struct ReadAllResult {
  std::vector<pemc::v1::Record> records;  // every record before the problem, if any
  std::optional<ReadProblem> problem;
};

// Reads a whole file into memory. IoError as for RecordReader's constructor.
ReadAllResult read_all(const std::filesystem::path& path);

struct VerifyResult {
  std::int64_t n_records;               // good records: before the problem, and after a skipped gap
  std::uint64_t n_bytes;                // length of the good prefix: magic + good frames
  std::optional<ReadProblem> problem;   // first damaged frame
  bool has_header;                      // the first record is a Header
  bool has_footer;                      // the last good record is a Footer
};

// Checks every frame's checksum and parse without keeping records. IoError as for RecordReader.
VerifyResult verify(const std::filesystem::path& path);

}  // namespace pemc::records
