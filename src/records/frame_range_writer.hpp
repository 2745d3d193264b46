#pragma once
// FrameRangeWriter: writes whole frames into ranges of a record file that the file's RecordWriter
// reserved for them (RecordWriter::reserve). A chain's leader uses it to write its own record
// batches while the collector keeps their order, the checkpoints' positions and the file's crc32
// (runner/direct_writes.hpp); the bytes on disk are the same as if the collector had written them.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace pemc::records {

// What a record file begins with, as its writer sees it: the count and crc32 of its first bytes
// (the magic and the header). A process that opens the file by name compares them to be sure it
// has the writer's file, not another one of that name (a node-local directory on another host).
struct FilePrefix {
  std::uint64_t bytes = 0;
  std::uint32_t crc32 = 0;
};

// The first min(file size, max_bytes) bytes of `path`. IoError naming the path when it cannot be
// read.
FilePrefix read_file_prefix(const std::filesystem::path& path, std::uint64_t max_bytes = 4096);

class FrameRangeWriter {
 public:
  // Opens `path` for writing: never created, truncated or opened through a link, a regular file
  // only, and its prefix equal to `expected`. nullptr, with `why` saying what was wrong, otherwise.
  static std::unique_ptr<FrameRangeWriter> open(const std::filesystem::path& path,
                                                const FilePrefix& expected, std::string& why);
  ~FrameRangeWriter();
  FrameRangeWriter(const FrameRangeWriter&) = delete;
  FrameRangeWriter& operator=(const FrameRangeWriter&) = delete;

  // Writes `frames` at `offset` (a range reserved for exactly these bytes). IoError naming the path
  // and offset on failure (a full disk is "disk full (ENOSPC)"); the range's bytes may then be
  // partly written, and RecordWriter::fill can write them all again.
  void write_at(std::uint64_t offset, std::string_view frames);
  // Makes what this writer wrote durable (fdatasync): before a checkpoint counts it. IoError.
  void sync();
  const std::filesystem::path& path() const { return path_; }

 private:
  FrameRangeWriter(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace pemc::records
