#include "tempering/batched_log_sums.hpp"

#include <gtest/gtest.h>

#include <cmath>

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
    if (n >= 8) EXPECT_GE(full, 4) << n;
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

}  // namespace
}  // namespace pemc::tempering
