#pragma once
// Batch-means standard error of the log of a ratio of two sums, log(sum_t a_t / sum_t b_t), over
// the observations (a_t, b_t) >= 0 of one Markov chain: continuous tempering's
// log Z - log zeta = log sum w1 - log sum w0 (Graham & Storkey 2017, eq. (20)).
//
// The delta method on batch means. Split the n observations into k contiguous batches of m and
// let A_j, B_j be batch j's sums and Abar, Bbar their means over the batches, so the estimator is
// g(Abar, Bbar) with g(a, b) = log a - log b. When m is long against the chain's autocorrelation
// time, the batch sums are nearly independent, identically distributed pairs with means
// (mu_A, mu_B) and covariance S, so (Abar, Bbar) is approximately N((mu_A, mu_B), S / k) and, to
// first order in the deviations,
//   Var g(Abar, Bbar) = grad g' (S / k) grad g,   grad g = (1 / mu_A, -1 / mu_B)
//                     = (1 / k) Var(A_j / mu_A - B_j / mu_B).
// With the sample means in place of mu, the residuals r_j = A_j / Abar - B_j / Bbar have mean
// exactly 0 over the batches, and
//   SE^2 = (1 / k) * sum_j r_j^2 / (k - 1).
// (Averaging the per-batch estimates log A_j - log B_j instead would divide by each batch's own
// sum: biased, and unstable when a batch's sum is small, e.g. a batch a tempering chain spent near
// beta = 1, where every w0 is tiny. The linearised r_j divides only by the means.)
// Only full batches enter the SE; the estimate itself uses all n observations, so the SE of the
// full-batch estimate is scaled by sqrt(k m / n) (the variance of a mean falls as 1/n).
//
// The number of observations is not known in advance, so batches double in size (as
// tempering/batched_log_sums.hpp): at most 2 * n_batches are kept, and when that many are full,
// neighbours merge pairwise. The layout depends only on the number of observations. Sums are kept
// relative to the largest log value seen in each channel (one exp per observation and channel), so
// neither overflows.
#include <cstdint>
#include <span>
#include <vector>

namespace pemc::estimators {

class LogRatioBatchMeans {
 public:
  static constexpr int kDefaultBatches = 32;

  // Throws std::invalid_argument for n_batches < 2.
  explicit LogRatioBatchMeans(int n_batches = kDefaultBatches);

  // One observation, as logs: -inf is a zero (counted, adds nothing). The caller rejects NaN and
  // +inf (TemperingRbAccumulator::add does, for the same weights).
  void add(double log_a, double log_b);

  std::int64_t count() const { return count_; }
  std::int64_t batch_size() const { return batch_size_; }
  int n_full_batches() const;
  // log sum a - log sum b over every observation; NaN while either sum is 0.
  double log_ratio() const;
  // The batch-means delta-method SE of log_ratio() (above); NaN with fewer than 2 full batches or
  // while a mean batch sum is 0.
  double log_ratio_se() const;

  // [n_batches, batch_size, count, shift_a, shift_b, then per batch: sum_a, sum_b, n].
  std::vector<double> serialize() const;
  // Throws DataError for numbers that are not such a layout.
  static LogRatioBatchMeans deserialize(std::span<const double> data);

 private:
  struct Batch {
    double a = 0.0, b = 0.0;  // sums relative to exp(shift_a_), exp(shift_b_)
    std::int64_t n = 0;
  };
  // exp(log_v - shift) after raising shift to log_v if needed (rescaling every batch's sum).
  double scaled(double log_v, double& shift, double Batch::*sum);

  int n_batches_;
  std::int64_t batch_size_ = 1;
  std::int64_t count_ = 0;
  double shift_a_, shift_b_;
  std::vector<Batch> batches_;
};

}  // namespace pemc::estimators
