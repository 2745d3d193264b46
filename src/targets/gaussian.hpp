#pragma once
// Multivariate Gaussian N(mean, Sigma), potential 0.5 (x-mu)' Sigma^{-1} (x-mu).
#include "targets/target.hpp"

namespace pemc::targets {

class Gaussian final : public Target {
 public:
  // covariance must be symmetric positive definite (throws NumericalError otherwise).
  Gaussian(Vector mean, const Matrix& covariance);

  int dim() const override { return static_cast<int>(mean_.size()); }
  std::string name() const override { return "gaussian"; }
  double potential(ConstVectorRef x) const override;
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;
  Truth truth() const override;

  const Vector& mean() const { return mean_; }
  const Matrix& covariance() const { return covariance_; }

 private:
  Vector mean_;
  Matrix covariance_;
  Matrix precision_;
  double log_z_ = 0.0;  // log of integral of exp(-potential) = d/2 log 2pi + 1/2 log det Sigma
  mutable Vector diff_;
};

}  // namespace pemc::targets
