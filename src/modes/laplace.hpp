#pragma once
// Local Gaussian approximations of a target at a mode (CT paper, Graham & Storkey 2017, Section 6
// and eq. (25)): the Hessian of the potential by finite differences of its analytic gradient, and
// the Laplace approximation N(mode, H^{-1}) with its log evidence.
#include "core/types.hpp"
#include "targets/target.hpp"

namespace pemc::modes {

// One local Gaussian approximation q_i = N(mean, covariance) and its log-evidence l_i (an
// approximation to log Z from this fit alone, eq. (25)).
struct LocalGaussianFit {
  Vector mean;
  Matrix covariance;
  double log_evidence = 0.0;
};

// The Hessian of f.potential at x by central differences of the analytic gradient (2 dim gradient
// evaluations), symmetrised. Step h_i = step * max(1, |x_i|).
Matrix finite_difference_hessian(const targets::Target& f, ConstVectorRef x, double step = 1e-5);

// Laplace fit at a mode: mean = mode, covariance = H^{-1}, l = -phi(mode) + (d/2) log 2pi -
// (1/2) log det H. Throws NumericalError when H is not positive definite.
LocalGaussianFit laplace_fit(const targets::Target& f, ConstVectorRef mode, double hessian_step);

// The same from a Hessian already computed at the mode (phi = the potential there).
LocalGaussianFit laplace_fit_from_hessian(ConstVectorRef mode, double phi, const Matrix& hessian);

}  // namespace pemc::modes
