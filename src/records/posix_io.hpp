#pragma once
// Small POSIX helpers shared by the record writer and reader, and by the runner's checkpoint files.
// They turn errno into messages that name the file, so every IoError says what failed and where.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace pemc::records::detail {

// "<strerror> (<ENAME>)", with ENOSPC spelled as "disk full (ENOSPC)" because "No space left on
// device" is easy to misread when the device is a quota or a size limit.
std::string describe_errno(int error_number);

// "<path>: <what>: <describe_errno>".
std::string io_message(const std::filesystem::path& path, const std::string& what, int error_number);

// Writes all `size` bytes to `fd`, retrying partial writes and EINTR; throws IoError naming `path`.
void write_all(int fd, const char* data, std::size_t size, const std::filesystem::path& path);

// Writes all `size` bytes at `offset` (pwrite), retrying partial writes and EINTR; throws IoError
// "<path>: write failed: <errno> (at byte <offset>)".
void pwrite_all(int fd, const char* data, std::size_t size, std::uint64_t offset,
                const std::filesystem::path& path);

// Reads up to `size` bytes, retrying EINTR and short reads until `size` bytes or end of file;
// returns the byte count (0 at end of file). Throws IoError naming `path` on a read error.
std::size_t read_some(int fd, char* data, std::size_t size, const std::filesystem::path& path);

// Best effort: fsyncs the directory holding `path`, making a new or renamed entry durable. A
// failure here loses nothing already fsynced, so it is not an error.
void fsync_parent_directory(const std::filesystem::path& path);

}  // namespace pemc::records::detail
