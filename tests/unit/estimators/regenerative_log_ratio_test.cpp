// Tests of the regenerative SE of a log ratio of sums (src/estimators/regenerative_log_ratio.hpp):
// the SE formula on hand-made tours, what enters it (complete tours only, scaled to every
// observation), sums kept relative to the largest log value, checkpoints; then, on a chain with
// long excursions that hold it far from where it regenerates, the SE against the spread of
// independent chains; and the tours' Pareto k-hat.
#include "estimators/regenerative_log_ratio.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "estimators/log_ratio_batch_means.hpp"

namespace pemc::estimators {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Adds tours given as their observations (a_t, b_t), each tour starting at a regeneration.
void add_tours(RegenerativeLogRatio& r, const std::vector<std::vector<std::pair<double, double>>>& tours) {
  for (const auto& tour : tours)
    for (std::size_t t = 0; t < tour.size(); ++t)
      r.add(std::log(tour[t].first), std::log(tour[t].second), t == 0);
}

// Three complete tours (the third is closed by the fourth's start) with sums A = (3, 1, 5),
// B = (2, 4, 3); SE^2 = (1/T) sum_i (A_i / Abar - B_i / Bbar)^2 / (T - 1), scaled by
// in_tours / n.
TEST(RegenerativeLogRatio, TheSeIsTheDeltaMethodOverCompleteTours) {
  RegenerativeLogRatio r;
  EXPECT_TRUE(std::isnan(r.log_ratio_se()));
  r.add(std::log(7.0), std::log(7.0), false);  // before the first regeneration: not in the SE
  add_tours(r, {{{1.0, 1.0}, {2.0, 1.0}}, {{1.0, 4.0}}, {{2.0, 1.0}, {2.0, 1.0}, {1.0, 1.0}},
                {{4.0, 4.0}}});                 // the last tour is still open
  EXPECT_EQ(r.n_tours(), 3);
  EXPECT_EQ(r.count(), 8);
  const std::vector<double> a{3.0, 1.0, 5.0}, b{2.0, 4.0, 3.0};
  const double abar = 3.0, bbar = 3.0;
  double ss = 0.0;
  for (int i = 0; i < 3; ++i) ss += std::pow(a[i] / abar - b[i] / bbar, 2);
  const double in_tours = 6.0, n = 8.0;
  EXPECT_NEAR(r.log_ratio_se(), std::sqrt(ss / 2.0 / 3.0 * in_tours / n), 1e-14);
}

TEST(RegenerativeLogRatio, UndefinedWithoutTwoToursOrWithAZeroMean) {
  RegenerativeLogRatio r;
  for (int t = 0; t < 50; ++t) r.add(0.0, 0.0, false);  // never regenerates
  EXPECT_EQ(r.n_tours(), 0);
  EXPECT_TRUE(std::isnan(r.log_ratio_se()));
  r.add(0.0, 0.0, true);
  r.add(0.0, 0.0, true);  // one complete tour
  EXPECT_TRUE(std::isnan(r.log_ratio_se()));
  RegenerativeLogRatio zero;
  for (int t = 0; t < 6; ++t) zero.add(0.0, -kInfinity, true);
  EXPECT_EQ(zero.n_tours(), 5);
  EXPECT_TRUE(std::isnan(zero.log_ratio_se()));
}

// The same tours with every log value shifted by +-700 (beyond exp's range) give the same SE:
// each channel's sums are kept relative to its largest log value, rescaled as it grows.
TEST(RegenerativeLogRatio, SumsAreKeptRelativeToTheLargestLogValue) {
  std::mt19937_64 gen(3);
  std::normal_distribution<double> normal(0.0, 2.0);
  std::bernoulli_distribution starts(0.2);
  RegenerativeLogRatio plain, shifted;
  for (int t = 0; t < 500; ++t) {
    const double la = normal(gen), lb = t % 9 == 0 ? -kInfinity : normal(gen);
    const bool s = starts(gen);
    plain.add(la, lb, s);
    shifted.add(la + 700.0, lb - 700.0, s);
  }
  ASSERT_GT(plain.n_tours(), 50);
  EXPECT_NEAR(shifted.log_ratio_se() / plain.log_ratio_se(), 1.0, 1e-10);
}

TEST(RegenerativeLogRatio, SerializeRoundTripsAndContinuesIdentically) {
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::bernoulli_distribution starts(0.1);
  std::vector<double> la, lb;
  std::vector<bool> s;
  for (int i = 0; i < 301; ++i) {
    la.push_back(normal(gen));
    lb.push_back(i % 7 == 0 ? -kInfinity : normal(gen));
    s.push_back(starts(gen));
  }
  RegenerativeLogRatio whole, first;
  for (int i = 0; i < 301; ++i) whole.add(la[i], lb[i], s[i]);
  for (int i = 0; i < 145; ++i) first.add(la[i], lb[i], s[i]);
  auto resumed = RegenerativeLogRatio::deserialize(first.serialize());
  for (int i = 145; i < 301; ++i) resumed.add(la[i], lb[i], s[i]);
  EXPECT_EQ(resumed.serialize(), whole.serialize());
  EXPECT_EQ(resumed.log_ratio_se(), whole.log_ratio_se());
}

TEST(RegenerativeLogRatio, DeserializeRejectsWhatIsNotALayout) {
  RegenerativeLogRatio r;
  for (int i = 0; i < 9; ++i) r.add(0.5 * i, -0.5 * i, i % 3 == 0);
  const auto good = r.serialize();
  EXPECT_NO_THROW(RegenerativeLogRatio::deserialize(good));
  auto short_one = good;
  short_one.pop_back();
  EXPECT_THROW(RegenerativeLogRatio::deserialize(short_one), DataError);
  auto too_many = good;
  too_many[1] = 100.0;  // more observations in tours than observations
  EXPECT_THROW(RegenerativeLogRatio::deserialize(too_many), DataError);
  auto flag = good;
  flag[2] = 0.5;
  EXPECT_THROW(RegenerativeLogRatio::deserialize(flag), DataError);
  auto nan = good;
  nan[6] = std::numeric_limits<double>::quiet_NaN();  // the first tour's log sum
  EXPECT_THROW(RegenerativeLogRatio::deserialize(nan), DataError);
}

// A level process like simulated tempering's: a lazy walk on 0..K-1 that regenerates at 0 and,
// once at the top, stays there for a geometric holding time of mean `hold` steps (a mode that
// holds the chain). Observations a_t = [k_t = K-1], b_t = [k_t = 0]: log(sum a / sum b) estimates
// log(pi(K-1) / pi(0)). An excursion to the top lasts hundreds of steps, so batches of 1/64 of a
// chain hold only a few excursions each and are correlated with their neighbours.
struct StickyLevels {
  int k_levels = 8;
  double hold = 400.0;

  void run(std::int64_t n, std::mt19937_64& gen, RegenerativeLogRatio& regen,
           LogRatioBatchMeans& batches) const {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    int k = 0;
    for (std::int64_t t = 0; t < n; ++t) {
      const bool fresh = k == 0;
      if (k == k_levels - 1) {
        if (u(gen) < 1.0 / hold) k -= 1;
      } else {
        const double v = u(gen);
        if (v < 0.5) k = std::max(0, k - 1);
        else k += 1;
      }
      const double la = k == k_levels - 1 ? 0.0 : -kInfinity;
      const double lb = k == 0 ? 0.0 : -kInfinity;
      regen.add(la, lb, fresh);
      batches.add(la, lb);
    }
  }
};

// R = 200 independent chains of n = 2^16 steps (about 100 excursions to the top each): the mean
// of the squared regenerative SEs against the variance of the R estimates. The ratio of two
// variance estimates from 200 chains has a relative sd of about 0.1 to 0.15 here (the estimates'
// variance is a chi^2_199 / 199, sd 0.1; the SEs average over 200 chains); the test allows 0.3.
TEST(RegenerativeLogRatio, MatchesTheSpreadOfIndependentChains) {
  const StickyLevels model;
  const std::int64_t n = std::int64_t{1} << 16;
  const int r = 200;
  std::mt19937_64 gen(20261128);
  double sum_se2 = 0.0, sum = 0.0, sum_sq = 0.0;
  for (int c = 0; c < r; ++c) {
    RegenerativeLogRatio regen;
    LogRatioBatchMeans batches(32);  // the estimate itself: log(sum a / sum b) over every step
    model.run(n, gen, regen, batches);
    sum_se2 += regen.log_ratio_se() * regen.log_ratio_se();
    sum += batches.log_ratio();
    sum_sq += batches.log_ratio() * batches.log_ratio();
  }
  const double spread = (sum_sq - sum * sum / r) / (r - 1.0);
  EXPECT_NEAR(sum_se2 / r / spread, 1.0, 0.3) << "regenerative SE^2 " << sum_se2 / r
                                               << " vs spread " << spread;
}

// Tours whose sums have a Pareto tail of shape k (A_i = U^{-k}) and light-tailed B_i: the tours'
// k-hat is the heavier channel's, within 4 sd ((1 + k) / sqrt(M), M = 3 sqrt(2000) = 135 tail
// tours) of k.
TEST(RegenerativeLogRatio, TheToursParetoKHatIsTheHeavierChannels) {
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (double k : {0.2, 0.9}) {
    RegenerativeLogRatio r;
    for (int i = 0; i <= 2000; ++i) r.add(-k * std::log(1.0 - u(gen)), 0.1 * u(gen), true);
    ASSERT_EQ(r.n_tours(), 2000);
    EXPECT_NEAR(r.tour_pareto_k(), k, 4.0 * (1.0 + k) / std::sqrt(135.0)) << "k = " << k;
  }
  RegenerativeLogRatio few;
  for (int i = 0; i < 20; ++i) few.add(0.0, 0.0, true);
  EXPECT_TRUE(std::isnan(few.tour_pareto_k()));
}

}  // namespace
}  // namespace pemc::estimators
