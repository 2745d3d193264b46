#pragma once
// The mode check of a run's footer (modes/mode_occupancy.hpp): once every chain has finished, the
// run's chains' mode occupancies are judged together; the verdict goes into each finished chain's
// estimates (modes_untrusted, mode_share_rhat_max, mode_share_outside, modes_found) and, when the
// run cannot be trusted, its warnings. The log Z trust rules read modes_untrusted: run this before
// annotate_log_z_runs (runner/log_z_checks.hpp), which re-derives every chain's trust keys.
#include <map>
#include <string>
#include <vector>

#include "pemc/v1/records.pb.h"

namespace pemc::runner {

// Per run name: the Laplace shares of the modes its search found (runs without a search absent).
using ModeSharesByRun = std::map<std::string, std::vector<double>>;

void annotate_mode_checks(pemc::v1::Footer& footer, const ModeSharesByRun& shares);

// One line per run whose mode check failed, for the end of the log.
std::vector<std::string> mode_check_warnings(const pemc::v1::Footer& footer);

}  // namespace pemc::runner
