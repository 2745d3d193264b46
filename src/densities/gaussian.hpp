#pragma once
// A normalised Gaussian density exp(-psi(x)) = N(x; mu, Sigma) (density.hpp), held by the lower
// Cholesky factor L of Sigma = L L': the reference of a tempering path and the base density of
// continuous tempering (Graham & Storkey 2017, eqs. (4), (14) and Section 6):
//
//   psi(x)      = 0.5 |r|^2 + sum_i log L_ii + (d/2) log 2pi,   r = L^{-1} (x - mu)
//   grad psi(x) = L^{-T} r = Sigma^{-1} (x - mu)
//
// No inverse of Sigma is ever formed.
//
// The two evaluations (density.hpp: who may share an object) compute the same psi and gradient but
// round differently (order of sums, division by L_ii or multiplication by 1 / L_ii, substitution or
// products); each sampler family keeps one so that its runs reproduce bit for bit:
//  - kShared: Eigen's triangular solves, or for a diagonal factor division by the standard
//    deviations (the same numbers as the solves, in O(d)); scratch is thread-local, so one object
//    may be shared by threads (the tempering samplers' references; the in-process test groups
//    share them).
//  - kFast: the blocked solves or AVX2 inverse-factor products of gaussian_fast.cpp; scratch is
//    per object, so an object serves one thread at a time (the extended samplers' bases, on the hot
//    path of every leapfrog step).
#include <memory>
#include <span>
#include <string>

#include "core/types.hpp"
#include "densities/density.hpp"
#include "rng/stream.hpp"

namespace pemc::densities {

class Gaussian final : public Density {
 public:
  // Sigma must be symmetric positive definite (NumericalError otherwise: not square, wrong size,
  // asymmetric beyond 1e-9 relative, not finite, or the Cholesky factorisation fails).
  static Gaussian from_covariance(Vector mean, const Matrix& covariance,
                                  Evaluation evaluation = Evaluation::kFast);
  // L must be lower triangular (the strict upper part is ignored) with finite entries and L_ii > 0
  // (NumericalError otherwise).
  static Gaussian from_cholesky(Vector mean, Matrix lower, Evaluation evaluation = Evaluation::kFast);
  // Sigma = diag(variance), entries finite and > 0 (NumericalError otherwise).
  static Gaussian from_variances(Vector mean, const Vector& variance,
                                 Evaluation evaluation = Evaluation::kFast);
  // The same density evaluated the other way.
  Gaussian with_evaluation(Evaluation evaluation) const;

  int dim() const override { return static_cast<int>(mean_.size()); }
  // psi(x) = -log N(x; mu, Sigma), every constant included (so exp(-psi) integrates to 1).
  double potential(ConstVectorRef x) const override;
  // Same value; writes grad psi(x) = Sigma^{-1} (x - mu) into grad.
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;
  // Density::potential_and_mixed_gradient's bits, without a separate pass for the mixing: the AVX2
  // path mixes in the last pass over the factor.
  double potential_and_mixed_gradient(std::span<const double> x,
                                      const MixedGradient& m) const override;
  // x = mu + L z, z ~ N(0, I): d normals from `stream`.
  void sample(rng::Stream& stream, VectorRef out) const override;

  const Vector& mean() const override { return mean_; }
  Matrix covariance() const override;
  // "Gaussian (d = 3, diagonal covariance)" or "... dense covariance)".
  std::string describe() const override;
  Evaluation evaluation() const override { return evaluation_; }
  std::shared_ptr<const Density> copy_with_evaluation(Evaluation evaluation) const override;

  const Matrix& cholesky() const { return chol_; }
  // log of the normaliser: (d/2) log 2pi + sum_i log L_ii.
  double log_normaliser() const { return log_norm_; }

 private:
  Gaussian(Vector mean, Matrix lower, Evaluation evaluation);
  void prepare_fast();

  // kShared: psi(x), leaving z = L^{-1}(x - mu).
  double shared_whitened(ConstVectorRef x, Vector& z) const;
  double shared_potential_and_gradient(ConstVectorRef x, VectorRef grad) const;

  // kFast (gaussian_fast.cpp).
  // r <- L^{-1} r in place.
  void forward_solve(Vector& r) const;
  // r <- L^{-T} r in place.
  void backward_solve(Vector& r) const;
  // psi(x), leaving L^{-T} L^{-1} (x - mu) in r_ (the substitution path).
  double solves(ConstVectorRef x) const;
  double fast_potential(ConstVectorRef x) const;
  double fast_potential_and_gradient(ConstVectorRef x, VectorRef grad) const;
  double fast_potential_and_mixed_gradient(std::span<const double> x, const MixedGradient& m) const;
  // The AVX2 product path: psi(x), and grad psi(x) to `store` (PlainStore or MixedStore in
  // gaussian_fast.cpp) unless it is null.
  template <class Store>
  double products(const double* x, const Store* store) const;

  Vector mean_;
  Matrix chol_;          // L: lower triangular, column-major
  Evaluation evaluation_ = Evaluation::kFast;
  bool diagonal_ = false;
  Vector sd_;            // L_ii (kShared's diagonal path divides by them)
  double log_norm_ = 0.0;
  // kFast only.
  Matrix chol_t_;        // L', column-major (column i = row i of L): contiguous backward updates
  Vector inv_diag_;      // 1 / L_ii
  // The AVX2 product path (gaussian_fast.cpp): T = L^{-1} and T' column-major, zero-padded to a
  // multiple of 4 rows and columns, and zero-padded scratch vectors.
  bool products_ = false;
  int padded_ = 0;
  Matrix inv_chol_, inv_chol_t_;
  mutable Vector y_pad_, r_pad_, g_pad_;
  mutable Vector r_;     // scratch
};

}  // namespace pemc::densities
