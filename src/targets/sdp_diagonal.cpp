#include "targets/sdp_diagonal.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "core/error.hpp"

namespace pemc::targets {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

void check_square_symmetric(const Matrix& W, const char* who) {
  if (W.rows() != W.cols() || W.rows() < 1) {
    std::ostringstream os;
    os << who << ": W must be a non-empty square matrix, got " << W.rows() << "x" << W.cols();
    throw NumericalError(os.str());
  }
  if (!W.allFinite()) throw NumericalError(std::string(who) + ": W has a non-finite entry");
  const double scale = std::max(1.0, W.cwiseAbs().maxCoeff());
  const double asym = (W - W.transpose()).cwiseAbs().maxCoeff();
  if (asym > 1e-9 * scale) {
    std::ostringstream os;
    os << who << ": W is not symmetric (max |W_ij - W_ji| = " << asym << ")";
    throw NumericalError(os.str());
  }
}

// The barrier's state at (D, t): eigenvalues lambda of A = W + diag(D) (B = t I - A shares its
// eigenvectors V, with eigenvalues t - lambda).
struct BarrierPoint {
  Vector lambda;
  Matrix V;
  bool feasible = false;  // lambda > 0 and t - lambda > 0
  double log_det_sum = 0.0;  // log det A + log det B
};

BarrierPoint evaluate(const Matrix& W, const Vector& D, double t) {
  Matrix A = W;
  A.diagonal() += D;
  Eigen::SelfAdjointEigenSolver<Matrix> es(A);
  BarrierPoint p;
  if (es.info() != Eigen::Success) return p;
  p.lambda = es.eigenvalues();
  p.V = es.eigenvectors();
  const double lo = p.lambda.minCoeff();
  const double hi = p.lambda.maxCoeff();
  p.feasible = lo > 0.0 && t - hi > 0.0 && std::isfinite(lo) && std::isfinite(hi);
  if (p.feasible)
    p.log_det_sum = p.lambda.array().log().sum() + (t - p.lambda.array()).log().sum();
  return p;
}

}  // namespace

MinMaxEigenResult solve_min_max_eigen_diagonal_report(const Matrix& W_in,
                                                      const MinMaxEigenOptions& options) {
  check_square_symmetric(W_in, "solve_min_max_eigen_diagonal");
  if (!(options.relative_tolerance > 0.0) || !(options.barrier_growth > 1.0) ||
      options.max_newton_steps < 1)
    throw NumericalError(
        "solve_min_max_eigen_diagonal: need relative_tolerance > 0, barrier_growth > 1, "
        "max_newton_steps >= 1");
  const Matrix W = 0.5 * (W_in + W_in.transpose());
  const Eigen::Index n = W.rows();

  MinMaxEigenResult result;
  Eigen::SelfAdjointEigenSolver<Matrix> w_eig(W, Eigen::EigenvaluesOnly);
  const double w_min = w_eig.eigenvalues().minCoeff();
  const double w_max = w_eig.eigenvalues().maxCoeff();
  Matrix off = W;
  off.diagonal().setZero();
  if (off.cwiseAbs().maxCoeff() == 0.0) {
    // Diagonal W: D = -diag(W) gives the zero matrix, lambda_max = 0, which is optimal.
    result.d = -W.diagonal();
    result.lower_bound = 0.0;
    return result;
  }

  // Strictly feasible start: A = W + (c - lambda_min(W)) I has spectrum in [c, c + spread].
  const double spread = w_max - w_min;
  const double c = 0.25 * spread;
  Vector D = Vector::Constant(n, c - w_min);
  double t = spread + 2.0 * c;
  // Start where the central path's duality gap 2n / tau (two n x n log-det barriers) is about t.
  double tau = 2.0 * static_cast<double>(n) / t;

  BarrierPoint p = evaluate(W, D, t);
  if (!p.feasible) throw NumericalError("solve_min_max_eigen_diagonal: infeasible start");

  const Eigen::Index nv = n + 1;  // variables (D_1..D_n, t)
  Vector g(nv), step(nv), Dtrial(n);
  Matrix H(nv, nv), Ainv(n, n), Binv(n, n);
  int steps = 0;
  double best_upper = kInfinity;
  double previous_gap = kInfinity;
  while (true) {
    // Centring: damped Newton on tau t - log det A - log det B.
    bool centred = false;
    for (int inner = 0; inner < options.max_steps_per_centring; ++inner) {
      if (steps >= options.max_newton_steps) break;
      const Vector inv_a = p.lambda.cwiseInverse();
      const Vector inv_b = (t - p.lambda.array()).inverse().matrix();
      Ainv.noalias() = p.V * inv_a.asDiagonal() * p.V.transpose();
      Binv.noalias() = p.V * inv_b.asDiagonal() * p.V.transpose();
      const Vector binv2_diag =
          (p.V.array().square().matrix() * inv_b.array().square().matrix());  // diag(B^-2)
      // d/dD_i (-log det A) = -(A^-1)_ii; d/dD_i (-log det B) = +(B^-1)_ii; d/dt = -tr(B^-1).
      g.head(n) = Binv.diagonal() - Ainv.diagonal();
      g[n] = tau - inv_b.sum();
      // Hessian of -log det F(y), F affine: tr(F^-1 F_k F^-1 F_l).
      H.topLeftCorner(n, n) = Ainv.array().square().matrix() + Binv.array().square().matrix();
      H.col(n).head(n) = -binv2_diag;
      H.row(n).head(n) = -binv2_diag.transpose();
      H(n, n) = inv_b.array().square().sum();
      // Jacobi scaling before the factorisation: the entries of H span many orders of magnitude
      // near the optimum (A and B become nearly singular).
      const Vector js = H.diagonal().cwiseSqrt().cwiseInverse();
      const Matrix Hs = js.asDiagonal() * H * js.asDiagonal();
      Eigen::LDLT<Matrix> ldlt(Hs);
      step = js.asDiagonal() * ldlt.solve(-(js.asDiagonal() * g));
      if (ldlt.info() != Eigen::Success || !step.allFinite()) break;
      const double decrement2 = -g.dot(step);
      ++steps;
      if (!(decrement2 > options.centring_tolerance)) {
        centred = true;
        break;
      }
      // Damped Newton step 1 / (1 + lambda) for the self-concordant barrier objective: it stays in
      // the domain and decreases the objective by at least lambda - log(1 + lambda) (Nesterov &
      // Nemirovski), so no function values are compared; these lose all accuracy near the optimum
      // (log of eigenvalues ~1e-11 known to ~1e-15 absolute). Halving only guards against rounding.
      double s = 1.0 / (1.0 + std::sqrt(decrement2));
      bool moved = false;
      for (int tries = 0; tries < 60; ++tries, s *= 0.5) {
        Dtrial = D + s * step.head(n);
        const double t_trial = t + s * step[n];
        BarrierPoint q = evaluate(W, Dtrial, t_trial);
        if (q.feasible) {
          D = Dtrial;
          t = t_trial;
          p = std::move(q);
          moved = true;
          break;
        }
      }
      if (!moved) break;
    }
    ++result.centrings;

    // Certificate. Primal: D - lambda_min(A) is feasible with objective spread(A). Dual (from the
    // central-path relation Y = B^-1 / tau, Z = A^-1 / tau): for any Y, Z ⪰ 0 with tr Y = 1 and
    // diag Z = diag Y, every feasible D has lambda_max(W + D) >= <Y, W + D> >= <Y, W + D> - <Z, W + D>
    // = <Y - Z, W>. Y is B^-1 scaled to unit trace and Z = S A^-1 S with S diagonal fixing the
    // diagonal, so the bound holds whether or not the centring converged.
    const double upper = p.lambda.maxCoeff() - p.lambda.minCoeff();
    if (upper < best_upper) {
      best_upper = upper;
      result.d = D.array() - p.lambda.minCoeff();
    }
    {
      const Vector inv_a = p.lambda.cwiseInverse();
      const Vector inv_b = (t - p.lambda.array()).inverse().matrix();
      Matrix Y = p.V * inv_b.asDiagonal() * p.V.transpose();
      Y /= Y.trace();
      Matrix Z = p.V * inv_a.asDiagonal() * p.V.transpose();
      const Vector scale = (Y.diagonal().array() / Z.diagonal().array()).sqrt().matrix();
      Z = scale.asDiagonal() * Z * scale.asDiagonal();
      const double lower = ((Y - Z).cwiseProduct(W)).sum();
      result.lower_bound = std::max(result.lower_bound, lower);
    }
    result.gap_bound = best_upper - result.lower_bound;
    if (result.gap_bound <= options.relative_tolerance * std::max(1.0, std::fabs(best_upper))) break;
    // Rounding limits how far tau can usefully grow: give up when the certified gap stops
    // improving. An unfinished centring is resumed at the same tau.
    const bool stuck = result.gap_bound >= previous_gap;
    previous_gap = result.gap_bound;
    if (stuck || steps >= options.max_newton_steps) {
      std::ostringstream os;
      os << "solve_min_max_eigen_diagonal: stalled after " << steps << " Newton steps with "
         << "certified gap " << result.gap_bound << " > relative tolerance "
         << options.relative_tolerance << " (objective " << best_upper << ")";
      throw NumericalError(os.str());
    }
    if (centred) tau *= options.barrier_growth;
  }

  Matrix A = W;
  A.diagonal() += result.d;
  Eigen::SelfAdjointEigenSolver<Matrix> fin(A, Eigen::EigenvaluesOnly);
  result.lambda_max = fin.eigenvalues().maxCoeff();
  result.newton_steps = steps;
  return result;
}

Vector solve_min_max_eigen_diagonal(const Matrix& W, const MinMaxEigenOptions& options) {
  return solve_min_max_eigen_diagonal_report(W, options).d;
}

Matrix relaxation_factor(const Matrix& W, const Vector& D, double null_tol) {
  check_square_symmetric(W, "relaxation_factor");
  if (D.size() != W.rows() || !D.allFinite())
    throw NumericalError("relaxation_factor: D must have " + std::to_string(W.rows()) +
                         " finite entries");
  if (!(null_tol >= 0.0 && null_tol < 1.0))
    throw NumericalError("relaxation_factor: null_tol must be in [0, 1)");
  Matrix A = 0.5 * (W + W.transpose());
  A.diagonal() += D;
  Eigen::SelfAdjointEigenSolver<Matrix> es(A);
  if (es.info() != Eigen::Success)
    throw NumericalError("relaxation_factor: eigendecomposition of W + diag(D) failed");
  const Vector& lam = es.eigenvalues();  // ascending
  const double lam_max = lam.maxCoeff();
  if (!(lam_max > 0.0))
    throw NumericalError("relaxation_factor: W + diag(D) has no positive eigenvalue");
  const double threshold = null_tol * lam_max;
  if (lam.minCoeff() < -threshold) {
    std::ostringstream os;
    os << "relaxation_factor: W + diag(D) is not positive semi-definite: lambda_min = "
       << lam.minCoeff() << " < -null_tol * lambda_max = " << -threshold;
    throw NumericalError(os.str());
  }
  Eigen::Index keep = 0;
  for (Eigen::Index i = 0; i < lam.size(); ++i)
    if (lam[i] > threshold) ++keep;
  Matrix Q(A.rows(), keep);
  for (Eigen::Index j = 0; j < keep; ++j) {
    const Eigen::Index i = lam.size() - 1 - j;  // decreasing eigenvalue order
    Vector v = es.eigenvectors().col(i);
    Eigen::Index arg = 0;
    v.cwiseAbs().maxCoeff(&arg);
    if (v[arg] < 0) v = -v;
    Q.col(j) = std::sqrt(lam[i]) * v;
  }
  return Q;
}

}  // namespace pemc::targets
