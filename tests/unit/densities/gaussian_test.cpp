// densities::Gaussian: psi, its gradient, normalisation, sampling and input checks under both
// evaluations; kShared computes exactly the arithmetic the tempering samplers rely on (division by
// the standard deviations, Eigen's triangular solves, log det summed in index order); the two
// evaluations agree to rounding.
#include "densities/gaussian.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "rng/stream.hpp"
#include "support/random_matrices.hpp"

namespace pemc::densities {
namespace {

constexpr auto kShared = Gaussian::Evaluation::kShared;
constexpr auto kFast = Gaussian::Evaluation::kFast;

using test::random_spd;
using test::random_vector;

Matrix example_lower() {
  Matrix l(3, 3);
  l << 1.5, 0, 0, 0.3, 0.7, 0, -0.4, 0.2, 2.0;
  return l;
}

TEST(Gaussian, PotentialMatchesTheDensityFormula) {
  const int d = 7;
  const Matrix cov = random_spd(d, 1);
  const Vector mu = random_vector(d, 2);
  const auto base = Gaussian::from_covariance(mu, cov);
  for (std::uint64_t s = 0; s < 5; ++s) {
    const Vector x = random_vector(d, 10 + s, 2.0);
    const Vector r = x - mu;
    // Reference via an explicit inverse (fine in a test).
    const double expected = 0.5 * r.dot(cov.inverse() * r) +
                            0.5 * std::log((2.0 * M_PI * cov).determinant());
    EXPECT_NEAR(base.potential(x), expected, 1e-11 * std::max(1.0, std::fabs(expected)));
    Vector g(d);
    EXPECT_NEAR(base.potential_and_gradient(x, g), expected, 1e-11 * std::max(1.0, std::fabs(expected)));
    EXPECT_LT((g - cov.inverse() * r).cwiseAbs().maxCoeff(), 1e-10);
  }
  EXPECT_NEAR(base.log_normaliser(), 0.5 * std::log((2.0 * M_PI * cov).determinant()), 1e-12);
  EXPECT_LT((base.covariance() - cov).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(Gaussian, OneDimensionalDensityIntegratesToOne) {
  const auto base = Gaussian::from_covariance(Vector::Constant(1, 0.3), Matrix::Constant(1, 1, 1.06));
  double s = 0.0;
  const double h = 1e-3;
  Vector x(1);
  for (double v = -15.0; v <= 15.0; v += h) {
    x[0] = v;
    s += std::exp(-base.potential(x)) * h;
  }
  EXPECT_NEAR(s, 1.0, 1e-9);
}

TEST(Gaussian, SamplesHaveTheRightMoments) {
  const int d = 3, n = 40000;
  const Matrix cov = random_spd(d, 6);
  const Vector mu = random_vector(d, 7);
  const auto base = Gaussian::from_covariance(mu, cov);
  rng::Stream stream(1, rng::Domain::kTest, 0, 0);
  Vector x(d), sum = Vector::Zero(d);
  for (int i = 0; i < n; ++i) {
    base.sample(stream, x);
    sum += x;
  }
  const Vector mean = sum / n;
  for (int i = 0; i < d; ++i)
    EXPECT_NEAR(mean[i], mu[i], 4.0 * std::sqrt(cov(i, i) / n)) << i;  // 4 standard errors
}

TEST(Gaussian, RejectsBadInput) {
  EXPECT_THROW(Gaussian::from_covariance(Vector::Zero(2), Matrix::Identity(3, 3)), NumericalError);
  Matrix not_pd(2, 2);
  not_pd << 1.0, 2.0, 2.0, 1.0;
  EXPECT_THROW(Gaussian::from_covariance(Vector::Zero(2), not_pd), NumericalError);
  Matrix asym(2, 2);
  asym << 1.0, 0.1, 0.0, 1.0;
  EXPECT_THROW(Gaussian::from_covariance(Vector::Zero(2), asym), NumericalError);
  Matrix l = Matrix::Identity(2, 2);
  l(1, 1) = 0.0;
  EXPECT_THROW(Gaussian::from_cholesky(Vector::Zero(2), l), NumericalError);
  EXPECT_THROW(Gaussian::from_cholesky(Vector::Zero(0), Matrix(0, 0)), NumericalError);
}

TEST(GaussianShared, DenseMatchesDirectLogDensity) {
  const Vector mean = Vector::LinSpaced(3, -1.0, 2.0);
  const Matrix l = example_lower();
  const auto ref = Gaussian::from_cholesky(mean, l, kShared);
  const Matrix cov = l * l.transpose();
  const Vector x(Vector::LinSpaced(3, 0.3, -0.8));
  const Vector r = x - mean;
  const double direct =
      0.5 * r.dot(cov.inverse() * r) + 0.5 * std::log(cov.determinant()) + 1.5 * kLog2Pi;
  EXPECT_NEAR(ref.potential(x), direct, 1e-12);
  Vector g(3);
  EXPECT_NEAR(ref.potential_and_gradient(x, g), direct, 1e-12);
  const Vector g_direct = cov.inverse() * r;
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(g[i], g_direct[i], 1e-12);
}

TEST(GaussianShared, DiagonalIsNormalisedIn1D) {
  const auto ref = Gaussian::from_variances(Vector::Constant(1, 0.7), Vector::Constant(1, 2.5), kShared);
  // Trapezoid over +-12 sd: the integral of exp(-psi) is 1.
  double sum = 0.0;
  const double h = 1e-3, sd = std::sqrt(2.5);
  Vector x(1);
  for (double t = 0.7 - 12 * sd; t <= 0.7 + 12 * sd; t += h) {
    x[0] = t;
    sum += std::exp(-ref.potential(x)) * h;
  }
  EXPECT_NEAR(sum, 1.0, 1e-6);
}

TEST(GaussianShared, SamplesHaveTheMeanAndCovariance) {
  const Vector mean = Vector::LinSpaced(3, -1.0, 2.0);
  const Matrix l = example_lower();
  const auto ref = Gaussian::from_cholesky(mean, l, kShared);
  rng::Stream s(7, rng::Domain::kTest, 0, 0);
  const int n = 20000;
  Vector sum = Vector::Zero(3);
  Matrix sum2 = Matrix::Zero(3, 3);
  Vector x(3);
  for (int i = 0; i < n; ++i) {
    ref.sample(s, x);
    sum += x;
    sum2 += (x - mean) * (x - mean).transpose();
  }
  const Matrix cov = l * l.transpose();
  for (int i = 0; i < 3; ++i) {
    // 5 standard errors of the sample mean.
    EXPECT_NEAR(sum[i] / n, mean[i], 5 * std::sqrt(cov(i, i) / n));
    // Var of (x_i - m_i)^2 is 2 cov_ii^2 for a Gaussian.
    EXPECT_NEAR(sum2(i, i) / n, cov(i, i), 5 * std::sqrt(2.0 / n) * cov(i, i));
  }
}

TEST(Gaussian, RejectsBadVariancesAndFactors) {
  EXPECT_THROW(Gaussian::from_variances(Vector::Zero(2), Vector::Constant(2, -1.0)), NumericalError);
  EXPECT_THROW(Gaussian::from_variances(Vector::Zero(2), Vector::Ones(3)), NumericalError);
  Matrix l = example_lower();
  l(1, 1) = 0.0;
  EXPECT_THROW(Gaussian::from_cholesky(Vector::Zero(3), l, kShared), NumericalError);
}

// kShared's diagonal path, written out: the bits the tempering samplers' results depend on.
TEST(GaussianShared, DiagonalIsDivisionByTheStandardDeviations) {
  const int d = 5;
  const Vector mean = random_vector(d, 30);
  const Vector variance = random_vector(d, 31).array().square() + 0.1;
  const auto g = Gaussian::from_variances(mean, variance, kShared);
  const Vector sd = variance.array().sqrt();
  double log_det = 0.0;
  for (int i = 0; i < d; ++i) log_det += std::log(sd[i]);
  const double log_norm = log_det + 0.5 * static_cast<double>(d) * kLog2Pi;
  EXPECT_EQ(g.log_normaliser(), log_norm);
  Vector grad(d);
  for (std::uint64_t s = 0; s < 5; ++s) {
    const Vector x = random_vector(d, 40 + s, 2.0);
    const Vector z = (x - mean).array() / sd.array();
    const double psi = 0.5 * z.squaredNorm() + log_norm;
    EXPECT_EQ(g.potential(x), psi);
    EXPECT_EQ(g.potential_and_gradient(x, grad), psi);
    const Vector expected_grad = z.array() / sd.array();
    for (int i = 0; i < d; ++i) EXPECT_EQ(grad[i], expected_grad[i]) << i;
  }
}

// kShared's dense path, written out with Eigen's solves; a diagonal factor (which takes the
// division path) gives the solves' numbers too.
void expect_eigen_solves(const Matrix& lower, const Vector& mean) {
  const int d = static_cast<int>(mean.size());
  const auto g = Gaussian::from_cholesky(mean, lower, kShared);
  double log_det = 0.0;
  for (int i = 0; i < d; ++i) log_det += std::log(lower(i, i));
  const double log_norm = log_det + 0.5 * static_cast<double>(d) * kLog2Pi;
  Vector grad(d);
  for (std::uint64_t s = 0; s < 5; ++s) {
    const Vector x = random_vector(d, 60 + s, 2.0);
    Vector z = x - mean;
    lower.triangularView<Eigen::Lower>().solveInPlace(z);
    const double psi = 0.5 * z.squaredNorm() + log_norm;
    Vector expected_grad = z;
    lower.triangularView<Eigen::Lower>().transpose().solveInPlace(expected_grad);
    EXPECT_EQ(g.potential_and_gradient(x, grad), psi);
    for (int i = 0; i < d; ++i) EXPECT_EQ(grad[i], expected_grad[i]) << i;
  }
}

TEST(GaussianShared, DenseAndDiagonalAreEigensTriangularSolves) {
  const int d = 9;
  const Matrix lower = random_spd(d, 50).llt().matrixL();
  expect_eigen_solves(lower, random_vector(d, 51));
  expect_eigen_solves(Matrix(lower.diagonal().asDiagonal()), random_vector(d, 52));
}

// Both evaluations of one density agree to rounding, dense and diagonal, including sizes that take
// kFast's AVX2 products (d >= 4) and its blocked remainder loops.
TEST(Gaussian, EvaluationsAgreeToRounding) {
  for (int d : {1, 3, 4, 7, 27, 40}) {
    for (bool diagonal : {false, true}) {
      Matrix lower = random_spd(d, 70 + d).llt().matrixL();
      if (diagonal) lower = Matrix(lower.diagonal().asDiagonal());
      const auto fast = Gaussian::from_cholesky(random_vector(d, 80 + d), lower, kFast);
      const auto shared = fast.with_evaluation(kShared);
      EXPECT_EQ(shared.evaluation(), kShared);
      EXPECT_EQ(shared.mean(), fast.mean());
      EXPECT_EQ(shared.cholesky(), fast.cholesky());
      Vector g_fast(d), g_shared(d);
      for (std::uint64_t s = 0; s < 3; ++s) {
        const Vector x = random_vector(d, 90 + s, 2.0) + fast.mean();
        const double p_fast = fast.potential_and_gradient(x, g_fast);
        const double p_shared = shared.potential_and_gradient(x, g_shared);
        EXPECT_NEAR(p_fast, p_shared, 1e-12 * std::max(1.0, std::fabs(p_shared))) << d;
        EXPECT_LT((g_fast - g_shared).cwiseAbs().maxCoeff(), 1e-10 * (1.0 + g_shared.cwiseAbs().maxCoeff()))
            << d;
      }
    }
  }
}

}  // namespace
}  // namespace pemc::densities
