#pragma once
// The log Z trust checks of a run's footer (estimators/log_z_trust.hpp, log_z_run_checks.hpp): the
// checks that need a run's chains together (AIS weights pooled over the chains, the chains'
// agreement, "unchecked" when too few chains can be compared), written into their summaries before
// the footer is written, and the warnings that go to the log.
#include <string>
#include <vector>

#include "pemc/v1/records.pb.h"

namespace pemc::runner {

// Per run_id, over the chains whose status is "ok": estimators::annotate_log_z_run on their
// estimates and largest log weights (re-derives log_z_untrusted and its reasons, adds
// log_z_unchecked, log_z_chains_compared, log_z_chains_spread_ratio and an AIS run's pooled_*).
void annotate_log_z_runs(pemc::v1::Footer& footer);

// The log's warning lines: per "ok" chain with log_z_untrusted = 1 (run, chain, seed, the estimate
// with its SE and the reasons with their numbers) or else log_z_unchecked = 1 (why it is
// unchecked); and per AIS run with pooled weights whose chains or pooled estimate are untrusted,
// one line with the pooled estimate (estimators::describe_pooled_log_z).
std::vector<std::string> log_z_warnings(const pemc::v1::Footer& footer);

}  // namespace pemc::runner
