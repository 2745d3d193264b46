// enumerate_boltzmann against a direct sum over all states.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "rng/stream.hpp"
#include "targets/boltzmann_enumeration.hpp"

namespace pemc::targets {
namespace {

Matrix random_symmetric(int n, double scale, std::uint64_t seed, bool zero_diagonal = true) {
  rng::Stream s(seed, rng::Domain::kTest, 1, 0);
  Matrix W(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) W(i, j) = W(j, i) = scale * s.normal();
  if (zero_diagonal) W.diagonal().setZero();
  return W;
}

Vector random_vector(int n, double scale, std::uint64_t seed) {
  rng::Stream s(seed, rng::Domain::kTest, 2, 0);
  Vector b(n);
  for (int i = 0; i < n; ++i) b[i] = scale * s.normal();
  return b;
}

// Naive: every state, energy 0.5 s'Ws + s'b computed directly, two passes (max, then sums).
BoltzmannTruth brute_force(const Matrix& W, const Vector& b) {
  const int n = static_cast<int>(W.rows());
  const std::uint64_t count = std::uint64_t{1} << n;
  Vector s(n);
  const auto state = [&](std::uint64_t code) {
    for (int i = 0; i < n; ++i) s[i] = ((code >> i) & 1u) ? 1.0 : -1.0;
  };
  double emax = -kInf;
  for (std::uint64_t c = 0; c < count; ++c) {
    state(c);
    emax = std::max(emax, 0.5 * s.dot(W * s) + s.dot(b));
  }
  double z = 0.0;
  Vector m = Vector::Zero(n);
  Matrix M = Matrix::Zero(n, n);
  for (std::uint64_t c = 0; c < count; ++c) {
    state(c);
    const double w = std::exp(0.5 * s.dot(W * s) + s.dot(b) - emax);
    z += w;
    m += w * s;
    M += w * s * s.transpose();
  }
  return {emax + std::log(z), m / z, M / z};
}

void expect_same_truth(const BoltzmannTruth& got, const BoltzmannTruth& want, double tol) {
  EXPECT_NEAR(got.log_z_b, want.log_z_b, tol * std::max(1.0, std::fabs(want.log_z_b)));
  ASSERT_EQ(got.mean_s.size(), want.mean_s.size());
  for (Eigen::Index i = 0; i < want.mean_s.size(); ++i)
    EXPECT_NEAR(got.mean_s[i], want.mean_s[i], tol) << "E[s_" << i << "]";
  for (Eigen::Index i = 0; i < want.mean_s.size(); ++i)
    for (Eigen::Index j = 0; j < want.mean_s.size(); ++j)
      EXPECT_NEAR(got.second_moment_s(i, j), want.second_moment_s(i, j), tol)
          << "E[s_" << i << " s_" << j << "]";
}

TEST(BoltzmannEnumeration, MatchesBruteForceSmall) {
  // d_b <= 12: a single block of low units (no high units).
  for (int n = 1; n <= 10; ++n) {
    SCOPED_TRACE(n);
    const Matrix W = random_symmetric(n, 1.5, 100 + n);
    const Vector b = random_vector(n, 0.5, 200 + n);
    expect_same_truth(enumerate_boltzmann(W, b), brute_force(W, b), 1e-12);
  }
}

TEST(BoltzmannEnumeration, MatchesBruteForceWithHighUnitsAndChunks) {
  // d_b > 12 exercises the Gray-coded high units, several chunks and the high-low cross terms.
  for (int n : {13, 15, 18}) {
    SCOPED_TRACE(n);
    const Matrix W = random_symmetric(n, 0.8, 300 + n);
    const Vector b = random_vector(n, 0.3, 400 + n);
    expect_same_truth(enumerate_boltzmann(W, b), brute_force(W, b), 1e-11);
  }
}

TEST(BoltzmannEnumeration, DiagonalAddsHalfTrace) {
  const int n = 14;
  const Matrix W = random_symmetric(n, 0.7, 11, /*zero_diagonal=*/false);
  const Vector b = random_vector(n, 0.3, 12);
  const BoltzmannTruth got = enumerate_boltzmann(W, b);
  expect_same_truth(got, brute_force(W, b), 1e-11);
  Matrix W0 = W;
  W0.diagonal().setZero();
  EXPECT_NEAR(got.log_z_b, enumerate_boltzmann(W0, b).log_z_b + 0.5 * W.diagonal().sum(), 1e-11);
}

TEST(BoltzmannEnumeration, LargeEnergiesStayFinite) {
  // Energies of order 1e3 (exp overflows without the shift); the shift is raised many times.
  const int n = 16;
  const Matrix W = random_symmetric(n, 40.0, 21);
  const Vector b = random_vector(n, 20.0, 22);
  const BoltzmannTruth got = enumerate_boltzmann(W, b);
  ASSERT_TRUE(std::isfinite(got.log_z_b));
  expect_same_truth(got, brute_force(W, b), 1e-10);
}

TEST(BoltzmannEnumeration, IdenticalForAnyThreadCount) {
  const int n = 20;
  const Matrix W = random_symmetric(n, 0.6, 31);
  const Vector b = random_vector(n, 0.2, 32);
  EnumerationOptions one;
  one.n_threads = 1;
  const BoltzmannTruth ref = enumerate_boltzmann(W, b, one);
  for (int threads : {2, 3, 0}) {
    EnumerationOptions o;
    o.n_threads = threads;
    const BoltzmannTruth got = enumerate_boltzmann(W, b, o);
    EXPECT_EQ(got.log_z_b, ref.log_z_b) << threads;  // bitwise
    EXPECT_TRUE(got.mean_s == ref.mean_s) << threads;
    EXPECT_TRUE(got.second_moment_s == ref.second_moment_s) << threads;
  }
}

TEST(BoltzmannEnumeration, IndependentUnitsHaveClosedForm) {
  // W = 0: E[s_i] = tanh(b_i), log Z_B = sum log(2 cosh b_i), E[s_i s_j] = tanh b_i tanh b_j.
  const int n = 17;
  const Vector b = random_vector(n, 1.0, 41);
  const BoltzmannTruth got = enumerate_boltzmann(Matrix::Zero(n, n), b);
  double log_z = 0.0;
  for (int i = 0; i < n; ++i) log_z += std::log(2.0 * std::cosh(b[i]));
  EXPECT_NEAR(got.log_z_b, log_z, 1e-12 * log_z);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(got.mean_s[i], std::tanh(b[i]), 1e-13);
    for (int j = 0; j < n; ++j) {
      if (i != j) {
        EXPECT_NEAR(got.second_moment_s(i, j), std::tanh(b[i]) * std::tanh(b[j]), 1e-13);
      }
    }
  }
}

TEST(BoltzmannEnumeration, RejectsBadInput) {
  EXPECT_THROW(enumerate_boltzmann(Matrix::Zero(3, 4), Vector::Zero(3)), NumericalError);
  EXPECT_THROW(enumerate_boltzmann(Matrix::Zero(3, 3), Vector::Zero(2)), NumericalError);
  Matrix W = Matrix::Zero(3, 3);
  W(0, 1) = W(1, 0) = std::nan("");
  EXPECT_THROW(enumerate_boltzmann(W, Vector::Zero(3)), NumericalError);
  try {
    enumerate_boltzmann(Matrix::Zero(41, 41), Vector::Zero(41));
    FAIL() << "no throw";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("d_b = 41"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pemc::targets
