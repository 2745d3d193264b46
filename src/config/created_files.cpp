#include "config/created_files.hpp"

#include <map>

namespace pemc::config {
namespace {

std::filesystem::path with_suffix(const std::filesystem::path& p, std::string_view suffix) {
  return p.string() + std::string(suffix);
}

// The file a path names: absolute, normalised, links in its existing directories resolved.
std::string identity_of(const std::filesystem::path& p) {
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(p, ec).lexically_normal();
  const auto canonical = std::filesystem::weakly_canonical(absolute, ec);
  return (ec ? absolute : canonical).string();
}

}  // namespace

std::filesystem::path checkpoint_file(const v1::RunConfig& config) {
  if (!config.checkpoint().path().empty()) return config.checkpoint().path();
  return with_suffix(config.output().path(), kCheckpointSuffix);
}

std::vector<CreatedFile> created_files(const v1::RunConfig& config) {
  const std::filesystem::path output = config.output().path();
  const auto checkpoint = checkpoint_file(config);
  std::vector<CreatedFile> files{
      {"the record file (output.path)", output},
      {"the output's lock file", with_suffix(output, kLockSuffix)},
      {"the resume's copy of the record file", with_suffix(output, kResumeCopySuffix)},
      {"the checkpoint", checkpoint},
      {"the checkpoint's temporary copy", with_suffix(checkpoint, kTemporarySuffix)}};
  if (!config.checkpoint().path().empty())
    files.push_back({"the checkpoint's lock file", with_suffix(checkpoint, kLockSuffix)});
  return files;
}

void check_created_files_distinct(const v1::RunConfig& config, Problems& p) {
  if (config.output().path().empty()) return;  // reported as required elsewhere
  const bool own_checkpoint = !config.checkpoint().path().empty();
  std::map<std::string, const CreatedFile*> seen;
  const auto files = created_files(config);
  for (const auto& f : files) {
    const auto [it, fresh] = seen.try_emplace(identity_of(f.path), &f);
    if (fresh) continue;
    const std::string field = own_checkpoint ? "checkpoint.path" : "output.path";
    p.add(field,
          "pemc-dist would create " + it->second->role + " and " + f.role + " as the same file " +
              quoted(f.path.string()) +
              "; the record file, the checkpoint and their lock and temporary files must differ",
          quoted(own_checkpoint ? config.checkpoint().path() : config.output().path()));
    return;
  }
}

}  // namespace pemc::config
