#pragma once
// The normalised reference density of a tempering path (CT paper eq. (4): psi with
// ∫ exp(-psi) = 1): a Gaussian N(mean, L L') with L lower triangular (dense) or diagonal,
//     psi(x) = 0.5 |L^{-1}(x - mean)|^2 + sum_i log L_ii + (d/2) log(2 pi).
// Normalisation matters: with beta_0 = 0 the tempering estimators (stepping stone, ST's
// Rao-Blackwellised ratio, AIS weights) estimate Z itself rather than Z / Z(beta_0).
#include <limits>

#include "core/types.hpp"
#include "rng/stream.hpp"

namespace pemc::tempering {

class GaussianReference {
 public:
  // Diagonal covariance diag(variance) (entries > 0).
  static GaussianReference diagonal(Vector mean, const Vector& variance);
  // Dense covariance L L' from its lower Cholesky factor (positive diagonal; the strict upper
  // triangle is ignored).
  static GaussianReference cholesky(Vector mean, const Matrix& lower);

  int dim() const { return static_cast<int>(mean_.size()); }
  double psi(ConstVectorRef x) const;
  // psi(x), writing d psi / dx into grad.
  double psi_and_gradient(ConstVectorRef x, VectorRef grad) const;
  // x = mean + L z, z ~ N(0, I) from `stream`.
  void sample(rng::Stream& stream, VectorRef x) const;
  const Vector& mean() const { return mean_; }
  Matrix covariance() const;
  // The log Z approximation that came with a fitted reference (CT paper eq. (25)); NaN otherwise.
  // Recorded only (EstimatesSnapshot.base), for normalising errors as in the paper's Figure 2.
  double log_zeta() const { return log_zeta_; }
  void set_log_zeta(double log_zeta) { log_zeta_ = log_zeta; }

 private:
  GaussianReference() = default;
  // psi(x), leaving z = L^{-1}(x - mean).
  double whitened(ConstVectorRef x, Vector& z) const;
  Vector mean_;
  bool dense_ = false;
  Vector sd_;       // diagonal case
  Matrix lower_;    // dense case
  double log_norm_ = 0.0;  // sum log L_ii + d/2 log 2 pi
  double log_zeta_ = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace pemc::tempering
