#pragma once
// The forms of summarize's posterior summary (posterior_summary.hpp): the table a user reads
// (like CmdStan's stansummary), JSON and CSV for scripts.
//
// JSON: summarize's {"runs", "files"} (summary.hpp) plus
//   "posterior": [{"run_id", "sampler", "target", "n_chains", "min_draws", "max_draws", "warmup",
//                  "wall_seconds", "cpu_seconds", "weighted", "estimates_note"?, "lp_note"?,
//                  "chains": [{"chain_id", "draws", "mean_accept_stat", "step_size"?,
//                              "n_divergent"?, "n_max_tree_depth"?, "max_tree_depth"?, "ebfmi"?,
//                              "status"}],
//                  "quantities": [{"name", "mean", "mcse_mean", "sd", "q5", "q50", "q95",
//                                  "ess_bulk", "ess_tail", "rhat"}],
//                  "warnings": [...], "notes": [...]}]
// with null for unavailable or undefined numbers; the "?" keys only where the sampler records
// them.
// CSV: a header row, then one row per (run, quantity):
//   run_id,name,mean,mcse_mean,sd,q5,q50,q95,ess_bulk,ess_tail,rhat   (empty cell: unavailable)
#include <string>
#include <vector>

#include "report/posterior_summary.hpp"
#include "report/summary.hpp"

namespace pemc::report {

std::string summarize_to_json(const std::vector<FileSummary>& files,
                              const std::vector<RunPosterior>& posterior);
std::string posterior_to_csv(const std::vector<RunPosterior>& posterior);
// Per run: its header line, the per-chain sampler table (HMC-family samplers), the quantity table,
// then its warnings ("WARNING: run R, ...") and notes.
std::string posterior_to_table(const std::vector<RunPosterior>& posterior);

}  // namespace pemc::report
