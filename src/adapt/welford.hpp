#pragma once
// Streaming mean and (co)variance (Welford), used by the windowed metric estimator.
#include "core/types.hpp"

namespace pemc::adapt {

class WelfordCovariance {
 public:
  WelfordCovariance(int dim, bool dense)
      : dense_(dense), mean_(Vector::Zero(dim)), m2_diag_(Vector::Zero(dim)) {
    if (dense_) m2_ = Matrix::Zero(dim, dim);
  }
  void add(ConstVectorRef x) {
    ++n_;
    const Vector delta = x - mean_;
    mean_ += delta / static_cast<double>(n_);
    if (dense_) {
      m2_.noalias() += (x - mean_) * delta.transpose();
    } else {
      m2_diag_.array() += (x - mean_).array() * delta.array();
    }
  }
  void reset() {
    n_ = 0;
    mean_.setZero();
    m2_diag_.setZero();
    if (dense_) m2_.setZero();
  }
  long count() const { return n_; }
  const Vector& mean() const { return mean_; }
  Vector variance() const {
    return dense_ ? Vector(m2_.diagonal() / (n_ - 1.0)) : Vector(m2_diag_ / (n_ - 1.0));
  }
  Matrix covariance() const { return m2_ / (n_ - 1.0); }

 private:
  bool dense_;
  long n_ = 0;
  Vector mean_;
  Vector m2_diag_;
  Matrix m2_;
};

}  // namespace pemc::adapt
