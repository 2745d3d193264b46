#pragma once
// The Pareto shape k-hat of the upper tail of importance weights (Vehtari, Simpson, Gelman, Yao,
// Gabry 2024, "Pareto smoothed importance sampling", JMLR 25(72), Section 3): how heavy the tail
// of the weights' distribution is, estimated from the largest weights.
//
// An importance-sampling mean (AIS's Z-hat = mean of the runs' weights r) has a finite variance
// only when k < 1/2; for larger k the central limit theorem behind a standard error sd(r) / sqrt(n)
// does not hold, and for k > 0.7 the mean itself is dominated by rare weights the sample has not
// seen yet, so it is typically far below the truth while its sample SE looks small. The paper's
// reliability threshold for S draws is min(1 - 1 / log10 S, 0.7) (Section 3.2.4).
//
// Method (the paper's, as in the `loo` package): the M = ceil(min(S / 5, 3 sqrt(S))) largest
// weights (relative to the largest) minus the (M+1)-th largest are fitted by a generalised Pareto
// distribution with the profile-likelihood-weighted estimator of Zhang & Stephens (2009), then the
// shape is shrunk towards 0.5 by the weakly informative prior of the paper (k (M) + 5) / (M + 10).
#include <span>

namespace pemc::estimators {

// k-hat of the weights exp(log_weights) (any order, -inf = zero weight). NaN when fewer than 5
// tail weights exist (S < 25 with positive weights) or every tail weight equals the cut-off.
double pareto_k_hat(std::span<const double> log_weights);

// The same from only the largest log weights of n_draws draws (descending): the tail is the
// min(M, largest.size() - 1) largest, M as above.
double pareto_k_hat_of_largest(std::span<const double> largest_descending, double n_draws);

// k-hat of a generalised Pareto fit to exceedances x (all >= 0, sorted ascending, not all zero),
// Zhang & Stephens (2009) with the prior adjustment above. NaN for fewer than 5 values.
double generalized_pareto_shape(std::span<const double> exceedances_ascending);

// The paper's sample-size-dependent threshold min(1 - 1 / log10(S), 0.7) (S > 10).
double pareto_k_threshold(double n_draws);

}  // namespace pemc::estimators
