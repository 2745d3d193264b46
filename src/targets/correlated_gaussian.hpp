#pragma once
// AR(1)-correlated Gaussian preset: zero mean, unit variances, Cov_ij = rho^|i-j|.
//
// The precision of an AR(1) covariance is tridiagonal,
//   P = 1/(1-rho^2) * tridiag(-rho; 1, 1+rho^2, ..., 1+rho^2, 1; -rho),
// and log det Cov = (d-1) log(1-rho^2), so potential and gradient cost O(d) and memory O(d)
// (the dense Gaussian class would need O(d^2)). potential = 0.5 x' P x exactly as in Gaussian.
#include <memory>

#include "targets/target.hpp"

namespace pemc::v1 {
class CorrelatedGaussianTarget;
}

namespace pemc::targets {

class CorrelatedGaussian final : public Target {
 public:
  // dim >= 1, rho in (-1, 1); throws ConfigError otherwise.
  CorrelatedGaussian(int dim, double rho);

  int dim() const override { return dim_; }
  std::string name() const override { return "correlated_gaussian"; }
  double potential(ConstVectorRef x) const override;
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;
  // mean 0, second moments 1, log_z = d/2 log 2pi + (d-1)/2 log(1-rho^2); the cross moment
  // (= the covariance) only for dim <= kMaxCrossMomentDim, since it is a dense d x d matrix.
  Truth truth() const override;

  double rho() const { return rho_; }
  // Dense covariance rho^|i-j| (O(d^2) memory; for tests and small d).
  Matrix covariance() const;

  static constexpr int kMaxCrossMomentDim = 2000;

 private:
  int dim_;
  double rho_;
  double inv_one_minus_rho2_;  // 1 / (1 - rho^2)
};

std::shared_ptr<CorrelatedGaussian> make_correlated_gaussian(int dim, double rho);
// From a config; errors name target.correlated_gaussian.<field>.
std::shared_ptr<CorrelatedGaussian> make_correlated_gaussian(
    const v1::CorrelatedGaussianTarget& config);

}  // namespace pemc::targets
