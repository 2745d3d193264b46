#pragma once
// The log Z trust checks of a run's footer (estimators/log_z_trust.hpp): the run-level agreement of
// the chains' log Z estimates, written into their summaries before the footer is written, and the
// warnings that go to the log for every chain whose log Z cannot be trusted.
#include <string>
#include <vector>

#include "pemc/v1/records.pb.h"

namespace pemc::runner {

// Per run_id, over the chains whose status is "ok": estimators::annotate_log_z_agreement on their
// estimates (adds log_z_chains_spread_ratio and, when they disagree,
// log_z_untrusted_chains_disagree and log_z_untrusted).
void annotate_log_z_agreement(pemc::v1::Footer& footer);

// One warning line per "ok" chain with log_z_untrusted = 1: run, chain, seed, the estimate with its
// SE and the reasons with their numbers.
std::vector<std::string> log_z_warnings(const pemc::v1::Footer& footer);

}  // namespace pemc::runner
