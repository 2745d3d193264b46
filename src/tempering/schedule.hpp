#pragma once
// Inverse-temperature ladders shared by PT, ST and AIS, and the schedule adaptation of
// non-reversible parallel tempering (Syed, Bouchard-Côté, Deligiannidis & Doucet 2021, Section 5).
//
// Schedule adaptation: with r_i the rejection rate of swaps between beta_i and beta_{i+1}
// (estimated from the acceptance *probabilities*, which is lower variance than counting accepted
// swaps), the cumulative communication barrier is Lambda(beta_j) = sum_{i<j} r_i. Interpolating
// these points with a monotone cubic (Fritsch & Carlson 1980) gives a smooth increasing Lambda(beta)
// on [beta_0, 1]; the new ladder puts beta'_j = Lambda^{-1}(j Lambda / (K' - 1)), which equalises
// the rejection rates (the optimum for NRPT, Syed et al. Theorem 4). The global barrier
// Lambda = Lambda(1) also fixes how many replicas are worth running: with K equally-rejecting
// replicas each pair rejects about Lambda / (K - 1), so K = ceil(c Lambda) + 1 gives a rejection
// rate of at most 1/c per pair (c = 2, Pigeons' rule of thumb "about 2 Lambda chains").
#include <vector>

namespace pemc::tempering {

// K inverse temperatures from beta_min to 1, geometrically spaced (beta_min > 0), ascending.
std::vector<double> geometric_ladder(int k, double beta_min);
// K inverse temperatures beta_min + (1 - beta_min) i / (K - 1), i = 0..K-1 (0 <= beta_min < 1).
std::vector<double> linear_ladder(int k, double beta_min);
// The sigmoidal ladder of Grosse et al. (2015) used for AIS in the continuous tempering code:
// s_i = logistic(scale (2 i / (K - 1) - 1)), beta_i = beta_min + (1 - beta_min)(s_i - s_0)/(s_{K-1} - s_0).
// Dense near both ends. scale > 0.
std::vector<double> sigmoidal_ladder(int k, double beta_min, double scale);

// Throws std::invalid_argument unless betas has >= 2 entries, is strictly ascending, lies in
// [0, 1] and ends at exactly 1. `what` prefixes the message.
void check_ladder(const std::vector<double>& betas, const char* what = "ladder");

// Monotone piecewise-cubic Hermite interpolant through (x_i, y_i), x strictly ascending and y
// non-decreasing (Fritsch & Carlson 1980: slopes limited so that no overshoot occurs, hence the
// interpolant is non-decreasing too).
class MonotoneCubic {
 public:
  MonotoneCubic(std::vector<double> x, std::vector<double> y);
  double operator()(double t) const;  // clamps t to [x_0, x_{n-1}]
  // The smallest t in [x_0, x_{n-1}] with f(t) >= y (bisection to ~1e-14 relative; the
  // interpolant is continuous and non-decreasing). y is clamped to [y_0, y_{n-1}].
  double inverse(double y) const;

 private:
  std::vector<double> x_, y_, m_;  // knots, values, slopes
};

struct BarrierEstimate {
  std::vector<double> cumulative;  // Lambda(beta_i), i = 0..K-1 (cumulative[0] = 0)
  double total = 0.0;              // Lambda = cumulative.back()
};

// Lambda at the ladder's knots from the per-pair rejection rates (K - 1 entries, each clamped to
// [0, 1]).
BarrierEstimate communication_barrier(const std::vector<double>& rejection);

// The ladder with n_new levels from betas.front() to 1 equalising the barrier: beta'_j =
// Lambda^{-1}(j Lambda / (n_new - 1)) under the monotone interpolation of (betas, Lambda(betas)).
// If Lambda is 0 (no rejection anywhere) the levels are spread linearly instead. Consecutive
// levels are kept strictly ascending (a level that would coincide with the previous one is moved
// up by a relative 1e-12). rejection has betas.size() - 1 entries.
std::vector<double> equalise_barrier(const std::vector<double>& betas,
                                     const std::vector<double>& rejection, int n_new);

// K = ceil(replicas_per_barrier * Lambda) + 1, clamped to [min_replicas, max_replicas].
int replicas_for_barrier(double barrier, double replicas_per_barrier, int min_replicas,
                         int max_replicas);

}  // namespace pemc::tempering
