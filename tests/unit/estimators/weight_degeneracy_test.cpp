// Tests of the pseudo-extended weight-degeneracy statistics (src/estimators/weight_degeneracy.hpp)
// on constructed weights whose statistics are known exactly, and of the verdict on the two
// patterns it must tell apart: one pseudo-sample carrying every draw, and weight that moves.
#include "estimators/weight_degeneracy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace pemc::estimators {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(WeightDegeneracy, EqualWeightsHaveEssNAndMaxWeightOneOverN) {
  WeightDegeneracy t(4, 0.001, 1.0);
  const std::vector<double> a{-3.0, -3.0, -3.0, -3.0};  // any common shift
  const std::vector<double> betas{0.2, 0.4, 0.6, 0.8};
  for (int k = 0; k < 10; ++k) t.add(a, betas);
  const auto s = t.stats();
  EXPECT_EQ(s.n_draws, 10);
  EXPECT_EQ(s.n_pseudo, 4);
  EXPECT_DOUBLE_EQ(s.mean_max_weight, 0.25);
  EXPECT_DOUBLE_EQ(s.ess_per_draw, 4.0);
  EXPECT_DOUBLE_EQ(s.beta_at_lower_fraction, 0.0);
  EXPECT_DOUBLE_EQ(s.weight_handoff_rate, 0.0);  // ties: the first index is the heaviest
  EXPECT_FALSE(degeneracy_warning(s).has_value());
}

TEST(WeightDegeneracy, KnownWeightsGiveKnownStatistics) {
  // w = (3/4, 1/4): max 3/4, sum w^2 = 10/16, Kish ESS per draw 1.6. Then w = (1/4, 3/4): the
  // same statistics, and the heaviest pseudo-sample changes (a handoff in the one pair of draws).
  WeightDegeneracy t(2, 0.0, 1.0);
  t.add(std::vector<double>{0.0, std::log(1.0 / 3.0)}, std::vector<double>{0.005, 0.5});
  t.add(std::vector<double>{std::log(1.0 / 3.0), 0.0}, std::vector<double>{0.009, 0.02});
  const auto s = t.stats();
  EXPECT_NEAR(s.mean_max_weight, 0.75, 1e-15);
  EXPECT_NEAR(s.ess_per_draw, 1.6, 1e-14);
  // Lower band: beta < 0 + 0.01 * (1 - 0): 0.005 and 0.009 of the four.
  EXPECT_DOUBLE_EQ(s.beta_at_lower_fraction, 0.5);
  EXPECT_DOUBLE_EQ(s.weight_handoff_rate, 1.0);
}

TEST(WeightDegeneracy, LowerBandIsRelativeToTheBetaRange) {
  // (0.1, 0.9): the band is beta < 0.1 + 0.01 * 0.8 = 0.108.
  WeightDegeneracy t(3, 0.1, 0.9);
  t.add(std::vector<double>{0.0, 0.0, 0.0}, std::vector<double>{0.107, 0.109, 0.5});
  EXPECT_NEAR(t.stats().beta_at_lower_fraction, 1.0 / 3.0, 1e-15);
}

TEST(WeightDegeneracy, FixedBetaHasNoBetaStatistic) {
  WeightDegeneracy t(2, 0.0, 1.0);
  t.add(std::vector<double>{0.0, 0.0}, {});
  EXPECT_TRUE(std::isnan(t.stats().beta_at_lower_fraction));
  EXPECT_TRUE(std::isnan(t.stats().weight_handoff_rate));  // one draw: no consecutive pair
}

TEST(WeightDegeneracy, OnePseudoSampleCarryingEveryDrawIsFlagged) {
  // The failure of issue 31: N - 1 pseudo-samples at beta_lower, their weights ~e^-200.
  const int n = 5;
  WeightDegeneracy t(n, 0.001, 1.0);
  std::vector<double> a(n, -200.0), betas(n, 0.0011);
  a[2] = 0.0;
  betas[2] = 0.7;
  for (int k = 0; k < 1000; ++k) t.add(a, betas);
  const auto s = t.stats();
  EXPECT_DOUBLE_EQ(s.mean_max_weight, 1.0);
  EXPECT_DOUBLE_EQ(s.ess_per_draw, 1.0);
  EXPECT_DOUBLE_EQ(s.beta_at_lower_fraction, 0.8);
  EXPECT_DOUBLE_EQ(s.weight_handoff_rate, 0.0);
  const auto w = degeneracy_warning(s);
  ASSERT_TRUE(w.has_value());
  EXPECT_NE(w->find("pseudo-extended weights degenerate:"), std::string::npos) << *w;
  EXPECT_NE(w->find("80% of pseudo-samples at beta's lower bound"), std::string::npos) << *w;
  EXPECT_NE(w->find("beta_instrumental.a"), std::string::npos) << *w;
}

TEST(WeightDegeneracy, DominantWeightThatMovesIsNotFlagged) {
  // Each draw is carried by one pseudo-sample, but a different one every 10 draws: the weight
  // does move (mode switches are possible), so no warning.
  const int n = 5;
  WeightDegeneracy t(n, 0.001, 1.0);
  for (int k = 0; k < 1000; ++k) {
    std::vector<double> a(n, -200.0);
    a[static_cast<std::size_t>((k / 10) % n)] = 0.0;
    t.add(a, std::vector<double>(n, 0.5));
  }
  const auto s = t.stats();
  EXPECT_DOUBLE_EQ(s.mean_max_weight, 1.0);
  EXPECT_NEAR(s.weight_handoff_rate, 99.0 / 999.0, 1e-15);
  EXPECT_FALSE(degeneracy_warning(s).has_value());
}

TEST(WeightDegeneracy, ShortChainsAndOnePseudoSampleGetNoVerdict) {
  DegeneracyThresholds th;
  WeightDegeneracy t(2, 0.0, 1.0);
  for (int k = 0; k + 1 < static_cast<int>(th.min_draws); ++k)
    t.add(std::vector<double>{0.0, -300.0}, {});
  EXPECT_FALSE(degeneracy_warning(t.stats(), th).has_value());
  t.add(std::vector<double>{0.0, -300.0}, {});
  EXPECT_TRUE(degeneracy_warning(t.stats(), th).has_value());
  WeightDegeneracy one(1, 0.0, 1.0);
  for (int k = 0; k < 1000; ++k) one.add(std::vector<double>{0.0}, {});
  EXPECT_FALSE(degeneracy_warning(one.stats(), th).has_value());
}

TEST(WeightDegeneracy, UnusableDrawsAreSkippedAndSizesChecked) {
  WeightDegeneracy t(2, 0.0, 1.0);
  t.add(std::vector<double>{kNaN, 0.0}, {});
  t.add(std::vector<double>{-kInf, -kInf}, {});
  EXPECT_EQ(t.n_draws(), 0);
  EXPECT_TRUE(std::isnan(t.stats().mean_max_weight));
  t.add(std::vector<double>{-kInf, 0.0}, {});  // a zero weight is fine
  EXPECT_EQ(t.n_draws(), 1);
  EXPECT_DOUBLE_EQ(t.stats().mean_max_weight, 1.0);
  EXPECT_THROW(t.add(std::vector<double>{0.0}, {}), std::invalid_argument);
  EXPECT_THROW(t.add(std::vector<double>{0.0, 0.0}, std::vector<double>{0.5}), std::invalid_argument);
  EXPECT_THROW(WeightDegeneracy(0, 0.0, 1.0), std::invalid_argument);
}

TEST(WeightDegeneracy, SaveAndRestoreContinueExactly) {
  // A resumed chain reports the same statistics bit for bit.
  const int n = 3;
  auto draw = [&](int k, std::vector<double>& a, std::vector<double>& b) {
    a = {std::sin(0.37 * k), -1.5 * std::cos(0.11 * k), 0.3 * k - std::floor(0.3 * k)};
    b = {0.001 + 0.002 * (k % 3), 0.5, 0.9};
  };
  WeightDegeneracy whole(n, 0.001, 1.0), first(n, 0.001, 1.0), second(n, 0.001, 1.0);
  std::vector<double> a, b;
  for (int k = 0; k < 200; ++k) {
    draw(k, a, b);
    whole.add(a, b);
    if (k < 77) first.add(a, b);
  }
  second.restore(first.save());
  for (int k = 77; k < 200; ++k) {
    draw(k, a, b);
    second.add(a, b);
  }
  const auto x = whole.stats(), y = second.stats();
  EXPECT_EQ(x.n_draws, y.n_draws);
  EXPECT_EQ(x.mean_max_weight, y.mean_max_weight);
  EXPECT_EQ(x.ess_per_draw, y.ess_per_draw);
  EXPECT_EQ(x.beta_at_lower_fraction, y.beta_at_lower_fraction);
  EXPECT_EQ(x.weight_handoff_rate, y.weight_handoff_rate);
  EXPECT_THROW(second.restore(std::vector<double>{1.0, 2.0}), std::invalid_argument);
  WeightDegeneracy other_n(4, 0.001, 1.0);
  EXPECT_THROW(other_n.restore(first.save()), std::invalid_argument);
}

}  // namespace
}  // namespace pemc::estimators
