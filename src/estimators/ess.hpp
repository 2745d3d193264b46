#pragma once
// Effective sample sizes of MCMC draws (Vehtari, Gelman, Simpson, Carpenter, Bürkner 2021,
// Section 3 and Appendix; Geyer 1992 for the truncation rule).
//
// For M chains of n draws each (truncated to the shortest), with per-chain autocovariances
// acov_m(t) = (1/n) sum_{i < n-t} (x_i - mean_m)(x_{i+t} - mean_m) computed by FFT,
//   W     = mean_m  n/(n-1) acov_m(0)           (within-chain variance)
//   var+  = (n-1)/n W + B/n,  B/n = variance of the chain means (0 for M = 1)
//   rho_t = 1 - (W - mean_m acov_m(t)) / var+   (rho_0 = 1; combines the chains as in the paper)
// Geyer's initial monotone sequence: P_k = rho_{2k} + rho_{2k+1} is summed while it is positive
// (initial positive sequence, lags below n - 4) and each P_k is capped by the previous one
// (monotone); at the first non-positive pair, at lag 2K, rho_{2K} still counts once when positive
// (the paper's improved truncation, as posterior's .ess):
//   tau = -1 + 2 sum_{k<K} P_k + max(rho_{2K}, 0),   tau >= 1 / log10(M n) (the paper's guard for
//   antithetic chains),
//   ESS = M n / tau.
// bulk ESS = ESS of the rank-normalised split chains; tail ESS = min of the ESS of the indicators
// I(theta <= q_0.05) and I(theta <= q_0.95) on the split chains.
#include <complex>
#include <span>
#include <vector>

#include "estimators/rhat.hpp"

namespace pemc::estimators {

// Biased autocovariance acov(t), t = 0..n-1, of one series (FFT of the zero-padded centred
// series; O(n log n)).
std::vector<double> autocovariance(std::span<const double> x);

// In-place radix-2 FFT (size a power of two); inverse = true computes the unscaled inverse.
void fft(std::vector<std::complex<double>>& a, bool inverse);

struct EssResult {
  double ess = 0.0;   // M n / tau; NaN when undefined (n < 4, W = 0 i.e. every chain constant)
  double tau = 0.0;   // integrated autocorrelation time estimate
  int max_lag = 0;    // last lag included in the Geyer sum (the truncation window)
  int n_chains = 0;   // M
  int n_draws = 0;    // n per chain after truncation to the shortest
};

// ESS of the given chains, as they are (no splitting, no rank normalisation). Throws
// NumericalError when a draw is not finite.
EssResult effective_sample_size(const std::vector<std::span<const double>>& chains);
EssResult effective_sample_size(const Chains& chains);

// The paper's bulk ESS (split + rank-normalised) and tail ESS (min over the 5% and 95% quantile
// indicators of the split chains). NaN entries where undefined (e.g. all draws equal).
EssResult bulk_ess(const std::vector<std::span<const double>>& chains);
EssResult tail_ess(const std::vector<std::span<const double>>& chains);

// The ESS of the mean (posterior::ess_mean, = ess_basic): the ESS of the split chains, not
// rank-normalised, so it measures how precisely the average of the draws estimates E[x].
EssResult mean_ess(const std::vector<std::span<const double>>& chains);

// Monte Carlo standard error of the mean, as posterior::mcse_mean: sd(all draws pooled, n - 1
// denominator) / sqrt(mean_ess). NaN when the ESS is undefined.
double mcse_mean(const std::vector<std::span<const double>>& chains);

// R-hat (rhat.hpp), bulk ESS and tail ESS of one quantity at once, splitting and rank-normalising
// once (the bulk R-hat and the bulk ESS share the rank-normalised split chains). The same values
// as the separate functions.
struct RankDiagnostics {
  RhatResult rhat;
  EssResult bulk;
  EssResult tail;
};
RankDiagnostics rank_diagnostics(const std::vector<std::span<const double>>& chains);

// rank_diagnostics without the tail ESS (which needs quantiles of the draws and two more ESS):
// the R-hat and the bulk ESS, the same values as rank_diagnostics'.
struct RhatBulkEss {
  RhatResult rhat;
  EssResult bulk;
};
RhatBulkEss rhat_and_bulk_ess(const std::vector<std::span<const double>>& chains);

}  // namespace pemc::estimators
