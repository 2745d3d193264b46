#pragma once
// The run-level posterior summary of pemc-report summarize, like CmdStan's stansummary: per run a
// header (draws, chains, warmup, times, the HMC chains' E-BFMI, divergences, tree-depth
// saturation and step size), per quantity mean, MCSE, sd, 5/50/95 % quantiles, bulk and tail ESS
// and R-hat, with lp__ first where the draws give it, and the run's warnings
// (estimators/sampler_warnings.hpp).
//
// Built from the diagnostics of the same files (diagnostics.hpp: the draws of every quantity,
// bounded memory) and their per-chain summaries (summary.hpp: weighted moments over every draw).
// Unweighted runs: every number is posterior's (summarise_draws) of the draws. Weighted runs
// (pseudo-extended, continuous and simulated tempering, AIS) get the numbers that mean what they
// say and NaN (shown as unavailable) for the others; `estimates_note` says which:
//   mean, sd     the weighted estimates of summarize (each chain's, averaged over the chains in
//                proportion to their draws);
//   quantiles    weighted (weighted_quantiles.hpp) over the chains' weighted samples pooled with
//                the same chain shares;
//   MCSE         pseudo-extended: of the per-draw weighted means, whose average is the estimate;
//                the others: unavailable (their weights are global);
//   ESS, R-hat   of the diagnosed quantity (diagnostics_traces.hpp: the per-draw weighted means,
//                or the unweighted states, i.e. the sampler's mixing).
// lp__ of weighted runs is not given (lp_note says why).
#include <cstdint>
#include <string>
#include <vector>

#include "report/diagnostics.hpp"
#include "report/summary.hpp"

namespace pemc::report {

struct QuantityEstimate {
  std::string name;
  // NaN: unavailable (see the file comment) or undefined.
  double mean, mcse_mean, sd, q5, q50, q95, ess_bulk, ess_tail, rhat;
};

struct RunPosterior {
  std::string run_id, sampler, target;
  int n_chains = 0;
  std::int64_t min_draws = 0, max_draws = 0;  // post-warmup draws per chain
  std::int64_t warmup = 0;                    // configured, per chain
  double wall_seconds = 0.0;                  // the longest chain's (footer)
  double cpu_seconds = 0.0;                   // all chains' (footer)
  bool weighted = false;
  std::string estimates_note;  // for weighted runs: what the numbers are (file comment)
  // Which per-chain sampler statistics the run's sampler records.
  bool has_divergences = false, has_tree_depth = false, has_ebfmi = false, has_step_size = false;
  std::vector<ChainDiagnostics> chains;  // by chain id (their parameters left empty)
  std::vector<QuantityEstimate> quantities;  // lp__ first when available, then the selection
  std::string lp_note;                       // why there is no lp__, when there is none
  std::vector<std::string> warnings;         // the diagnostics' (sampler_warnings.hpp)
  std::vector<std::string> notes;            // the diagnostics' notes
};

// One entry per diagnosed run. `vars`: --vars (quantity_selection.hpp); empty: every quantity.
// ConfigError for a --vars name a run does not have (lp__ where it is not available: why).
std::vector<RunPosterior> posterior_summaries(const DiagnosticsReport& diagnostics,
                                              const std::vector<FileSummary>& summaries,
                                              const std::vector<std::string>& vars);

}  // namespace pemc::report
