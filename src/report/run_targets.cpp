#include "report/run_targets.hpp"

#include <google/protobuf/util/message_differencer.h>

#include "config/defaults.hpp"
#include "config/factories.hpp"
#include "config/load.hpp"
#include "config/study.hpp"
#include "core/error.hpp"
#include "targets/truth_record.hpp"

namespace pemc::report {
namespace {

// The user's config as pemc-dist resolves it (run files included, study entries expanded,
// defaults filled in), without command-line overrides.
std::vector<v1::RunConfig> load_user_runs(const std::filesystem::path& path) {
  auto loaded = config::load_config(path);
  const auto included = config::include_run_files(loaded);
  std::vector<v1::RunConfig> runs;
  for (const auto& raw : config::expand_runs(loaded.config)) {
    config::LoadedConfig lc{raw, loaded.path, loaded.source};
    config::apply_defaults(lc);
    runs.push_back(lc.config);
  }
  return runs;
}

// The first field where two target configs differ ("target.mixture.preset: file X, config Y").
std::string first_difference(const v1::TargetConfig& file, const v1::TargetConfig& config) {
  std::string report;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&report);
  d.set_message_field_comparison(google::protobuf::util::MessageDifferencer::EQUIVALENT);
  if (d.Compare(file, config)) return "";
  return report.substr(0, report.find('\n'));
}

std::string run_label(const std::string& run_id) {
  return run_id.empty() ? std::string("the run") : "run '" + run_id + "'";
}

}  // namespace

RunTargets::RunTargets(std::filesystem::path user_config) : user_config_(std::move(user_config)) {}

targets::Truth RunTargets::truth(const RunMeta& run, const std::string& run_id) {
  if (run.truth && run.truth->note().empty())
    return targets::truth_from_record(*run.truth, run_label(run_id) + "'s header entry");
  if (has_config()) return target(run, run_id, "its exact truth")->truth();
  if (run.truth)
    throw ConfigError(run.truth->note() + "; pass --config CONFIG to rebuild the target");
  throw ConfigError("the record file holds no exact truth for " + run_label(run_id) +
                    " (written by a pemc-dist that did not record it); pass --config CONFIG to "
                    "rebuild the target from its config");
}

const v1::RunConfig& RunTargets::user_run(const std::string& run_id, bool in_study) {
  if (!user_runs_) user_runs_ = load_user_runs(user_config_);
  for (const auto& run : *user_runs_)
    if (run.name() == run_id) return run;
  if (user_runs_->size() == 1 && !in_study) return user_runs_->front();
  throw ConfigError("--config " + user_config_.string() + ": has no run named '" + run_id +
                    "' (the record file's); pass the config the file was written with");
}

targets::TargetPtr RunTargets::target(const RunMeta& meta, const std::string& run_id,
                                      const std::string& purpose) {
  if (!has_config())
    throw ConfigError(purpose + " needs the target of " + run_label(run_id) +
                      ": pass --config CONFIG (pemc-report never builds a target from a record "
                      "file's header, which could name any file or library)");
  const auto& run = user_run(run_id, meta.in_study);
  if (const auto diff = first_difference(meta.config.target(), run.target()); !diff.empty())
    throw ConfigError("--config " + user_config_.string() + ": " + run_label(run_id) +
                      " has another target than the record file's (" + diff +
                      "); pass the config the file was written with");
  const std::string key = run.target().SerializeAsString();
  auto it = built_.find(key);
  if (it == built_.end()) it = built_.emplace(key, config::make_target(run.target())).first;
  return it->second;
}

}  // namespace pemc::report
