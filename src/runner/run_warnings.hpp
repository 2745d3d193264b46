#pragma once
// The run-level warnings of a footer (records.proto Footer.warnings): each run's chains judged
// together by estimators/sampler_warnings.hpp, the one rule set pemc-report summarize and diagnose
// use, from what the chains' summaries carry (divergences, tree depth, E-BFMI, the chains' own
// warnings). Only chains with status "ok" count (a failed chain's summary has no such counts, and
// the log says it failed). R-hat and bulk ESS need the draws: the reports judge them.
#include <string>
#include <vector>

#include "estimators/sampler_warnings.hpp"
#include "pemc/v1/config.pb.h"
#include "pemc/v1/records.pb.h"

namespace pemc::runner {

// One run's chains (its "ok" ones among `chains`) as the rules see them. The shares are of the
// post-warmup transitions (run.iterations() per chain), which the summaries' counts are of; a
// chain's "mode check:" warnings are left out (the log's mode-check line says them:
// runner/mode_checks.hpp).
estimators::RunHealth run_health(const std::vector<const pemc::v1::ChainSummary*>& chains,
                                 const pemc::v1::RunConfig& run);

// Sets footer.warnings from its chains, run by run in the order of `runs` (the plan's resolved
// runs); in a study each line is prefixed with its run's name ("name: ..."). A chain of a run
// that `runs` does not have (an inconsistent checkpoint) gets a line saying so instead of
// losing the footer to an exception.
void annotate_run_warnings(pemc::v1::Footer& footer, const std::vector<pemc::v1::RunConfig>& runs,
                           bool study);

}  // namespace pemc::runner
