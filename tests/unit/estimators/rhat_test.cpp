// Tests of the rank-normalised split R-hat (src/estimators/rhat.hpp): exact values of the
// building blocks against hand computations, then the behaviour the paper promises — R-hat near 1
// for iid draws, far above 1.1 for stuck chains, chains that disagree in location, and a chain
// whose halves disagree.
#include "estimators/rhat.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "core/error.hpp"

namespace pemc::estimators {
namespace {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

std::vector<std::span<const double>> spans(const Chains& c) { return {c.begin(), c.end()}; }

Chains iid_normal(int m, int n, std::uint64_t seed, std::vector<double> means = {}) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Chains out(static_cast<std::size_t>(m));
  for (int j = 0; j < m; ++j) {
    const double mu = means.empty() ? 0.0 : means[static_cast<std::size_t>(j)];
    for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(j)].push_back(mu + normal(gen));
  }
  return out;
}

TEST(InverseNormalCdf, KnownQuantiles) {
  EXPECT_NEAR(inverse_normal_cdf(0.975), 1.959963984540054, 1e-14);
  EXPECT_NEAR(inverse_normal_cdf(0.025), -1.959963984540054, 1e-14);
  EXPECT_EQ(inverse_normal_cdf(0.5), 0.0);
  EXPECT_NEAR(inverse_normal_cdf(normal_cdf(1.0)), 1.0, 1e-14);
  EXPECT_EQ(inverse_normal_cdf(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(inverse_normal_cdf(1.0), std::numeric_limits<double>::infinity());
}

TEST(InverseNormalCdf, InvertsTheCdfAcrossTheRange) {
  // Relative accuracy of Phi(x) against p; in the lower tail erfc keeps full relative precision.
  for (double p : {1e-300, 1e-100, 1e-12, 1e-6, 1e-3, 0.02, 0.1, 0.3, 0.45, 0.499999}) {
    const double x = inverse_normal_cdf(p);
    EXPECT_NEAR(normal_cdf(x) / p, 1.0, 1e-13) << "p = " << p;
    // Symmetry, where 1 - p is still representable to ~1e-10 relative (dx = d(1-p) / phi(x)).
    if (p >= 1e-6) {
      EXPECT_NEAR(inverse_normal_cdf(1.0 - p), -x, 1e-9) << "p = " << p;
    }
  }
}

TEST(InverseNormalCdf, RejectsProbabilitiesOutsideTheUnitInterval) {
  EXPECT_THROW(inverse_normal_cdf(-0.1), NumericalError);
  EXPECT_THROW(inverse_normal_cdf(1.5), NumericalError);
  EXPECT_THROW(inverse_normal_cdf(std::nan("")), NumericalError);
}

TEST(SplitChains, TruncatesToTheShortestAndDropsTheMiddleOfOddLengths) {
  const Chains c{{1, 2, 3, 4, 5, 6}, {10, 20, 30, 40, 50}};
  const Chains s = split_chains(spans(c));
  // Common length 5: halves of 2, the middle (index 2) dropped.
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], (std::vector<double>{1, 2}));
  EXPECT_EQ(s[1], (std::vector<double>{4, 5}));
  EXPECT_EQ(s[2], (std::vector<double>{10, 20}));
  EXPECT_EQ(s[3], (std::vector<double>{40, 50}));
}

TEST(RankNormalize, UsesAverageRanksOfThePooledDraws) {
  const Chains c{{3.0, 1.0}, {5.0, 5.0, 2.0}};
  const Chains z = rank_normalize(c);
  // Pooled S = 5: ranks 1.0 -> 1, 2.0 -> 2, 3.0 -> 3, the two 5.0 share (4 + 5) / 2 = 4.5.
  auto expect = [](double r) { return inverse_normal_cdf((r - 0.375) / 5.25); };
  EXPECT_DOUBLE_EQ(z[0][0], expect(3));
  EXPECT_DOUBLE_EQ(z[0][1], expect(1));
  EXPECT_DOUBLE_EQ(z[1][0], expect(4.5));
  EXPECT_DOUBLE_EQ(z[1][1], expect(4.5));
  EXPECT_DOUBLE_EQ(z[1][2], expect(2));
  EXPECT_NEAR(z[0][0], 0.0, 1e-15);  // the middle rank maps to the median of N(0, 1)
}

TEST(RankNormalize, RejectsNaN) {
  EXPECT_THROW(rank_normalize(Chains{{1.0, std::nan("")}}), NumericalError);
}

TEST(Fold, IsTheAbsoluteDeviationFromThePooledMedian) {
  const Chains f = fold(Chains{{1.0, 4.0}, {2.0, 10.0}});  // median (2 + 4) / 2 = 3
  EXPECT_EQ(f[0], (std::vector<double>{2.0, 1.0}));
  EXPECT_EQ(f[1], (std::vector<double>{1.0, 7.0}));
}

TEST(PooledQuantile, InterpolatesBetweenOrderStatistics) {
  const Chains c{{4.0, 1.0}, {3.0, 2.0, 5.0}};
  EXPECT_DOUBLE_EQ(pooled_quantile(c, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(pooled_quantile(c, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(pooled_quantile(c, 1.0), 5.0);
  EXPECT_DOUBLE_EQ(pooled_quantile(c, 0.1), 1.4);  // h = 0.4 between 1 and 2
}

TEST(PotentialScaleReduction, MatchesTheFormulaOnAHandExample) {
  // Means 2 and 3, within variances 1 and 1: W = 1, B/n = 0.5, var+ = 2/3 + 1/2 = 7/6.
  EXPECT_DOUBLE_EQ(potential_scale_reduction(Chains{{1, 2, 3}, {2, 3, 4}}), std::sqrt(7.0 / 6.0));
  // Identical chains: B = 0, R-hat = sqrt((n - 1) / n).
  EXPECT_DOUBLE_EQ(potential_scale_reduction(Chains{{1, 2, 3}, {1, 2, 3}}), std::sqrt(2.0 / 3.0));
}

TEST(PotentialScaleReduction, UndefinedCasesAreNaNOrInfinite) {
  EXPECT_TRUE(std::isnan(potential_scale_reduction(Chains{{1, 2, 3}})));        // one chain
  EXPECT_TRUE(std::isnan(potential_scale_reduction(Chains{{1}, {2}})));         // one draw
  EXPECT_TRUE(std::isnan(potential_scale_reduction(Chains{{1, 1}, {1, 1}})));   // all equal
  EXPECT_EQ(potential_scale_reduction(Chains{{1, 1}, {2, 2}}),                  // stuck apart
            std::numeric_limits<double>::infinity());
}

// For iid draws, with m split chains of n draws, R-hat^2 = (n-1)/n + (B/n)/W where
// (B/n)/W ~ F(m-1, m(n-1)) / n, so R-hat - 1 ≈ (F - 1) / (2n). With m = 8 (4 chains split) and
// n = 500, R-hat >= 1.01 needs F >= 11: P(F(7, 3992) >= 11) < 1e-12.
TEST(RankNormalizedSplitRhat, IidDrawsGiveRhatNearOne) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const Chains c = iid_normal(4, 1000, seed);
    const RhatResult r = rank_normalized_split_rhat(spans(c));
    EXPECT_LT(r.rhat, 1.01) << "seed " << seed;
    EXPECT_GT(r.rhat, 0.99) << "seed " << seed;
    EXPECT_EQ(r.rhat, std::max(r.rhat_bulk, r.rhat_folded));
  }
}

TEST(RankNormalizedSplitRhat, ChainsWithDifferentMeansGiveLargeRhat) {
  // Split means 0, 0, 1, 1, 2, 2, 3, 3 (variance 10/7) against W = 1: R-hat ≈ sqrt(1 + 10/7) =
  // 1.56 on the raw scale, ≈ 1.5 after rank normalisation.
  const Chains c = iid_normal(4, 1000, 7, {0.0, 1.0, 2.0, 3.0});
  const RhatResult r = rank_normalized_split_rhat(spans(c));
  EXPECT_GT(r.rhat_bulk, 1.3);
  EXPECT_GT(r.rhat, 1.3);
}

TEST(RankNormalizedSplitRhat, AChainStuckAtTheCentreIsCaughtByFolding) {
  // Three healthy chains and one stuck at 0, the pooled median: the location (bulk) R-hat barely
  // moves, but the stuck chain's folded draws are all the smallest. Expected value: the stuck
  // halves sit at z = Phi^-1(0.125) = -1.15, the others' z ~ Phi^-1(U(0.25, 1)) with mean 0.42 and
  // variance 0.53, so W = 6/8 * 0.53 = 0.40, B/n = 0.53 and R-hat = sqrt(0.93 / 0.40) = 1.52.
  Chains c = iid_normal(3, 1000, 11);
  c.push_back(std::vector<double>(1000, 0.0));
  const RhatResult r = rank_normalized_split_rhat(spans(c));
  EXPECT_LT(r.rhat_bulk, 1.1);
  EXPECT_GT(r.rhat_folded, 1.3);
  EXPECT_GT(r.rhat, 1.3);
}

TEST(RankNormalizedSplitRhat, AChainStuckInTheTailGivesLargeRhat) {
  // The mirror image of the previous case for the bulk R-hat (stuck z = Phi^-1(0.875)): ≈ 1.52.
  Chains c = iid_normal(3, 1000, 12);
  c.push_back(std::vector<double>(1000, 3.0));
  EXPECT_GT(rank_normalized_split_rhat(spans(c)).rhat_bulk, 1.3);
}

TEST(RankNormalizedSplitRhat, SplittingCatchesAChainThatGetsStuckHalfway) {
  Chains c = iid_normal(1, 2000, 13);
  for (std::size_t i = 1000; i < 2000; ++i) c[0][i] = 2.0;
  // Halves: z of the stuck half ≈ Phi^-1(0.74) = 0.64 (2.0 exceeds 97.7% of N(0, 1)), the other
  // half's mean ≈ -0.6 and variance ≈ 0.5: R-hat ≈ sqrt((0.25 + 0.79) / 0.25) ≈ 2.
  EXPECT_GT(rank_normalized_split_rhat(spans(c)).rhat, 1.3);
}

TEST(RankNormalizedSplitRhat, UndefinedForConstantOrTooShortChains) {
  const Chains constant{std::vector<double>(100, 1.5), std::vector<double>(100, 1.5)};
  EXPECT_TRUE(std::isnan(rank_normalized_split_rhat(spans(constant)).rhat));
  const Chains short_chain{{1.0, 2.0, 3.0}};
  EXPECT_TRUE(std::isnan(rank_normalized_split_rhat(spans(short_chain)).rhat));
  const Chains apart{std::vector<double>(100, 1.0), std::vector<double>(100, 2.0)};
  EXPECT_EQ(rank_normalized_split_rhat(spans(apart)).rhat,
            std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace pemc::estimators
