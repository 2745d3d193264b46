// WarmupAdapter: Stan's window layout (full and shortened warmups) and the metric it estimates.
#include "adapt/warmup_adapter.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "rng/stream.hpp"

namespace pemc::adapt {
namespace {

WarmupAdapterOptions metric_options() {
  WarmupAdapterOptions o;
  o.adapt_metric = true;
  return o;
}

// Iterations after which a new metric was produced, feeding standard normal draws.
std::vector<std::int64_t> window_ends(std::int64_t n_warmup, const hmc::Metric& metric,
                                      const WarmupAdapterOptions& options = metric_options()) {
  WarmupAdapter adapter(options, n_warmup, 0.1, metric);
  rng::Stream s(1, rng::Domain::kTest, 0, 0);
  Vector x(metric.dim());
  std::vector<std::int64_t> ends;
  for (std::int64_t i = 0; i < n_warmup; ++i) {
    s.fill_normal(x);
    if (adapter.observe(i, x, 0.8).metric) ends.push_back(i);
  }
  return ends;
}

TEST(WarmupAdapter, StanWindowsForAThousandIterations) {
  // init 75, base window 25 doubling, term 50: windows [75,99] [100,149] [150,249] [250,449] and
  // the last one stretched to the terminal buffer [450,949] (a doubled 400-window ending at 849
  // would leave a window shorter than twice its size).
  const std::vector<std::int64_t> want{99, 149, 249, 449, 949};
  EXPECT_EQ(window_ends(1000, hmc::Metric::diagonal(Vector::Ones(3))), want);
  EXPECT_EQ(window_ends(1000, hmc::Metric::dense(Matrix::Identity(3, 3))), want);
  EXPECT_EQ(window_ends(2000, hmc::Metric::diagonal(Vector::Ones(3))),
            (std::vector<std::int64_t>{99, 149, 249, 449, 849, 1949}));
}

TEST(WarmupAdapter, ShortWarmupUsesFifteenSeventyFiveTenPercent) {
  // 75 + 25 + 50 > 100: init = 15, term = 10, one slow window [15, 89].
  WarmupAdapter adapter(metric_options(), 100, 0.1, hmc::Metric::diagonal(Vector::Ones(2)));
  EXPECT_EQ(adapter.init_buffer(), 15);
  EXPECT_EQ(adapter.term_buffer(), 10);
  EXPECT_EQ(adapter.next_window_end(), 89);
  EXPECT_EQ(window_ends(100, hmc::Metric::diagonal(Vector::Ones(2))),
            (std::vector<std::int64_t>{89}));
  // 40 iterations: init 6, term 4, window [6, 35].
  EXPECT_EQ(window_ends(40, hmc::Metric::diagonal(Vector::Ones(2))),
            (std::vector<std::int64_t>{35}));
  // Exactly fitting buffers are kept: 150 = 75 + 25 + 50, a single window [75, 99].
  EXPECT_EQ(window_ends(150, hmc::Metric::diagonal(Vector::Ones(2))),
            (std::vector<std::int64_t>{99}));
}

TEST(WarmupAdapter, NoMetricUpdatesWhenNotRequestedUnitOrTooShort) {
  WarmupAdapterOptions no_metric;  // adapt_metric = false
  EXPECT_TRUE(window_ends(1000, hmc::Metric::diagonal(Vector::Ones(2)), no_metric).empty());
  EXPECT_TRUE(window_ends(1000, hmc::Metric::unit(2)).empty());
  EXPECT_TRUE(window_ends(19, hmc::Metric::diagonal(Vector::Ones(2))).empty());  // Stan: < 20
}

TEST(WarmupAdapter, StepSizeFollowsDualAveragingAndRestartsAfterAWindow) {
  WarmupAdapter adapter(metric_options(), 200, 0.1, hmc::Metric::diagonal(Vector::Ones(1)));
  DualAveraging reference({}, 0.1);
  Vector x(1);
  double step = 0.0;
  for (std::int64_t i = 0; i < 99; ++i) {
    x[0] = std::sin(0.3 * i);
    const double accept = 0.5 + 0.4 * std::cos(0.7 * i);
    step = adapter.observe(i, x, accept).step_size;
    EXPECT_DOUBLE_EQ(step, reference.learn(accept));
  }
  const auto update = adapter.observe(99, x, 0.9);  // closes the first window
  ASSERT_TRUE(update.metric.has_value());
  reference.learn(0.9);
  reference.restart(update.step_size);
  EXPECT_DOUBLE_EQ(adapter.observe(100, x, 0.3).step_size, reference.learn(0.3));
}

// Feed exact draws from N(mu, Sigma); the metric after the last window must be the regularised
// sample covariance of that window's 500 draws: shrink * Sigma + ridge up to sampling error.
TEST(WarmupAdapter, EstimatesTheCovarianceOfAGaussian) {
  const int d = 4;
  Vector sd(d);
  sd << 0.5, 1.0, 2.0, 3.0;
  Matrix corr = Matrix::Identity(d, d);
  corr(0, 1) = corr(1, 0) = 0.6;
  corr(2, 3) = corr(3, 2) = -0.4;
  const Matrix sigma = sd.asDiagonal() * corr * sd.asDiagonal();
  const Matrix chol = sigma.llt().matrixL();
  Vector mu(d);
  mu << 1.0, -2.0, 0.0, 5.0;

  for (bool dense : {false, true}) {
    const hmc::Metric start = dense ? hmc::Metric::dense(Matrix::Identity(d, d))
                                    : hmc::Metric::diagonal(Vector::Ones(d));
    WarmupAdapter adapter(metric_options(), 1000, 0.1, start);
    rng::Stream s(7, rng::Domain::kTest, dense, 0);
    Vector z(d);
    std::optional<hmc::Metric> last;
    for (std::int64_t i = 0; i < 1000; ++i) {
      s.fill_normal(z);
      const Vector x = mu + chol * z;
      auto update = adapter.observe(i, x, 0.8);
      if (update.metric) last = std::move(update.metric);
    }
    ASSERT_TRUE(last.has_value());
    const double n = 500.0;  // draws in the final window [450, 949]
    const double shrink = n / (n + 5.0), ridge = 1e-3 * 5.0 / (n + 5.0);
    if (!dense) {
      ASSERT_EQ(last->kind(), hmc::MetricKind::kDiagonal);
      for (int i = 0; i < d; ++i) {
        // Var of a sample variance of n Gaussian draws: 2 sigma^4 / (n - 1).
        const double want = shrink * sigma(i, i) + ridge;
        const double se = shrink * sigma(i, i) * std::sqrt(2.0 / (n - 1.0));
        EXPECT_NEAR(last->inverse_diagonal()[i], want, 4.0 * se) << i;
      }
    } else {
      ASSERT_EQ(last->kind(), hmc::MetricKind::kDense);
      const Matrix& est = last->inverse_dense();
      for (int i = 0; i < d; ++i)
        for (int j = 0; j <= i; ++j) {
          // Var of a sample covariance: (S_ii S_jj + S_ij^2) / (n - 1).
          const double want = shrink * sigma(i, j) + (i == j ? ridge : 0.0);
          const double se = shrink * std::sqrt((sigma(i, i) * sigma(j, j) +
                                                sigma(i, j) * sigma(i, j)) / (n - 1.0));
          EXPECT_NEAR(est(i, j), want, 4.0 * se) << i << "," << j;
        }
    }
  }
}

}  // namespace
}  // namespace pemc::adapt
