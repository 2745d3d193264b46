#pragma once
// RecordWriter: creates one record file (format: see record_file.hpp) and appends frames to it.
// Not thread-safe: the collector owns the single writer of a run.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "pemc/v1/records.pb.h"

namespace pemc::records {

class RecordWriter {
 public:
  struct Options {
    bool overwrite = false;  // replace an existing file instead of refusing it
  };

  // Creates `path` and writes the magic. Refuses an existing file unless options.overwrite, leaving
  // it untouched (ConfigError: "<path>: output file already exists (use --overwrite to replace it,
  // or --resume)"); refuses a symbolic link at `path` (never followed) and anything but a regular
  // file or a character device (a FIFO is refused without blocking) with UntrustedInputError. A
  // missing or unwritable directory, or a failed magic write, is an IoError naming the path and
  // the system error.
  RecordWriter(const std::filesystem::path& path, Options options);
  ~RecordWriter();  // closes; errors are logged, never thrown

  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;
  RecordWriter(RecordWriter&& other) noexcept;
  RecordWriter& operator=(RecordWriter&& other) noexcept;

  // Frames and appends one record. Output is buffered; call flush() to push it to the OS.
  void write(const pemc::v1::Record& record);
  // Appends bytes that are already a whole number of frames (from append_frame), holding
  // `n_records` records. The frame structure (lengths) is checked against n_records; checksums are
  // not re-checked (the collector verified them with count_frames). IoError on a mismatch.
  void write_frames(std::string_view frames, std::int64_t n_records);
  // Reserves the next `n_bytes` of the file for `n_records` whole frames that another process
  // writes there itself (records/frame_range_writer.hpp); `crc` is zlib's crc32 of those bytes,
  // combined into crc32() without reading them. Pushes the buffer to the OS first, so what this
  // writer wrote before lies before the range and what it writes next after it. Returns the
  // range's offset. Until its owner writes the range, the file holds zeros there (a reader stops
  // at them: records/record_reader.hpp).
  std::uint64_t reserve(std::uint64_t n_bytes, std::int64_t n_records, std::uint32_t crc);
  // Writes the frames of a range reserved earlier (the same bytes, `n_records` records: a leader
  // that could not write them itself sends them here). IoError when they do not lie within the
  // bytes accepted so far or are not whole frames, or as write_frames on a failed write.
  void fill(std::uint64_t offset, std::string_view frames, std::int64_t n_records);
  // Pushes buffered bytes to the OS (no fsync). IoError naming the path on failure; a full disk is
  // reported as "disk full (ENOSPC)". After any write error the writer is unusable: every later
  // write/flush throws, and close() only releases the file.
  void flush();
  // flush + fsync + close. Idempotent. IoError on failure (the file is closed either way).
  void close();

  // Records and bytes (magic + frames) accepted so far, buffered or not.
  std::int64_t records_written() const { return records_written_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  // zlib crc32 of those bytes (a checkpoint stores it; --resume checks the file against it).
  std::uint32_t crc32() const { return crc32_; }
  // Records and bytes handed to the OS without error (what a crash of this process leaves in the
  // file; after a failed write, the file may hold a partial frame after them).
  std::int64_t records_flushed() const { return records_flushed_; }
  std::uint64_t bytes_flushed() const { return bytes_flushed_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  [[noreturn]] void throw_open_error(int error_number) const;
  void check_usable() const;
  void append(std::string_view bytes);
  void drain();  // writes buffer_ to fd_ at bytes_flushed_
  void write_at_end(const char* data, std::size_t size);  // at bytes_flushed_, past reserved ranges
  [[noreturn]] void fail(const std::string& message);
  void release() noexcept;

  std::filesystem::path path_;
  int fd_ = -1;
  bool is_regular_file_ = false;
  std::string buffer_;
  std::string error_;  // first write error; non-empty makes the writer unusable
  std::int64_t records_written_ = 0;
  std::uint64_t bytes_written_ = 0;
  std::uint32_t crc32_ = 0;
  std::int64_t records_flushed_ = 0;
  std::uint64_t bytes_flushed_ = 0;
  std::uint64_t fd_offset_ = 0;  // the descriptor's file position (reserve() moves the end past it)
};

}  // namespace pemc::records
