#pragma once
// Files pemc-dist creates itself (the record file, its lock, checkpoints and their temporary
// copies) are never opened through a symbolic link: a link planted at one of those names would
// make pemc-dist write a lock line, a checkpoint or a whole record file into whatever it points
// to. A link there is refused before the run starts (refuse_link_at), the record file is opened
// with O_NOFOLLOW, and temporary files are created exclusively (create_fresh_file), so a link
// planted while the run goes on makes a write fail instead of following it.
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace pemc::records {

// UntrustedInputError naming `path` and its `role` ("the output's lock file", ...) when `path` is
// a symbolic link, or exists and is neither a regular file nor (allow_devices) a character
// device such as /dev/null. Nothing at `path`, or a regular file: returns.
void refuse_link_at(const std::filesystem::path& path, const std::string& role,
                    bool allow_devices = false);

// Creates `path` afresh for writing and returns the descriptor (O_CLOEXEC): what is there (a stale
// temporary file left by a crash, or a link, which is removed and not followed) is unlinked, then
// the file is created with O_CREAT | O_EXCL | O_NOFOLLOW. IoError naming the path and `role` on
// failure (a link or file planted between the two steps makes the creation fail).
int create_fresh_file(const std::filesystem::path& path, mode_t mode, const std::string& role);

}  // namespace pemc::records
