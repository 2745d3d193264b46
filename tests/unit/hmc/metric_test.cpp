// Metric: kinetic energy and velocity against brute force; momentum draws have covariance M.
#include "hmc/metric.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "rng/stream.hpp"

namespace pemc::hmc {
namespace {

Matrix spd_inverse_metric() {
  Matrix a(4, 4);
  a << 2.0, 0.6, -0.3, 0.1,   //
      0.6, 1.0, 0.2, 0.0,     //
      -0.3, 0.2, 0.5, -0.1,   //
      0.1, 0.0, -0.1, 3.0;
  return a;
}

Vector diag_inverse_metric() {
  Vector v(4);
  v << 0.25, 1.0, 4.0, 0.5;
  return v;
}

// The inverse metric as a dense matrix, whatever the kind.
Matrix dense_inverse(const Metric& m) {
  switch (m.kind()) {
    case MetricKind::kUnit: return Matrix::Identity(m.dim(), m.dim());
    case MetricKind::kDiagonal: return m.inverse_diagonal().asDiagonal();
    case MetricKind::kDense: return m.inverse_dense();
  }
  return {};
}

std::vector<Metric> metrics() {
  return {Metric::unit(4), Metric::diagonal(diag_inverse_metric()),
          Metric::dense(spd_inverse_metric())};
}

TEST(Metric, KineticAndVelocityMatchBruteForce) {
  Vector p(4);
  p << 0.3, -1.2, 2.0, 0.7;
  for (const Metric& m : metrics()) {
    const Matrix minv = dense_inverse(m);
    EXPECT_NEAR(m.kinetic(p), 0.5 * p.dot(minv * p), 1e-13);
    Vector v(4);
    m.velocity(p, v);
    EXPECT_LT((v - minv * p).cwiseAbs().maxCoeff(), 1e-13);
    EXPECT_LT((m.inverse_diagonal_or_dense_diagonal() - minv.diagonal()).cwiseAbs().maxCoeff(),
              1e-15);
  }
}

TEST(Metric, MomentumDrawsHaveCovarianceM) {
  const int n = 40000;
  for (const Metric& m : metrics()) {
    const Matrix cov_true = dense_inverse(m).inverse();  // M
    rng::Stream s(2024, rng::Domain::kTest, static_cast<int>(m.kind()), 0);
    Vector p(4), sum = Vector::Zero(4);
    Matrix sum_sq = Matrix::Zero(4, 4);
    for (int i = 0; i < n; ++i) {
      m.sample_momentum(s, p);
      sum += p;
      sum_sq += p * p.transpose();
    }
    const Vector mean = sum / n;
    const Matrix cov = sum_sq / n;  // mean is known to be 0
    for (int i = 0; i < 4; ++i) {
      // Standard errors for Gaussian draws: Var(mean_i) = M_ii / n and
      // Var(mean of p_i p_j) = (M_ii M_jj + M_ij^2) / n; 4 SE per entry (14 checks per metric).
      EXPECT_LT(std::fabs(mean[i]), 4.0 * std::sqrt(cov_true(i, i) / n)) << i;
      for (int j = 0; j <= i; ++j) {
        const double se =
            std::sqrt((cov_true(i, i) * cov_true(j, j) + cov_true(i, j) * cov_true(i, j)) / n);
        EXPECT_LT(std::fabs(cov(i, j) - cov_true(i, j)), 4.0 * se) << i << "," << j;
      }
    }
  }
}

TEST(Metric, RejectsInvalidMatrices) {
  Vector bad_diag = diag_inverse_metric();
  bad_diag[2] = 0.0;
  EXPECT_THROW(Metric::diagonal(bad_diag), NumericalError);
  bad_diag[2] = std::nan("");
  EXPECT_THROW(Metric::diagonal(bad_diag), NumericalError);

  Matrix not_pd = spd_inverse_metric();
  not_pd(0, 0) = -1.0;
  EXPECT_THROW(Metric::dense(not_pd), NumericalError);
  Matrix not_symmetric = spd_inverse_metric();
  not_symmetric(0, 3) += 0.05;  // LLT alone would not notice: it reads the lower triangle
  EXPECT_THROW(Metric::dense(not_symmetric), NumericalError);
}

}  // namespace
}  // namespace pemc::hmc
