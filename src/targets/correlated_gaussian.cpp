#include "targets/correlated_gaussian.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::targets {

CorrelatedGaussian::CorrelatedGaussian(int dim, double rho) : dim_(dim), rho_(rho) {
  if (dim < 1)
    throw ConfigError("correlated_gaussian target: dim must be >= 1 (got " + std::to_string(dim) +
                      ")");
  if (!(rho > -1.0 && rho < 1.0))
    throw ConfigError("correlated_gaussian target: rho must be in (-1, 1) (got " +
                      std::to_string(rho) + ")");
  inv_one_minus_rho2_ = 1.0 / (1.0 - rho * rho);
}

double CorrelatedGaussian::potential(ConstVectorRef x) const {
  // x' P x (1 - rho^2) = sum_i x_i^2 (1 + rho^2 for interior i) - 2 rho sum_i x_i x_{i+1}
  //                    = x_0^2 + sum_{i>=1} (x_i - rho x_{i-1})^2   (the AR(1) innovations)
  double q = x[0] * x[0] * (1.0 - rho_ * rho_);
  for (int i = 1; i < dim_; ++i) {
    const double e = x[i] - rho_ * x[i - 1];
    q += e * e;
  }
  return 0.5 * q * inv_one_minus_rho2_;
}

double CorrelatedGaussian::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  // grad = P x with the tridiagonal P.
  const double c = inv_one_minus_rho2_;
  if (dim_ == 1) {
    grad[0] = x[0];
    return 0.5 * x[0] * x[0];
  }
  const double interior = 1.0 + rho_ * rho_;
  grad[0] = c * (x[0] - rho_ * x[1]);
  for (int i = 1; i < dim_ - 1; ++i) grad[i] = c * (interior * x[i] - rho_ * (x[i - 1] + x[i + 1]));
  grad[dim_ - 1] = c * (x[dim_ - 1] - rho_ * x[dim_ - 2]);
  return potential(x);
}

Matrix CorrelatedGaussian::covariance() const {
  Matrix cov(dim_, dim_);
  for (int i = 0; i < dim_; ++i)
    for (int j = 0; j < dim_; ++j) cov(i, j) = std::pow(rho_, std::abs(i - j));
  return cov;
}

Truth CorrelatedGaussian::truth() const {
  Truth t;
  t.mean = Vector::Zero(dim_);
  t.second_moment = Vector::Ones(dim_);
  if (dim_ <= kMaxCrossMomentDim) t.cross_moment = covariance();
  t.log_z = 0.5 * dim_ * kLog2Pi + 0.5 * (dim_ - 1) * std::log1p(-rho_ * rho_);
  return t;
}

std::shared_ptr<CorrelatedGaussian> make_correlated_gaussian(int dim, double rho) {
  return std::make_shared<CorrelatedGaussian>(dim, rho);
}

std::shared_ptr<CorrelatedGaussian> make_correlated_gaussian(
    const v1::CorrelatedGaussianTarget& config) {
  if (config.dim() < 1)
    throw ConfigError("target.correlated_gaussian.dim: must be >= 1 (got " +
                      std::to_string(config.dim()) + ")");
  if (!(config.rho() > -1.0 && config.rho() < 1.0))
    throw ConfigError("target.correlated_gaussian.rho: must be in (-1, 1) (got " +
                      std::to_string(config.rho()) + ")");
  return make_correlated_gaussian(config.dim(), config.rho());
}

}  // namespace pemc::targets
