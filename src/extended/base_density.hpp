#pragma once
// The normalised Gaussian base density exp(-psi(x)) of continuous tempering (Graham & Storkey
// 2017, eq. (14) and Section 6), held by its lower Cholesky factor L (Sigma = L L'):
//
//   psi(x)      = 0.5 |r|^2 + sum_i log L_ii + (d/2) log 2pi,   r = L^{-1} (x - mu)
//   grad psi(x) = L^{-T} r = Sigma^{-1} (x - mu)
//
// Each evaluation is two triangular solves, O(d^2); no inverse is ever formed. The solves are
// written out over 4-column blocks of the column-major factor L (forward) and of a column-major copy
// of L' (backward): a serial 4 x 4 triangular step, then one pass over the remaining rows with four
// independent multiply-adds per row (contiguous, no reduction). At d ~ 30-100 this is 2-3x faster
// than Eigen's general triangular solver, whose dispatch dominates at these sizes; the base's cost
// is what separates the extended Hamiltonian from the bare target gradient. A diagonal factor takes
// an O(d) path.
//
// Even blocked, a substitution is a chain of dependent steps (~100 ns per solve at d = 27, a sixth
// of a Boltzmann gradient). On CPUs with AVX2/FMA and a well-conditioned factor (d eps cond(L)
// <= 1e-10, estimated at construction) the two solves are instead two triangular
// matrix-vector products with T = L^{-1}, formed once from L by substitution:
// r = T (x - mu), grad = T' r, whose rows are independent and vectorise fully (~4x faster). The
// triangular factor's inverse, never Sigma^{-1}: each product is O(d^2) like the solves, and the
// condition check bounds the difference from substitution far below the potential's rounding.
// For d <= 32 one call does x - mu, both products and |r|^2 (in Eigen's summation order, so the
// bits are those of the Eigen expressions) on raw pointers, and continuous tempering's
// potential_and_mixed_gradient folds beta grad phi + (1 - beta) grad psi into the last product's
// stores.
#include <filesystem>
#include <span>
#include <string>

#include "core/types.hpp"
#include "rng/stream.hpp"

namespace pemc::extended {

class GaussianBase {
 public:
  // Sigma must be symmetric positive definite (NumericalError otherwise: not square, wrong size,
  // asymmetric beyond 1e-9 relative, not finite, or the Cholesky factorisation fails).
  static GaussianBase from_covariance(Vector mean, const Matrix& covariance);
  // L must be lower triangular (the strict upper part is ignored) with finite entries and L_ii > 0.
  static GaussianBase from_cholesky(Vector mean, Matrix lower);

  int dim() const { return static_cast<int>(mean_.size()); }
  // -log N(x; mu, Sigma), every constant included (so exp(-psi) integrates to 1).
  double potential(ConstVectorRef x) const;
  // Same value; writes Sigma^{-1} (x - mu) into grad.
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const;
  // The tempered gradient's mixing out = w_phi grad_phi + w_psi grad psi(x) (continuous tempering's
  // beta grad phi + (1 - beta) grad psi), without a separate pass for it: the AVX2 path mixes in
  // the last pass over the factor. Each entry is rounded exactly as that expression in Eigen (two
  // products, one sum), so the result is bit-identical to potential_and_gradient followed by it.
  struct MixedGradient {
    double w_phi = 0.0, w_psi = 1.0;
    std::span<const double> grad_phi;  // d entries
    std::span<double> out;             // d entries; may be grad_phi's storage (read before written)
    std::span<double> grad_psi;        // empty, or d entries that receive grad psi(x) too
  };
  // psi(x), the same value as potential(x), for x of d entries. Throws NumericalError for spans of
  // the wrong size.
  double potential_and_mixed_gradient(std::span<const double> x, const MixedGradient& m) const;
  // x = mu + L z, z ~ N(0, I).
  void sample(rng::Stream& stream, VectorRef out) const;

  const Vector& mean() const { return mean_; }
  const Matrix& cholesky() const { return chol_; }
  Matrix covariance() const { return chol_ * chol_.transpose(); }
  // log of the Gaussian's normaliser: (d/2) log 2pi + sum_i log L_ii.
  double log_normaliser() const { return log_norm_; }

 private:
  GaussianBase(Vector mean, Matrix lower);
  // r <- L^{-1} r in place.
  void forward_solve(Vector& r) const;
  // r <- L^{-T} r in place.
  void backward_solve(Vector& r) const;
  // psi(x), leaving L^{-T} L^{-1} (x - mu) in r_ (the substitution path).
  double solves(ConstVectorRef x) const;
  // The AVX2 product path: psi(x), and grad psi(x) to `store` (PlainStore or MixedStore in the
  // .cpp) unless it is null.
  template <class Store>
  double products(const double* x, const Store* store) const;

  Vector mean_;
  Matrix chol_;          // lower triangular, column-major
  Matrix chol_t_;        // L', column-major (column i = row i of L): contiguous backward updates
  Vector inv_diag_;      // 1 / L_ii
  bool diagonal_ = false;
  // The AVX2 product path (see above): T = L^{-1} and T' column-major, zero-padded to a multiple
  // of 4 rows and columns, and zero-padded scratch vectors.
  bool products_ = false;
  int padded_ = 0;
  Matrix inv_chol_, inv_chol_t_;
  mutable Vector y_pad_, r_pad_, g_pad_;
  double log_norm_ = 0.0;
  mutable Vector r_;     // scratch
};

// A base density and the approximation log zeta to log Z that goes with it (eq. (14)).
struct BaseDensity {
  GaussianBase psi;
  double log_zeta = 0.0;
  std::string description;  // how it was obtained, for logs ("user", "laplace (3 modes)", ...)
};

}  // namespace pemc::extended
