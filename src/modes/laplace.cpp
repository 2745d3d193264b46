#include "modes/laplace.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/numerics.hpp"

namespace pemc::modes {

Matrix finite_difference_hessian(const targets::Target& f, ConstVectorRef x, double step) {
  const auto d = x.size();
  Matrix h(d, d);
  Vector xp = x, gp(d), gm(d);
  for (Eigen::Index i = 0; i < d; ++i) {
    const double hi = step * std::max(1.0, std::fabs(x[i]));
    xp[i] = x[i] + hi;
    f.potential_and_gradient(xp, gp);
    xp[i] = x[i] - hi;
    f.potential_and_gradient(xp, gm);
    xp[i] = x[i];
    h.col(i) = (gp - gm) / (2.0 * hi);
  }
  return 0.5 * (h + h.transpose());
}

LocalGaussianFit laplace_fit(const targets::Target& f, ConstVectorRef mode, double hessian_step) {
  const double phi = f.potential(mode);
  if (!std::isfinite(phi)) throw NumericalError("Laplace fit: the potential is not finite at the mode");
  return laplace_fit_from_hessian(mode, phi, finite_difference_hessian(f, mode, hessian_step));
}

LocalGaussianFit laplace_fit_from_hessian(ConstVectorRef mode, double phi, const Matrix& h) {
  const auto d = mode.size();
  if (!h.allFinite()) throw NumericalError("Laplace fit: the Hessian has non-finite entries");
  Eigen::LLT<Matrix> llt(h);
  if (llt.info() != Eigen::Success)
    throw NumericalError("Laplace fit: the Hessian at the mode is not positive definite");
  const Matrix r = llt.matrixL();
  LocalGaussianFit fit;
  fit.mean = mode;
  // Setup-time only (once per fit): Sigma = H^{-1} from the factor; evaluations use the base's
  // own Cholesky factor of Sigma.
  fit.covariance = llt.solve(Matrix::Identity(d, d));
  fit.covariance = 0.5 * (fit.covariance + fit.covariance.transpose());
  // log ∫ exp(-phi) ≈ -phi(mode) + (d/2) log 2pi - (1/2) log det H, log det H = 2 sum log R_ii.
  fit.log_evidence = -phi + 0.5 * static_cast<double>(d) * kLog2Pi -
                     r.diagonal().array().log().sum();
  return fit;
}

}  // namespace pemc::modes
