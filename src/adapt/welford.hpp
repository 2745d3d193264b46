#pragma once
// Streaming mean and (co)variance (Welford), used by the windowed metric estimator.
#include "adapt/state_io.hpp"
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

  // Checkpoint: count and sums (a window's draws so far).
  void save_state(KernelState& s) const {
    s.set_kind(dense_ ? "welford_dense" : "welford_diagonal");
    put_int(s, "n", n_);
    put_vector(s, "mean", mean_);
    if (dense_) put_matrix(s, "m2", m2_); else put_vector(s, "m2_diag", m2_diag_);
  }
  void restore_state(const KernelState& s) {
    expect_kind(s, dense_ ? "welford_dense" : "welford_diagonal");
    n_ = static_cast<long>(get_int(s, "n"));
    get_vector(s, "mean", mean_, mean_.size());
    if (dense_) {
      Matrix m;
      get_matrix(s, "m2", m);
      if (m.rows() != m2_.rows() || m.cols() != m2_.cols()) state_error(s, "m2", "wrong shape");
      m2_ = m;
    } else {
      get_vector(s, "m2_diag", m2_diag_, m2_diag_.size());
    }
  }

 private:
  bool dense_;
  long n_ = 0;
  Vector mean_;
  Vector m2_diag_;
  Matrix m2_;
};

}  // namespace pemc::adapt
