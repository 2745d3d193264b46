#include "targets/gaussian.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/numerics.hpp"

namespace pemc::targets {

Gaussian::Gaussian(Vector mean, const Matrix& covariance)
    : mean_(std::move(mean)), covariance_(covariance) {
  const auto d = mean_.size();
  if (d < 1) throw NumericalError("gaussian target: dimension must be >= 1");
  if (covariance.rows() != d || covariance.cols() != d)
    throw NumericalError("gaussian target: covariance is not " + std::to_string(d) + "x" +
                         std::to_string(d));
  if (!covariance.isApprox(covariance.transpose(), 1e-12))
    throw NumericalError("gaussian target: covariance is not symmetric");
  Eigen::LLT<Matrix> llt(covariance);
  if (llt.info() != Eigen::Success)
    throw NumericalError("gaussian target: covariance is not positive definite");
  precision_ = llt.solve(Matrix::Identity(d, d));
  precision_ = 0.5 * (precision_ + precision_.transpose()).eval();
  const double log_det = 2.0 * llt.matrixL().toDenseMatrix().diagonal().array().log().sum();
  log_z_ = 0.5 * static_cast<double>(d) * kLog2Pi + 0.5 * log_det;
  diff_.resize(d);
}

double Gaussian::potential(ConstVectorRef x) const {
  diff_ = x - mean_;
  return 0.5 * diff_.dot(precision_ * diff_);
}

double Gaussian::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  diff_ = x - mean_;
  grad.noalias() = precision_ * diff_;
  return 0.5 * diff_.dot(grad);
}

Truth Gaussian::truth() const {
  Truth t;
  t.mean = mean_;
  t.second_moment = (covariance_.diagonal().array() + mean_.array().square()).matrix();
  t.cross_moment = covariance_ + mean_ * mean_.transpose();
  t.log_z = log_z_;
  return t;
}

}  // namespace pemc::targets
