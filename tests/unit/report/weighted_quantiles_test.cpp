// Weighted quantiles and the store of weighted samples (src/report/weighted_quantiles.hpp), with
// hand-computed values.
#include "report/weighted_quantiles.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "estimators/rhat.hpp"

namespace pemc::report {
namespace {

TEST(WeightedQuantile, EqualWeightsAreType7) {
  const std::vector<double> x{3, 1, 4, 1.5, 9, 2.6, 5};
  const std::vector<double> w(x.size(), 0.3);
  for (double p : {0.0, 0.05, 0.3, 0.5, 0.95, 1.0})
    EXPECT_NEAR(weighted_quantile(x, w, p), estimators::pooled_quantile({x}, p), 1e-12) << p;
}

TEST(WeightedQuantile, ByHand) {
  // x = 1, 2, 3 with weights 0.5, 0.25, 0.25: S_1 = 0, S_2 = 1 * 0.25 + 2 * 0.5 = 1.25,
  // S_3 = 2 * 0.25 + 2 * 0.75 = 2. Median: h = 0.5 * 2 = 1 in [S_1, S_2): 1 + 1 / 1.25 = 1.8.
  // 95 %: h = 1.9 in [S_2, S_3): 2 + (1.9 - 1.25) / 0.75 = 2.8667.
  const std::vector<double> x{3, 1, 2}, w{1, 2, 1};  // unnormalised, unsorted
  EXPECT_DOUBLE_EQ(weighted_quantile(x, w, 0.5), 1.8);
  EXPECT_DOUBLE_EQ(weighted_quantile(x, w, 0.95), 2.0 + 0.65 / 0.75);
  EXPECT_DOUBLE_EQ(weighted_quantile(x, w, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(weighted_quantile(x, w, 1.0), 3.0);
}

TEST(WeightedQuantile, ZeroWeightsAreLeftOutAndBadInputsFail) {
  const std::vector<double> x{1, 100, 2}, w{1, 0, 1};
  EXPECT_DOUBLE_EQ(weighted_quantile(x, w, 0.5), 1.5);
  EXPECT_DOUBLE_EQ(weighted_quantile(std::vector<double>{7}, std::vector<double>{2}, 0.3), 7.0);
  EXPECT_TRUE(std::isnan(weighted_quantile(x, std::vector<double>{0, 0, 0}, 0.5)));
  EXPECT_THROW(weighted_quantile(x, std::vector<double>{1, 1}, 0.5), ConfigError);
  EXPECT_THROW(weighted_quantile(x, w, 1.5), ConfigError);
  EXPECT_THROW(weighted_quantile(x, std::vector<double>{1, -1, 1}, 0.5), NumericalError);
  const std::vector<double> nan_x{1, std::numeric_limits<double>::quiet_NaN(), 2};
  EXPECT_THROW(weighted_quantile(nan_x, std::vector<double>{1, 1, 1}, 0.5), NumericalError);
  EXPECT_DOUBLE_EQ(weighted_quantile(nan_x, std::vector<double>{1, 0, 1}, 0.5), 1.5);
}

TEST(WeightedSampleStore, ThinsByWholeDraws) {
  // 2 quantities, 2 samples per draw, at most 16 values: 4 draws fill it; the 5th draw's first
  // sample makes 18 values, so draws 1 and 3 go (stride 2) and from then on even draws only.
  WeightedSampleStore store(16);
  Vector x(2);
  for (std::int64_t draw = 0; draw < 10; ++draw)
    for (int s = 0; s < 2; ++s) {
      x << static_cast<double>(draw), static_cast<double>(s);
      store.add(draw, x, -static_cast<double>(s));
    }
  EXPECT_EQ(store.stride(), 4);  // 5 even draws x 2 samples x 2 values = 20 > 16: halved again
  EXPECT_EQ(store.values()[0], (std::vector<double>{0, 0, 4, 4, 8, 8}));
  EXPECT_EQ(store.values()[1], (std::vector<double>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(store.log_weights(), (std::vector<double>{0, -1, 0, -1, 0, -1}));
}

}  // namespace
}  // namespace pemc::report
