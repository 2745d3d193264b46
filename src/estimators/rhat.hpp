#pragma once
// Rank-normalised split R-hat (Vehtari, Gelman, Simpson, Carpenter, Bürkner 2021, "Rank-
// normalization, folding, and localization: an improved R-hat for assessing convergence of MCMC",
// Bayesian Analysis 16(2)), and the chain transformations it is built from (also used by the
// bulk/tail ESS of ess.hpp):
//   split      each chain into its first and second half (a trend within a chain then shows up
//              as disagreement between halves);
//   rank-normalise  replace every draw by Phi^{-1}((r - 3/8) / (S + 1/4)), r its average rank
//              among all S draws of all (split) chains (paper eq. (14)), so heavy tails and
//              infinite variances do not break the variance-based R-hat;
//   fold       zeta = |theta - median(theta)| (paper Section 4.2), whose R-hat detects chains
//              that agree in location but not in scale.
// Chains are spans of one scalar quantity's draws, one span per chain; chains of different
// lengths are truncated to the shortest (the classic R-hat assumes equal lengths).
#include <span>
#include <vector>

namespace pemc::estimators {

using Chains = std::vector<std::vector<double>>;

// Phi^{-1}(p) for p in (0, 1), to about 1e-15 relative accuracy; -inf / +inf at 0 / 1. Throws
// NumericalError for p outside [0, 1] or NaN.
double inverse_normal_cdf(double p);

// Each chain truncated to the shortest length n, then cut into halves of floor(n / 2) draws (the
// middle draw of an odd n is dropped). Returns 2 M chains.
Chains split_chains(const std::vector<std::span<const double>>& chains);

// Average ranks (1-based, ties share the mean of their positions) of all draws of all chains
// pooled, mapped through Phi^{-1}((r - 3/8) / (S + 1/4)). Same shape as the input. Throws
// NumericalError when a draw is NaN.
Chains rank_normalize(const Chains& chains);

// |theta - median| with the median of all draws pooled. Same shape as the input.
Chains fold(const Chains& chains);

// Classic (Gelman-Rubin) potential scale reduction of equal-length chains (no splitting here):
// with n draws per chain, W the mean within-chain variance and B / n the variance of the chain
// means, var+ = (n - 1) / n W + B / n and R-hat = sqrt(var+ / W).
// NaN when it is undefined: fewer than 2 chains, fewer than 2 draws, or W = 0 (every chain
// constant — callers report "constant draws").
double potential_scale_reduction(const Chains& chains);

struct RhatResult {
  double rhat = 0.0;         // max(bulk, folded): the paper's recommended R-hat
  double rhat_bulk = 0.0;    // split R-hat of the rank-normalised draws
  double rhat_folded = 0.0;  // split R-hat of the rank-normalised folded draws
};

// Rank-normalised split R-hat of one quantity over the given chains (one chain is enough: its two
// halves are compared). Entries are NaN where undefined (see potential_scale_reduction; a chain
// shorter than 4 draws; all draws equal). Throws NumericalError when a draw is NaN.
RhatResult rank_normalized_split_rhat(const std::vector<std::span<const double>>& chains);

// Sample quantile of all draws pooled (linear interpolation between order statistics, "type 7").
double pooled_quantile(const Chains& chains, double q);

}  // namespace pemc::estimators
