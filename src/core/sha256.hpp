#pragma once
// SHA-256 content hashes (OpenSSL's libcrypto), as 64 lowercase hexadecimal digits: what a
// checkpoint records of every file a run reads, and what the Stan model cache records of every
// library it builds, so that a changed or damaged file is told apart from the one that was used.
#include <filesystem>
#include <string>
#include <string_view>

namespace pemc {

std::string sha256_hex(std::string_view bytes);

// Streams the file through a fixed buffer (memory does not grow with its size). The file must be
// a regular file (core/regular_file.hpp: UntrustedInputError otherwise); IoError naming `what`
// and the path when it cannot be read.
std::string sha256_of_file(const std::filesystem::path& path, const std::string& what);

}  // namespace pemc
