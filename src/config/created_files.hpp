#pragma once
// The files pemc-dist creates for one output, by one naming convention: the record file
// (output.path), its lock "<output>.lock", the resume's copy "<output>.resume.tmp", the checkpoint
// (checkpoint.path, default "<output>.ckpt"), the checkpoint's temporary copy "<checkpoint>.tmp"
// and, when checkpoint.path is set, the checkpoint's own lock "<checkpoint>.lock". No two may be
// the same file (validation), and none may be a link (the runner refuses them before it starts).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "config/problems.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::config {

inline constexpr std::string_view kLockSuffix = ".lock";
inline constexpr std::string_view kCheckpointSuffix = ".ckpt";
inline constexpr std::string_view kTemporarySuffix = ".tmp";
inline constexpr std::string_view kResumeCopySuffix = ".resume.tmp";

struct CreatedFile {
  std::string role;  // what it is, for messages: "the record file", "the output's lock file", ...
  std::filesystem::path path;
};

// checkpoint.path, or "<output.path>.ckpt".
std::filesystem::path checkpoint_file(const v1::RunConfig& config);

// Every file above for the config's output and checkpoint (the record file first).
std::vector<CreatedFile> created_files(const v1::RunConfig& config);

// A problem on checkpoint.path (or output.path) when two of created_files() name the same file:
// compared as absolute, normalised paths with existing directories' links resolved.
void check_created_files_distinct(const v1::RunConfig& config, Problems& p);

}  // namespace pemc::config
