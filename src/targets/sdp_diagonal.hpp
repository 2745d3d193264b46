#pragma once
// The diagonal shift of a Boltzmann machine relaxation (pseudo-extended supplement, Section D;
// CT paper Appendix B, eq. (46)):
//
//     minimise_D  lambda_max(W + diag(D))   subject to   W + diag(D) >= 0 (positive semi-definite),
//
// and the factor Q with Q Q' = W + diag(D) whose rows define the relaxed potential.
#include <limits>

#include "core/types.hpp"

namespace pemc::targets {

struct MinMaxEigenOptions {
  // Stop when the certified gap (objective minus a dual lower bound) is at most
  // relative_tolerance * max(1, objective).
  double relative_tolerance = 1e-9;
  // tau is multiplied by this after each centring (Boyd & Vandenberghe 11.3 suggest 10..20).
  double barrier_growth = 10.0;
  // Newton steps per centring and in total before giving up.
  int max_steps_per_centring = 100;
  // A centring ends when the Newton decrement squared is at most this.
  double centring_tolerance = 1e-8;
  int max_newton_steps = 2000;
};

struct MinMaxEigenResult {
  Vector d;                  // the diagonal; W + diag(d) has lambda_min == 0 (to rounding)
  double lambda_max = 0.0;   // lambda_max(W + diag(d)): the objective
  double lower_bound = -std::numeric_limits<double>::infinity();  // certified: optimum >= this
  double gap_bound = 0.0;    // objective - lower_bound
  int newton_steps = 0;
  int centrings = 0;
};

// Solves the SDP above by a primal log-barrier interior-point method on (D, t):
//     minimise tau * t - log det(W + diag(D)) - log det(t I - W - diag(D))
// with damped Newton steps (analytic gradient; the Hessian's entries are squared entries of the
// inverses, tr(F^-1 F_k F^-1 F_l)) and backtracking that keeps both matrices positive definite,
// for tau = tau_0 * growth^k (Boyd & Vandenberghe, Section 11.3). After each centring:
//   * primal: D - lambda_min(W + diag(D)) lies on the PSD cone's boundary, so it is feasible and
//     its objective is the spread lambda_max - lambda_min (the best such D is returned);
//   * dual: Y = B^-1 / tr(B^-1) and Z = S A^-1 S (S diagonal with diag Z = diag Y) are feasible for
//     the dual, so <Y - Z, W> is a certified lower bound on the optimum (it tends to the optimum
//     along the central path, where Y = B^-1 / tau and Z = A^-1 / tau).
// Stopping rule: objective - lower bound <= relative_tolerance * max(1, objective). W must be square,
// finite and symmetric (W as given, diagonal included, enters W + diag(D)). Throws NumericalError on
// bad input, or if Newton stalls (rounding) before the certified gap reaches the tolerance: about
// 1e-9 relative is reachable in double precision.
MinMaxEigenResult solve_min_max_eigen_diagonal_report(const Matrix& W,
                                                      const MinMaxEigenOptions& options = {});
// Just the diagonal D of solve_min_max_eigen_diagonal_report.
Vector solve_min_max_eigen_diagonal(const Matrix& W, const MinMaxEigenOptions& options = {});

// Q (d_b x d) with Q Q' = W + diag(D), from the eigendecomposition V diag(lambda) V': columns
// sqrt(lambda_i) v_i for the eigenvalues lambda_i > null_tol * lambda_max, in decreasing order of
// lambda_i; each column's largest-magnitude entry is made positive (a deterministic sign).
// Dropped eigenvalues are the numerically null directions, so Q Q' differs from W + diag(D) by at
// most null_tol * lambda_max in spectral norm. Throws NumericalError if W + diag(D) has an
// eigenvalue below -null_tol * lambda_max (not PSD) or has no eigenvalue above the threshold.
Matrix relaxation_factor(const Matrix& W, const Vector& D, double null_tol = 1e-7);

}  // namespace pemc::targets
