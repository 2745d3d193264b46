#pragma once
// Mergeable accumulator of the Rao-Blackwellised continuous-tempering estimators (Graham & Storkey
// 2017, eqs. (20)-(22)) from draws x with log weights log w0(x), log w1(x)
// (src/extended/continuous_tempering_math.hpp):
//   log Z          = log zeta + log sum w1 - log sum w0                       (eq. (20))
//   E_target[f]    = sum w1 f / sum w1,   E_base[f] = sum w0 f / sum w0       (eqs. (21), (22))
// for f = x and x x' (so means and full covariances). Each weight family is a WeightedCovariance
// (weighted_covariance.hpp): sums relative to its largest log weight, so none overflows.
//
// merge() is exact up to rounding; merging the per-chain accumulators in a fixed order (global
// chain id) gives the same bits whatever the number of ranks. serialize()/deserialize() give a flat
// double vector for MPI or records.
#include <cstdint>
#include <span>
#include <vector>

#include "core/types.hpp"
#include "estimators/weighted_covariance.hpp"
#include "estimators/weighted_covariance.hpp"

namespace pemc::estimators {

class TemperingRbAccumulator {
 public:
  explicit TemperingRbAccumulator(int dim = 0);

  // Throws DataError on a dimension mismatch, NumericalError for a NaN or +inf log weight
  // (-inf is a zero weight: counted, moves nothing).
  void add(ConstVectorRef x, double log_w0, double log_w1);
  // Throws DataError when the dimensions differ (an empty accumulator takes the other's).
  void merge(const TemperingRbAccumulator& other);

  int dim() const { return w1_.dim(); }
  std::int64_t count() const { return n_; }
  double log_sum_w0() const { return w0_.log_sum(); }
  double log_sum_w1() const { return w1_.log_sum(); }
  // eq. (20); NaN before any positive w0 and w1.
  double log_z(double log_zeta) const;
  // eq. (21): target moments.
  Vector mean() const { return w1_.mean(); }
  Matrix covariance() const { return w1_.covariance(); }
  // eq. (22): base moments (a convergence check against the base's known moments).
  Vector base_mean() const { return w0_.mean(); }
  Matrix base_covariance() const { return w0_.covariance(); }
  // Kish effective sample sizes (sum w)^2 / sum w^2 of each weight family.
  double ess_w1() const { return w1_.ess(); }
  double ess_w0() const { return w0_.ess(); }

  // Layout: [dim, count, then for w0 and w1 in turn: shift, sum_w, sum_w2, sum_x (dim),
  // sum_xx (dim*dim, column-major)].
  std::vector<double> serialize() const;
  // Throws DataError when the vector's size does not match its own dim field.
  static TemperingRbAccumulator deserialize(std::span<const double> data);

 private:
  void ensure_dim(Eigen::Index d, const char* where);

  std::int64_t n_ = 0;
  WeightedCovariance w0_, w1_;
};

}  // namespace pemc::estimators
