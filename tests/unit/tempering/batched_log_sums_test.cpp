#include "tempering/batched_log_sums.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/numerics.hpp"
#include "rng/stream.hpp"

namespace pemc::tempering {
namespace {

TEST(BatchedLogSums, TotalsAreLogSumExpOfEverything) {
  BatchedLogSums s(2, 4);
  double direct0 = -kInf, direct1 = -kInf;
  for (int i = 0; i < 1000; ++i) {
    const double v[2] = {0.01 * i, -0.5 * i};
    s.add(v);
    direct0 = log_add_exp(direct0, v[0]);
    direct1 = log_add_exp(direct1, v[1]);
  }
  EXPECT_EQ(s.count(), 1000);
  EXPECT_NEAR(s.total()[0], direct0, 1e-12);
  EXPECT_NEAR(s.total()[1], direct1, 1e-12);
}

TEST(BatchedLogSums, BatchesDoubleAndStayBetweenNAnd2N) {
  BatchedLogSums s(1, 4);
  const double zero = 0.0;
  for (int n = 1; n <= 1000; ++n) {
    s.add(&zero);
    const int full = s.n_full_batches();
    EXPECT_LE(full, 8);
    if (n >= 8) {
      EXPECT_GE(full, 4) << n;
    }
  }
  // Each full batch has the same size: the estimator sees log(size) in every batch.
  std::vector<std::int64_t> sizes;
  s.batch_se([&](const std::vector<double>& ls, std::int64_t m) {
    EXPECT_NEAR(ls[0], std::log(static_cast<double>(m)), 1e-12);
    sizes.push_back(m);
    return 0.0;
  });
  ASSERT_GE(sizes.size(), 4u);
  for (auto m : sizes) EXPECT_EQ(m, sizes.front());
}

TEST(BatchedLogSums, StandardErrorOfAMeanMatchesTheory) {
  // Independent N(0, 1) values: log-space sums of exp(x) are awkward, so estimate the mean of
  // u ~ U(0, 1) via channel log u: batch estimate = log(sum u / n). Its SE (delta method) is
  // sd(u) / (mean(u) sqrt(N)) = (1/sqrt 12) / (0.5 sqrt N).
  BatchedLogSums s(1, 32);
  rng::Stream r(5, rng::Domain::kTest, 0, 0);
  const int n = 64000;
  for (int i = 0; i < n; ++i) {
    const double v = std::log(r.uniform());
    s.add(&v);
  }
  const double se = s.batch_se([](const std::vector<double>& ls, std::int64_t m) {
    return ls[0] - std::log(static_cast<double>(m));
  });
  const double theory = (1.0 / std::sqrt(12.0)) / (0.5 * std::sqrt(static_cast<double>(n)));
  // With 32-64 batches the SE estimate itself has ~10-15% relative error; allow 40%.
  EXPECT_NEAR(se, theory, 0.4 * theory);
  EXPECT_TRUE(std::isnan(BatchedLogSums(1, 4).batch_se([](auto&, auto) { return 0.0; })));
}

// Four batches of one observation (a_j, b_j): SE^2 = (1/k) sum_j (a_j/abar - b_j/bbar)^2 / (k - 1),
// the same delta method as estimators::LogRatioBatchMeans; a fifth observation starts a partial
// batch (after the merge: two full batches of 2, one of 1), scaled by sqrt(n_full / n).
TEST(BatchedLogSums, LogRatioSeIsTheDeltaMethodOnTheBatchSums) {
  BatchedLogSums s(2, 2);
  EXPECT_TRUE(std::isnan(s.log_ratio_se(0, 1)));
  const std::vector<double> a{1.0, 2.0, 4.0, 3.0}, b{2.0, 2.0, 1.0, 5.0};
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double v[2] = {std::log(a[i]) + 500.0, std::log(b[i]) - 500.0};  // far beyond exp's range
    s.add(v);
  }
  double ss = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) ss += std::pow(a[i] / 2.5 - b[i] / 2.5, 2);
  EXPECT_NEAR(s.log_ratio_se(0, 1), std::sqrt(ss / 3.0 / 4.0), 1e-12);
  const double v[2] = {std::log(7.0) + 500.0, -500.0};
  s.add(v);
  const double r1 = 3.0 / 5.0 - 4.0 / 5.0, r2 = 7.0 / 5.0 - 6.0 / 5.0;
  EXPECT_NEAR(s.log_ratio_se(0, 1), std::sqrt((r1 * r1 + r2 * r2) / 1.0 / 2.0 * 4.0 / 5.0), 1e-12);
}

}  // namespace
}  // namespace pemc::tempering
