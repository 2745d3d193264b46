#pragma once
// lp__ of exported samples (export.hpp): the model's log density, -potential of the run's target
// (Jacobian included), at each exported sample; for a Stan model Stan's lp__, -potential minus the
// header's lp offset (RunInfo.lp_offset: the constants Stan drops), where the file records one. Samplers whose
// draws record the target's potential at the sample give it directly; the others (their draws
// record an extended density: config/sampler_columns.hpp LpSource) have the target evaluated at
// each sample, which needs the target built from the user's --config (report/run_targets.hpp).
// Internal to src/report/export*.cpp.
#include <string>
#include <vector>

#include "core/types.hpp"
#include "report/export.hpp"
#include "report/export_scan.hpp"

namespace pemc::report::export_detail {

// Gives every run of the scan its lp__ source: the draws' potential, or the target from
// options.target_config. A run that needs the target when no --config was given: ConfigError
// when `required` (CmdStan CSV always has lp__), else the run is exported without lp__
// (RunScan::has_lp false) and a note in `notes` says why. ConfigError too when the config cannot
// give the run's target. A Stan run whose lp__ keeps Stan's dropped constants (no lp offset
// recorded) gets a note saying so.
void resolve_lp(Scan& scan, const ExportOptions& options, bool required,
                std::vector<std::string>& notes);

// lp__ of sample j (0 <= j < draw_sample_count) of draw d of `run`, which has lp__. `point` is
// scratch space.
double sample_lp(const v1::Draw& d, const RunScan& run, int j, Vector& point);

}  // namespace pemc::report::export_detail
