#pragma once
// Where pemc expects a regular file (a config, a data or number file, a model, a record file, a
// checkpoint), anything else is refused before it is read: a FIFO would block the reader until
// some other process writes to it (forever, in a batch job), and a device or socket has no end.
// Symbolic links to regular files are followed: these are files pemc reads, not files it creates
// (records/no_follow.hpp covers those).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include <sys/stat.h>

namespace pemc {

// "a FIFO (named pipe)", "a directory", "a character device", ... for a non-regular st_mode.
std::string file_kind(mode_t mode);

// UntrustedInputError "<what> '<path>' is a FIFO (named pipe), not a regular file" (or another
// kind) when `path` exists and is not a regular file (stat, following links). Nothing is opened,
// so a FIFO cannot block. A missing or unreadable path is left to the caller's own check.
void refuse_special_file(const std::filesystem::path& path, const std::string& what);

// Opens `path` read-only without blocking on a FIFO (O_NONBLOCK, cleared once the file is known
// to be regular) and returns the descriptor (O_CLOEXEC). IoError naming `what` and `path` when it
// cannot be opened; UntrustedInputError when it is not a regular file (the descriptor is closed).
int open_regular_file(const std::filesystem::path& path, const std::string& what);

// Reads the regular file `path` (open_regular_file) through a fixed 1 MiB buffer, handing each
// chunk to `chunk` in order, so memory does not grow with the file. `max_bytes`: a file larger
// than this (before or while it is read) is refused with UntrustedInputError. IoError naming
// `what` and `path` when it cannot be read.
void read_regular_file(const std::filesystem::path& path, const std::string& what,
                       std::uintmax_t max_bytes,
                       const std::function<void(const char* data, std::size_t n)>& chunk);

}  // namespace pemc
