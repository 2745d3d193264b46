#pragma once
// The importance weights of a run's AIS chains pooled into one sample: every chain's runs are
// independent draws of the same weight r (same target, reference, ladder and kernels; only the
// seeds differ), so the run's estimate of Z is the mean of r over all of them, and the tail of r's
// distribution is a property of the run, not of the chain that happened to draw its largest runs.
//
// From each chain's summary (annealed_importance.hpp: n_runs, log_z = log mean r, ess = (sum r)^2
// / sum r^2, and its largest log weights, descending):
//   sum r = n exp(log_z), sum r^2 = (sum r)^2 / ess, summed over the chains;
//   log_z = log(sum r / N), ess = (sum r)^2 / sum r^2 and the delta-method SE
//   sqrt((N / ess - 1) / (N - 1)) over the N pooled runs, as one chain's;
//   pareto_k = the Pareto k-hat (pareto_tail.hpp) of the pooled largest weights. A chain sends only
//   its own tail (the M + 1 largest of its n runs, M = ceil(min(n / 5, 3 sqrt n))), so the pooled
//   list is exact only down to the largest smallest-sent weight of a chain that sent fewer than all
//   its runs; the fit uses that exact part (and fewer tail weights than M(N) when it is short).
#include <span>
#include <vector>

namespace pemc::estimators {

// One chain's part, as its footer reports it.
struct AisChainWeights {
  double n_runs = 0.0;
  double log_z = 0.0;                       // log mean r
  double ess = 0.0;                         // Kish ESS of its runs
  std::span<const double> largest_log_weights;  // descending; empty if not reported
};

struct PooledAisWeights {
  int n_chains = 0;           // chains with at least one run
  double n_runs = 0.0;        // N
  double log_z = 0.0;         // log of the mean weight over all N runs
  double log_z_se = 0.0;      // delta method; NaN for N < 2
  double ess = 0.0;           // Kish ESS of the N runs
  double pareto_k = 0.0;      // k-hat of the pooled tail; NaN when too few exact tail weights
  int n_tail_weights = 0;     // exact pooled largest weights the fit could use
};

// Pools the chains with n_runs >= 1 and a finite log_z and ess > 0. n_chains = 0 when none.
PooledAisWeights pool_ais_weights(const std::vector<AisChainWeights>& chains);

// The number of largest log weights a chain of n runs reports: the M + 1 its own k-hat uses.
std::size_t ais_tail_size(double n_runs);

}  // namespace pemc::estimators
