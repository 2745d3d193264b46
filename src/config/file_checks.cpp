#include "config/file_checks.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/regular_file.hpp"

namespace pemc::config {

std::string working_directory() {
  std::error_code ec;
  const auto cwd = std::filesystem::current_path(ec);
  return ec ? std::string("?") : cwd.string();
}

void readable_file(Problems& p, const std::string& path, const std::string& file,
                   std::uintmax_t max_bytes) {
  if (file.empty()) {
    p.add(path, "required: a file path");
    return;
  }
  const std::filesystem::path fp(file);
  const std::string rel = fp.is_relative()
                              ? " (relative paths are relative to the working directory " +
                                    quoted(working_directory()) + ")"
                              : "";
  std::error_code ec;
  const auto st = std::filesystem::status(fp, ec);
  if (!std::filesystem::exists(st)) {
    p.add(path, "file does not exist" + rel, quoted(file));
  } else if (std::filesystem::is_directory(st)) {
    p.add(path, "is a directory, not a file", quoted(file));
  } else if (!std::filesystem::is_regular_file(st)) {
    struct stat raw {};
    ::stat(file.c_str(), &raw);
    p.add(path, "is " + file_kind(raw.st_mode) + ", not a regular file (a FIFO would block the run)",
          quoted(file));
  } else if (::access(file.c_str(), R_OK) != 0) {
    p.add(path, std::string("file is not readable: ") + std::strerror(errno), quoted(file));
  } else if (max_bytes > 0) {
    const auto size = std::filesystem::file_size(fp, ec);
    if (!ec && size > max_bytes) {
      p.add(path,
            "file is " + std::to_string(size) + " bytes, more than the limit of " +
                std::to_string(max_bytes) + " bytes for this file",
            quoted(file));
    }
  }
}

}  // namespace pemc::config
