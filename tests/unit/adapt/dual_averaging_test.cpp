// Dual averaging and Welford: convergence on synthetic problems with a known answer.
#include "adapt/dual_averaging.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "adapt/welford.hpp"
#include "rng/stream.hpp"

namespace pemc::adapt {
namespace {

// Synthetic "sampler" with acceptance exp(-eps): the step size with acceptance delta is -log delta.
TEST(DualAveraging, ConvergesToTheStepSizeWithTargetAcceptance) {
  const DualAveragingOptions defaults;
  for (double delta : {0.65, 0.8, 0.95}) {
    DualAveraging da({.target_accept = delta}, 1.0);
    const double mu = std::log(10.0 * 1.0);
    double eps = 1.0;
    double previous_error = 0.0;
    for (int n : {5000, 20000}) {
      while (da.counter() < n) eps = da.learn(std::exp(-eps));
      // x_n = mu - sqrt(n) s_bar_n / gamma keeps the running mean of (delta - accept) at
      // s_bar_n = gamma (mu - x_n) / sqrt(n): with deterministic feedback the acceptance of the
      // iterates (and of their average) misses delta by O(gamma |mu - log eps*| / sqrt(n)).
      // Allow twice that, and require the n^{-1/2} decay (factor 2 from 5000 to 20000 draws).
      const double error = std::fabs(std::exp(-da.final_step_size()) - delta);
      const double bound =
          2.0 * defaults.gamma * std::fabs(mu - std::log(-std::log(delta))) / std::sqrt(n);
      EXPECT_LT(error, bound) << "delta " << delta << " n " << n;
      if (n == 20000) {
        EXPECT_LT(error, previous_error / 1.5) << "delta " << delta;
      }
      previous_error = error;
    }
  }
}

// With a noisy acceptance statistic (uniform noise of half-width 0.1, mean zero) dual averaging still
// finds the root of the *mean* acceptance.
TEST(DualAveraging, ConvergesUnderNoise) {
  const double delta = 0.8;
  DualAveraging da({.target_accept = delta}, 0.01);
  rng::Stream s(5, rng::Domain::kTest, 0, 0);
  double eps = 0.01;
  for (int i = 0; i < 20000; ++i) eps = da.learn(std::exp(-eps) + 0.2 * (s.uniform() - 0.5));
  // The averaged iterate carries noise of order gamma-scaled sqrt(sum w_i^2) ~ a few percent at
  // n = 2e4 (a few times larger than the deterministic error); 5% is a few of those standard
  // deviations, while a sign error or a wrong target would be off by far more.
  EXPECT_NEAR(da.final_step_size() / -std::log(delta), 1.0, 0.05);
}

TEST(DualAveraging, ClampsAcceptanceAboveOneAndTreatsNanAsZero) {
  DualAveraging a({}, 0.5), b({}, 0.5);
  EXPECT_DOUBLE_EQ(a.learn(7.0), b.learn(1.0));
  DualAveraging c({}, 0.5), d({}, 0.5);
  EXPECT_DOUBLE_EQ(c.learn(std::nan("")), d.learn(0.0));
  // Acceptance below target shrinks the step, above target grows it (relative to mu = log 10 eps).
  DualAveraging lo({}, 0.5), hi({}, 0.5);
  EXPECT_LT(lo.learn(0.0), hi.learn(1.0));
}

TEST(DualAveraging, FinalStepSizeBeforeAnyObservationIsTheRestartValue) {
  DualAveraging da({}, 0.37);
  EXPECT_DOUBLE_EQ(da.final_step_size(), 0.37);
  da.learn(0.5);
  da.restart(0.12);
  EXPECT_DOUBLE_EQ(da.final_step_size(), 0.12);
  EXPECT_EQ(da.counter(), 0);
}

TEST(Welford, MatchesTwoPassMeanVarianceAndCovariance) {
  rng::Stream s(6, rng::Domain::kTest, 0, 0);
  const int n = 500, d = 3;
  Matrix xs(n, d);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) xs(i, j) = 100.0 + (j + 1) * s.normal() + (j == 2 ? xs(i, 0) : 0.0);
  WelfordCovariance dense(d, true), diag(d, false);
  for (int i = 0; i < n; ++i) {
    dense.add(xs.row(i).transpose());
    diag.add(xs.row(i).transpose());
  }
  const Vector mean = xs.colwise().mean().transpose();
  const Matrix centred = xs.rowwise() - mean.transpose();
  const Matrix cov = centred.transpose() * centred / (n - 1.0);
  EXPECT_EQ(dense.count(), n);
  EXPECT_LT((dense.mean() - mean).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((dense.covariance() - cov).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((diag.variance() - cov.diagonal()).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((dense.variance() - cov.diagonal()).cwiseAbs().maxCoeff(), 1e-10);
  diag.reset();
  EXPECT_EQ(diag.count(), 0);
}

}  // namespace
}  // namespace pemc::adapt
