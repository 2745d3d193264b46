#pragma once
// Mergeable accumulator of the self-normalised weighted mean and FULL covariance of vectors x with
// log weights: sum w, sum w^2, sum w x and the lower triangle of sum w x x', all relative to
// exp(shift), shift the largest log weight seen (so no weight overflows or underflows).
// The weighted estimators of target expectations built on it: continuous tempering's eqs. (21),
// (22) (TemperingRbAccumulator, one per weight family), simulated tempering's weights p(K-1 | x)
// and AIS's importance weights (Graham & Storkey 2017; the tempering kernels' running moments).
// (WeightedMoments, weighted_moments.hpp, keeps only the diagonal of the second moment.)
#include <cstddef>
#include <span>
#include <vector>

#include "core/types.hpp"

namespace pemc::estimators {

class WeightedCovariance {
 public:
  explicit WeightedCovariance(int dim = 0) { resize(dim); }
  // Zero sums of dimension d.
  void resize(int d);
  int dim() const { return static_cast<int>(sum_x_.size()); }

  // Adds x (of dim() entries) with log weight log_w; -inf adds nothing. The caller checks NaN,
  // +inf and the dimension (this runs per transition of every tempering chain).
  void add(ConstVectorRef x, double log_w);
  // As if every sample of o had been add()ed here (up to rounding); same dimension required.
  void merge(const WeightedCovariance& o);

  double log_sum() const;           // log sum w; -inf before a positive weight
  double ess() const;               // Kish (sum w)^2 / sum w^2; 0 before a positive weight
  Vector mean() const;              // sum w x / sum w (NaN before a positive weight)
  Matrix covariance() const;        // sum w x x' / sum w - mean mean'

  // [shift, sum_w, sum_w2, sum_x (dim), sum_xx (dim*dim, column-major)] appended to out.
  void serialize(std::vector<double>& out) const;
  static std::size_t serialized_size(int dim) { return 3 + dim + static_cast<std::size_t>(dim) * dim; }
  // Reads serialized_size(dim()) numbers at data[pos], advancing pos (the caller checks the size).
  void deserialize(std::span<const double> data, std::size_t& pos);

 private:
  void rescale_to(double log_w);

  double shift_ = 0.0;  // log of the scale of every stored sum
  double sum_w_ = 0.0, sum_w2_ = 0.0;
  Vector sum_x_;
  Matrix sum_xx_;       // lower triangle only
};

}  // namespace pemc::estimators
