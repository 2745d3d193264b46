#pragma once
// What reports know of each run's target without running anything a record file names: the exact
// truth pemc-dist recorded in the header (RunInfo.truth), and, only when the user names the run's
// config with --config, the target itself, built from that config, for what needs its density
// (held-out lpd, scatter contours, a density overlay, lp__ of resampled draws). A target is never
// built from a header: that would read the data files and load the plugin libraries the header
// names, and compile its Stan models. The user's config is trusted as pemc-dist trusts it; its run
// must have the same target as the record file's.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pemc/v1/config.pb.h"
#include "pemc/v1/records.pb.h"
#include "report/diagnostics_traces.hpp"
#include "targets/target.hpp"

namespace pemc::report {

class RunTargets {
 public:
  // `user_config`: the config given with --config (empty: none).
  explicit RunTargets(std::filesystem::path user_config = {});

  bool has_config() const { return !user_config_.empty(); }

  // The run's exact truth: as recorded in the header (RunMeta::truth), else (with --config) the
  // user's target's. ConfigError saying why there is none (the file holds none for the run:
  // written before truths were recorded; or what the recorded note says); UntrustedInputError for
  // an inconsistent record.
  targets::Truth truth(const RunMeta& run, const std::string& run_id);
  targets::Truth truth(const pemc::v1::Header& header, const std::string& run_id) {
    return truth(run_meta(header, run_id), run_id);
  }

  // The run's target built from --config, for `purpose` ("the held-out lpd", ...). ConfigError
  // when no config was given ("<purpose> needs the target of run 'r': pass --config CONFIG"),
  // when the config has no such run, or when that run's target differs from the header's.
  targets::TargetPtr target(const RunMeta& run, const std::string& run_id,
                            const std::string& purpose);
  targets::TargetPtr target(const pemc::v1::Header& header, const std::string& run_id,
                            const std::string& purpose) {
    return target(run_meta(header, run_id), run_id, purpose);
  }

 private:
  const pemc::v1::RunConfig& user_run(const std::string& run_id, bool in_study);

  std::filesystem::path user_config_;
  std::optional<std::vector<pemc::v1::RunConfig>> user_runs_;  // loaded on first use
  std::map<std::string, targets::TargetPtr> built_;            // by serialised target config
};

}  // namespace pemc::report
