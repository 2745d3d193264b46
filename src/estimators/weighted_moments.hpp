#pragma once
// Mergeable accumulator of (self-normalised) weighted first and second moments.
// Weights arrive as log weights; sums are kept relative to a running maximum so that neither huge
// nor tiny weights overflow. Unweighted use: log_w = 0 for every sample.
#include <cmath>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "core/types.hpp"

namespace pemc::estimators {

// Both weighted accumulators (WeightedMoments here, WeightedCovariance) keep their sums relative
// to exp(shift), shift = the largest log weight seen, so that no weight overflows or underflows.
// Before a weight with log weight log_w is added this rebases the sums onto exp(log_w) when it is
// a new largest (or sets the shift when nothing has been added yet). Second: the type of the
// second-moment sums (Vector: per coordinate; Matrix: the full matrix).
template <class Second>
void rebase_weighted_sums(double log_w, double& shift, double& sum_w, double& sum_w2,
                          Vector& sum_x, Second& sum_xx) {
  if (sum_w == 0.0) {
    shift = log_w;
    return;
  }
  if (log_w <= shift) return;
  const double f = std::exp(shift - log_w);
  sum_w *= f;
  sum_w2 *= f * f;
  sum_x *= f;
  sum_xx *= f;
  shift = log_w;
}

class WeightedMoments {
 public:
  explicit WeightedMoments(int dim = 0)
      : sum_x_(Vector::Zero(dim)), sum_xx_(Vector::Zero(dim)) {}

  // Adds x with unnormalised log weight log_w. log_w = -inf is a zero weight: the sample is
  // counted but does not move any moment. Throws NumericalError for a NaN or +inf log weight (it
  // would poison every sum) and DataError when x.size() differs from the accumulator's dimension
  // (set by the constructor or, when that was 0, by the first sample).
  void add(ConstVectorRef x, double log_w = 0.0) {
    if (sum_x_.size() == 0) {
      sum_x_ = Vector::Zero(x.size());
      sum_xx_ = Vector::Zero(x.size());
    } else if (x.size() != sum_x_.size()) {
      throw DataError("WeightedMoments::add: sample has dimension " + std::to_string(x.size()) +
                      ", expected " + std::to_string(sum_x_.size()));
    }
    if (std::isnan(log_w) || log_w == kInf)
      throw NumericalError("WeightedMoments::add: log weight is " +
                           std::string(std::isnan(log_w) ? "NaN" : "+inf"));
    if (log_w == -kInf) {
      ++n_;
      return;
    }
    rescale_to(log_w);
    const double w = std::exp(log_w - shift_);
    sum_w_ += w;
    sum_w2_ += w * w;
    sum_x_.noalias() += w * x;
    sum_xx_.array() += w * x.array().square();
    ++n_;
  }

  // Adds every sample of `other`, exactly as if they had been add()ed here (up to rounding).
  // Throws DataError when both hold samples of different dimensions.
  void merge(const WeightedMoments& other) {
    if (sum_x_.size() != 0 && other.sum_x_.size() != 0 && sum_x_.size() != other.sum_x_.size())
      throw DataError("WeightedMoments::merge: dimensions differ (" +
                      std::to_string(sum_x_.size()) + " vs " +
                      std::to_string(other.sum_x_.size()) + ")");
    if (other.sum_w_ == 0.0) {
      if (sum_x_.size() == 0) {
        sum_x_ = Vector::Zero(other.sum_x_.size());
        sum_xx_ = Vector::Zero(other.sum_x_.size());
      }
      n_ += other.n_;
      return;
    }
    if (sum_x_.size() == 0) {
      sum_x_ = Vector::Zero(other.sum_x_.size());
      sum_xx_ = Vector::Zero(other.sum_x_.size());
    }
    rescale_to(other.shift_);
    const double f = std::exp(other.shift_ - shift_);
    sum_w_ += f * other.sum_w_;
    sum_w2_ += f * f * other.sum_w2_;
    sum_x_ += f * other.sum_x_;
    sum_xx_ += f * other.sum_xx_;
    n_ += other.n_;
  }

  // Samples added (zero-weight ones included).
  std::int64_t count() const { return n_; }
  // Self-normalised weighted moments. Undefined without a positive weight: then every entry is
  // NaN (check kish_ess() > 0 first).
  Vector mean() const { return sum_x_ / sum_w_; }
  Vector second_moment() const { return sum_xx_ / sum_w_; }
  // Kish effective sample size (sum w)^2 / sum w^2; equals count() for equal weights.
  double kish_ess() const { return sum_w_ > 0 ? sum_w_ * sum_w_ / sum_w2_ : 0.0; }
  // log of the sum of the weights (for normalising-constant estimators).
  double log_sum_weights() const { return sum_w_ > 0 ? shift_ + std::log(sum_w_) : -kInf; }

 private:
  // Keep every stored sum relative to exp(shift_), with shift_ the largest log weight seen.
  void rescale_to(double log_w) {
    rebase_weighted_sums(log_w, shift_, sum_w_, sum_w2_, sum_x_, sum_xx_);
  }

  std::int64_t n_ = 0;
  double shift_ = 0.0;
  double sum_w_ = 0.0;
  double sum_w2_ = 0.0;
  Vector sum_x_;
  Vector sum_xx_;
};

}  // namespace pemc::estimators
