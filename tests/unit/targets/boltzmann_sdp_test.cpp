// The min lambda_max diagonal SDP and the relaxation factor.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "core/number_file.hpp"
#include "core/error.hpp"
#include "rng/stream.hpp"
#include "targets/boltzmann_machine.hpp"
#include "targets/sdp_diagonal.hpp"

namespace pemc::targets {
namespace {

Vector eigenvalues(const Matrix& W, const Vector& D) {
  Matrix A = W;
  A.diagonal() += D;
  return Eigen::SelfAdjointEigenSolver<Matrix>(A, Eigen::EigenvaluesOnly).eigenvalues();
}

// lambda_max of the feasible point obtained from any D by moving onto the PSD cone.
double spread(const Matrix& W, const Vector& D) {
  const Vector ev = eigenvalues(W, D);
  return ev.maxCoeff() - ev.minCoeff();
}

TEST(MinMaxEigenDiagonal, TwoUnitsClosedForm) {
  // W = [[0, w], [w, 0]]: the optimum is D = |w| (1, 1), W + D = |w| [[1, ±1], [±1, 1]],
  // lambda_max = 2|w|.
  for (double w : {0.7, -2.5}) {
    Matrix W(2, 2);
    W << 0, w, w, 0;
    const MinMaxEigenResult r = solve_min_max_eigen_diagonal_report(W);
    EXPECT_NEAR(r.lambda_max, 2 * std::fabs(w), 1e-8);
    EXPECT_NEAR(r.d[0], std::fabs(w), 1e-6);
    EXPECT_NEAR(r.d[1], std::fabs(w), 1e-6);
    EXPECT_GE(eigenvalues(W, r.d).minCoeff(), -1e-12);
    const Matrix Q = relaxation_factor(W, r.d);
    EXPECT_EQ(Q.cols(), 1);
  }
}

TEST(MinMaxEigenDiagonal, FeasibleAndBetterThanSimpleChoicesAndLocallyOptimal) {
  for (int n : {3, 5, 8, 15, 30}) {
    for (std::uint64_t seed : {1u, 2u}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " seed " << seed);
      const BoltzmannMachine m = generate_boltzmann_machine(seed, n);
      const MinMaxEigenResult r = solve_min_max_eigen_diagonal_report(m.W);
      const Vector ev = eigenvalues(m.W, r.d);
      const double scale = std::max(1.0, ev.maxCoeff());
      // PSD on the boundary, and the reported objective is lambda_max.
      EXPECT_GE(ev.minCoeff() + 1e-12 * scale, -1e-9);
      EXPECT_LE(ev.minCoeff(), 1e-9 * scale);
      EXPECT_NEAR(r.lambda_max, ev.maxCoeff(), 1e-12 * scale);
      // Certified: objective - lower bound <= tolerance.
      EXPECT_LE(r.gap_bound, 1e-9 * scale);
      EXPECT_LE(r.lower_bound, r.lambda_max);
      // Simple feasible choices: uniform shift by -lambda_min(W); diagonal dominance.
      const Vector wev = eigenvalues(m.W, Vector::Zero(n));
      EXPECT_LE(r.lambda_max, wev.maxCoeff() - wev.minCoeff() + 1e-12);
      const Vector dominance = m.W.cwiseAbs().rowwise().sum();
      EXPECT_LE(r.lambda_max, eigenvalues(m.W, dominance).maxCoeff() + 1e-12);
      // No random perturbation (moved back onto the cone) does better than the certified gap.
      rng::Stream s(seed, rng::Domain::kTest, static_cast<std::uint64_t>(n), 0);
      for (int k = 0; k < 50; ++k) {
        Vector u(n);
        s.fill_normal(u);
        for (double eps : {1e-2, 1e-4}) {
          EXPECT_GE(spread(m.W, r.d + eps * u), r.lambda_max - r.gap_bound - 1e-12)
              << "perturbation " << k << " eps " << eps;
        }
      }
      // The lower bound is a true bound: the objective at the shipped-style uniform shift and at
      // the solution both exceed it.
      EXPECT_GE(wev.maxCoeff() - wev.minCoeff(), r.lower_bound);
    }
  }
}

TEST(MinMaxEigenDiagonal, ShippedPe28MatchesShippedD) {
  const std::filesystem::path dir = std::filesystem::path(PEMC_SHARED_DIR) / "data/boltzmann-pe28";
  const BoltzmannMachine m = load_boltzmann_machine(dir / "W.txt", dir / "b.txt");
  const Vector d_ship =
      read_number_matrix(dir / "D.txt", 1, "D file").row(0).transpose();
  const Vector ev_ship = eigenvalues(m.W, d_ship);
  const MinMaxEigenResult r = solve_min_max_eigen_diagonal_report(m.W);
  // The shipped D is accurate to ~1.5e-4 (its lambda_min is -1.2e-3): agree to 1e-3 relative...
  EXPECT_NEAR(r.lambda_max, ev_ship.maxCoeff(), 1e-3 * ev_ship.maxCoeff());
  // ... and do no worse than the shipped D moved onto the PSD cone (a feasible point).
  EXPECT_LE(r.lambda_max, ev_ship.maxCoeff() - ev_ship.minCoeff());
  EXPECT_GE(eigenvalues(m.W, r.d).minCoeff(), -1e-9);
  // At the optimum W + diag(D) has a 4-dimensional null space: d = 24 (the shipped Q has 27
  // columns because the shipped D is not at the optimum).
  const Matrix Q = relaxation_factor(m.W, r.d);
  EXPECT_EQ(Q.rows(), 28);
  EXPECT_EQ(Q.cols(), 24);
}

TEST(RelaxationFactor, ReproducesTheMatrixAndDropsNullDirections) {
  const BoltzmannMachine m = generate_boltzmann_machine(7, 12);
  const Vector D = solve_min_max_eigen_diagonal(m.W);
  const Matrix Q = relaxation_factor(m.W, D);
  Matrix A = m.W;
  A.diagonal() += D;
  const double lmax = eigenvalues(m.W, D).maxCoeff();
  EXPECT_LT(Q.cols(), 12);  // the optimum lies on the cone's boundary
  EXPECT_LE((Q * Q.transpose() - A).cwiseAbs().maxCoeff(), 1e-7 * lmax);
  // Columns in decreasing norm (eigenvalue) order, each with a positive largest entry.
  for (Eigen::Index j = 1; j < Q.cols(); ++j)
    EXPECT_GE(Q.col(j - 1).squaredNorm(), Q.col(j).squaredNorm() * (1 - 1e-12));
  for (Eigen::Index j = 0; j < Q.cols(); ++j) {
    Eigen::Index arg = 0;
    Q.col(j).cwiseAbs().maxCoeff(&arg);
    EXPECT_GT(Q(arg, j), 0.0);
  }
  // A full-rank PSD matrix keeps every direction.
  const Vector big = D.array() + 1.0;
  EXPECT_EQ(relaxation_factor(m.W, big).cols(), 12);
}

TEST(RelaxationFactor, RejectsNonPsdAndBadInput) {
  Matrix W(2, 2);
  W << 0, 1, 1, 0;
  try {
    relaxation_factor(W, Vector::Constant(2, 0.5));  // eigenvalues -0.5, 1.5
    FAIL() << "no throw";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("not positive semi-definite"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(relaxation_factor(W, Vector::Zero(3)), NumericalError);
  Matrix asym = W;
  asym(0, 1) = 2;
  EXPECT_THROW(relaxation_factor(asym, Vector::Ones(2)), NumericalError);
  EXPECT_THROW(solve_min_max_eigen_diagonal(asym), NumericalError);
  EXPECT_THROW(solve_min_max_eigen_diagonal(Matrix::Zero(2, 3)), NumericalError);
}

}  // namespace
}  // namespace pemc::targets
