#pragma once
// The run-level warnings of a footer (records.proto Footer.warnings): each run's chains judged
// together by estimators/sampler_warnings.hpp, the one rule set pemc-report summarize and diagnose
// use, from what the chains' summaries carry (divergences, tree depth, E-BFMI, the chains' own
// warnings) and from the R-hat and bulk ESS of the draws the run's end read back
// (report/draw_checks.hpp), or a line saying they are unchecked and why. Only chains with status
// "ok" count (a failed chain's summary has no such counts, and the log says it failed).
#include <filesystem>
#include <string>
#include <vector>

#include "estimators/sampler_warnings.hpp"
#include "pemc/v1/config.pb.h"
#include "pemc/v1/records.pb.h"
#include "report/draw_checks.hpp"

namespace pemc::runner {

// One run's chains (its "ok" ones among `chains`) as the rules see them. The shares are of the
// post-warmup transitions (run.iterations() per chain), which the summaries' counts are of; a
// chain's "mode check:" warnings are left out (the log's mode-check line says them:
// runner/mode_checks.hpp).
estimators::RunHealth run_health(const std::vector<const pemc::v1::ChainSummary*>& chains,
                                 const pemc::v1::RunConfig& run);

// What the run's end found in the draws (report/draw_checks.hpp check_draws, one entry per run
// with chains in the footer) and the file they were read from.
struct DrawVerdicts {
  std::vector<report::RunDrawCheck> runs;
  std::filesystem::path file;
};

// The R-hat and bulk ESS extremes of a run's check for the footer (records.proto DrawCheck).
pemc::v1::DrawCheck draw_check_record(const report::RunDrawCheck& check);

// Sets footer.warnings from its chains, run by run in the order of `runs` (the plan's resolved
// runs); in a study each line is prefixed with its run's name ("name: ..."). A chain of a run
// that `runs` does not have (an inconsistent checkpoint) gets a line saying so instead of
// losing the footer to an exception. With `draws`, each run's R-hat and bulk ESS are judged too
// (summarize's lines, in sampler_warnings' order), or where unchecked a line
// (report::unchecked_warning) stands where theirs would, and footer.draw_checks records each
// run's check; without, neither (footer.draw_checks is left empty).
void annotate_run_warnings(pemc::v1::Footer& footer, const std::vector<pemc::v1::RunConfig>& runs,
                           bool study, const DrawVerdicts* draws = nullptr);

}  // namespace pemc::runner
