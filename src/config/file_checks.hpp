#pragma once
// Checks of the files a run will read. Paths are used as written: relative paths are relative to
// pemc-dist's working directory (not the config file's), which the messages say.
#include <cstdint>
#include <string>

#include "config/problems.hpp"

namespace pemc::config {

// The working directory, or "?" when it cannot be read.
std::string working_directory();

// `file` must exist, be a regular file (links to one are followed; a FIFO, which would block the
// loader, or a device is refused) and be readable, and (max_bytes > 0) be at most max_bytes long -
// refused here, before a loader reads it into memory. `path` is the field.
void readable_file(Problems& p, const std::string& path, const std::string& file,
                   std::uintmax_t max_bytes = 0);

}  // namespace pemc::config
