#pragma once
// Quantiles of weighted samples, for summarize's posterior summary of the weighted samplers
// (pseudo-extended, continuous and simulated tempering, AIS).
//
// weighted_quantile generalises type-7 quantiles (R's default, posterior's quantile2) to weights
// w_k > 0 normalised to sum 1, with the samples sorted, x_1 <= ... <= x_n:
//   S_k = (k - 1) w_k + (n - 1) (w_1 + ... + w_{k-1}),   S_1 = 0, S_n = n - 1,
//   Q(p) = x_k + (h - S_k) / (S_{k+1} - S_k) (x_{k+1} - x_k)   for S_k <= h = p (n - 1) < S_{k+1}
// (the "analytic weights" rule of Julia's StatsBase). With equal weights S_k = k - 1 and Q is
// exactly type 7. Samples of weight 0 are left out.
//
// WeightedSampleStore keeps one chain's weighted samples (all quantities, with their log weights)
// for those quantiles, thinned by whole draws to at most kMaxValues values: when full, every other
// kept draw is dropped and only every `stride`-th draw is kept from then on.
#include <cstdint>
#include <span>
#include <vector>

#include "core/types.hpp"

namespace pemc::report {

// NaN when no sample has positive weight. ConfigError for p outside [0, 1] or sizes that differ;
// NumericalError for a negative or non-finite weight or a non-finite sample of positive weight.
double weighted_quantile(std::span<const double> x, std::span<const double> w, double p);

class WeightedSampleStore {
 public:
  // 8 MB per chain: summarize holds every chain of a file at once (a study may have hundreds).
  static constexpr std::int64_t kMaxValues = 1'000'000;
  explicit WeightedSampleStore(std::int64_t max_values = kMaxValues) : max_values_(max_values) {}

  // Sample x of draw number `draw` (0, 1, ... in chain order) with log weight log_w.
  void add(std::int64_t draw, ConstVectorRef x, double log_w);

  std::int64_t stride() const { return stride_; }
  std::size_t size() const { return log_weights_.size(); }
  // values()[i][s]: quantity i of kept sample s.
  const std::vector<std::vector<double>>& values() const { return values_; }
  const std::vector<double>& log_weights() const { return log_weights_; }

 private:
  void halve();

  std::int64_t max_values_;
  std::int64_t stride_ = 1;
  std::vector<std::vector<double>> values_;
  std::vector<double> log_weights_;
  std::vector<std::int64_t> draws_;  // the draw of each kept sample
};

}  // namespace pemc::report
