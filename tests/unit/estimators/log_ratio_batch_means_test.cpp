// Tests of the batch-means SE of a log ratio of sums (src/estimators/log_ratio_batch_means.hpp):
// the estimate and the batch layout exactly, the SE formula on a hand example, then the SE against
// the known asymptotic SE of log-normal weights driven by correlated AR(1) chains, and across
// independent chains against the spread of their estimates (tolerances derived next to each test).
#include "estimators/log_ratio_batch_means.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/error.hpp"

namespace pemc::estimators {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

TEST(LogRatioBatchMeans, TheEstimateIsTheLogRatioOfAllSums) {
  LogRatioBatchMeans m(2);
  EXPECT_TRUE(std::isnan(m.log_ratio()));
  // Log values far beyond exp's range, and zeros (-inf): the sums are kept relative to the largest.
  const std::vector<double> la{700.0, 702.5, -kInfinity, 699.0, 701.0};
  const std::vector<double> lb{-800.0, -kInfinity, -799.0, -801.5, -800.5};
  for (std::size_t i = 0; i < la.size(); ++i) m.add(la[i], lb[i]);
  double sa = 0.0, sb = 0.0;
  for (double v : la) sa += std::exp(v - 700.0);
  for (double v : lb) sb += std::exp(v + 800.0);
  EXPECT_NEAR(m.log_ratio(), (std::log(sa) + 700.0) - (std::log(sb) - 800.0), 1e-12);
  EXPECT_EQ(m.count(), 5);
}

TEST(LogRatioBatchMeans, BatchesDoubleWhenTwiceTheirNumberAreFull) {
  LogRatioBatchMeans m(4);
  for (int i = 0; i < 8; ++i) m.add(0.0, 0.0);
  EXPECT_EQ(m.batch_size(), 1);
  EXPECT_EQ(m.n_full_batches(), 8);
  m.add(0.0, 0.0);  // the ninth: 8 batches of 1 merge into 4 of 2, then a new one starts
  EXPECT_EQ(m.batch_size(), 2);
  EXPECT_EQ(m.n_full_batches(), 4);
  for (int i = 0; i < 7; ++i) m.add(0.0, 0.0);  // 16 observations: 8 full batches of 2
  EXPECT_EQ(m.batch_size(), 2);
  EXPECT_EQ(m.n_full_batches(), 8);
  EXPECT_EQ(m.count(), 16);
}

// Four batches of one observation: SE^2 = (1/k) sum_j r_j^2 / (k - 1), r_j = a_j/abar - b_j/bbar.
TEST(LogRatioBatchMeans, TheSeIsTheDeltaMethodOnTheBatchSums) {
  LogRatioBatchMeans m(2);
  const std::vector<double> a{1.0, 2.0, 4.0, 3.0}, b{2.0, 2.0, 1.0, 5.0};
  for (std::size_t i = 0; i < a.size(); ++i) m.add(std::log(a[i]), std::log(b[i]));
  EXPECT_TRUE(std::isfinite(m.log_ratio_se()));
  const double abar = 2.5, bbar = 2.5;
  double ss = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) ss += std::pow(a[i] / abar - b[i] / bbar, 2);
  EXPECT_NEAR(m.log_ratio_se(), std::sqrt(ss / 3.0 / 4.0), 1e-14);
  // A fifth observation starts a partial batch (3 batches of 2 afterwards: 2 full, 1 partial);
  // the SE of the full batches is scaled by sqrt(n_full / n) = sqrt(4 / 5).
  m.add(std::log(7.0), std::log(1.0));
  const double a1 = 3.0, a2 = 7.0, b1 = 4.0, b2 = 6.0;  // the two merged batches
  const double ma = (a1 + a2) / 2, mb = (b1 + b2) / 2;
  const double r1 = a1 / ma - b1 / mb, r2 = a2 / ma - b2 / mb;
  EXPECT_NEAR(m.log_ratio_se(), std::sqrt((r1 * r1 + r2 * r2) / 1.0 / 2.0 * 4.0 / 5.0), 1e-14);
}

TEST(LogRatioBatchMeans, UndefinedWithoutTwoFullBatchesOrWithAZeroSum) {
  LogRatioBatchMeans m(2);
  m.add(0.0, 0.0);
  EXPECT_TRUE(std::isnan(m.log_ratio_se()));
  LogRatioBatchMeans zero(2);
  for (int i = 0; i < 4; ++i) zero.add(0.0, -kInfinity);
  EXPECT_TRUE(std::isnan(zero.log_ratio()));
  EXPECT_TRUE(std::isnan(zero.log_ratio_se()));
  EXPECT_THROW(LogRatioBatchMeans(1), std::invalid_argument);
}

// Log-normal weights a_t = exp(z_t), b_t = exp(u_t) from two stationary AR(1) chains with
// correlation rho, stationary variance s2 and innovations correlated kappa:
//   z_t = rho z_{t-1} + sqrt(1 - rho^2) sqrt(s2) e_t,
//   u_t = rho u_{t-1} + sqrt(1 - rho^2) sqrt(s2) (kappa e_t + sqrt(1 - kappa^2) f_t),
// so Cov(z_0, z_k) = Cov(u_0, u_k) = s2 rho^|k| and Cov(z_0, u_k) = kappa s2 rho^|k|. With
// E a = E b = mu = exp(s2 / 2) and Cov(exp X, exp Y) = mu^2 (exp Cov(X, Y) - 1) for jointly normal
// X, Y of variance s2, the delta method's asymptotic variance of log(sum a / sum b) is V / n with
//   V = sum_{k in Z} [Cov(a_0, a_k) + Cov(b_0, b_k) - 2 Cov(a_0, b_k)] / mu^2
//     = 2 sum_{k in Z} [exp(s2 rho^|k|) - exp(kappa s2 rho^|k|)].
struct CorrelatedLogNormal {
  double rho = 0.9, s2 = 0.25, kappa = 0.3;

  double asymptotic_variance() const {
    double v = 0.0;
    for (int k = 0; k < 2000; ++k) {
      const double c = s2 * std::pow(rho, k);
      v += (k == 0 ? 1.0 : 2.0) * 2.0 * (std::exp(c) - std::exp(kappa * c));
    }
    return v;
  }

  LogRatioBatchMeans chain(std::int64_t n, std::mt19937_64& gen, int n_batches = 32) const {
    std::normal_distribution<double> normal(0.0, 1.0);
    const double sd = std::sqrt(s2), step = std::sqrt(1.0 - rho * rho) * sd;
    const double other = std::sqrt(1.0 - kappa * kappa);
    double e = normal(gen), f = normal(gen);
    double z = sd * e, u = sd * (kappa * e + other * f);  // the stationary joint law
    LogRatioBatchMeans m(n_batches);
    for (std::int64_t t = 0; t < n; ++t) {
      m.add(z, u);
      e = normal(gen);
      f = normal(gen);
      z = rho * z + step * e;
      u = rho * u + step * (kappa * e + other * f);
    }
    return m;
  }
};

// One chain of n = 64 x 4096: exactly k = 64 full batches of m = 4096, against an integrated
// autocorrelation time of about (1 + rho) / (1 - rho) = 19, so the batch means' own bias (of
// order tau / m) is a fraction of a percent. With k batches the SE's relative sampling error is
// about 1 / sqrt(2 (k - 1)) = 0.089; the test allows three of those.
TEST(LogRatioBatchMeans, MatchesTheKnownAsymptoticSeOfAnAr1Chain) {
  const CorrelatedLogNormal model;
  const std::int64_t n = 64 * 4096;
  std::mt19937_64 gen(20261127);
  const auto m = model.chain(n, gen);
  ASSERT_EQ(m.n_full_batches(), 64);
  ASSERT_EQ(m.batch_size(), 4096);
  const double se_true = std::sqrt(model.asymptotic_variance() / static_cast<double>(n));
  const double tolerance = 3.0 / std::sqrt(2.0 * 63.0);
  EXPECT_NEAR(m.log_ratio_se() / se_true, 1.0, tolerance) << "SE " << m.log_ratio_se() << " vs "
                                                          << se_true;
  // The estimate of log(mu / mu) = 0, within 4 of its SE.
  EXPECT_NEAR(m.log_ratio(), 0.0, 4.0 * se_true);
}

// R = 32 independent chains of n = 64 x 1024 (k = 64 batches of m = 1024 each, still ~50 tau):
//  - the mean of the R squared SEs estimates se_true^2 with relative error sqrt(2 / 63) / sqrt(R)
//    = 0.031 (batch-means variances are ~ chi^2_63 / 63); allowed: 3 of those plus the batch means'
//    bias of a few tau / m (~2 %);
//  - the spread of the R estimates: their sample variance over se_true^2 is ~ chi^2_31 / 31, whose
//    0.1 % and 99.9 % points are 0.39 and 1.94.
TEST(LogRatioBatchMeans, TheSeMatchesTheSpreadOfIndependentChains) {
  const CorrelatedLogNormal model;
  const std::int64_t n = 64 * 1024;
  const int r = 32;
  std::mt19937_64 gen(31);
  double sum_se2 = 0.0, sum = 0.0, sum_sq = 0.0;
  for (int c = 0; c < r; ++c) {
    const auto m = model.chain(n, gen);
    sum_se2 += m.log_ratio_se() * m.log_ratio_se();
    sum += m.log_ratio();
    sum_sq += m.log_ratio() * m.log_ratio();
  }
  const double se2_true = model.asymptotic_variance() / static_cast<double>(n);
  EXPECT_NEAR(sum_se2 / r / se2_true, 1.0, 3.0 * std::sqrt(2.0 / 63.0 / r) + 0.02);
  const double spread = (sum_sq - sum * sum / r) / (r - 1.0);
  EXPECT_GT(spread / se2_true, 0.39);
  EXPECT_LT(spread / se2_true, 1.94);
}

TEST(LogRatioBatchMeans, SerializeRoundTripsAndContinuesIdentically) {
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal(0.0, 3.0);
  LogRatioBatchMeans whole(4), first(4);
  std::vector<double> la, lb;
  for (int i = 0; i < 101; ++i) {
    la.push_back(normal(gen));
    lb.push_back(i % 7 == 0 ? -kInfinity : normal(gen));
  }
  for (int i = 0; i < 101; ++i) whole.add(la[i], lb[i]);
  for (int i = 0; i < 45; ++i) first.add(la[i], lb[i]);
  auto resumed = LogRatioBatchMeans::deserialize(first.serialize());
  for (int i = 45; i < 101; ++i) resumed.add(la[i], lb[i]);
  EXPECT_EQ(resumed.serialize(), whole.serialize());
  EXPECT_EQ(resumed.log_ratio_se(), whole.log_ratio_se());
}

TEST(LogRatioBatchMeans, DeserializeRejectsWhatIsNotALayout) {
  LogRatioBatchMeans m(2);
  for (int i = 0; i < 5; ++i) m.add(0.5 * i, -0.5 * i);
  auto good = m.serialize();
  EXPECT_NO_THROW(LogRatioBatchMeans::deserialize(good));
  auto short_one = good;
  short_one.pop_back();
  EXPECT_THROW(LogRatioBatchMeans::deserialize(short_one), DataError);
  auto wrong_count = good;
  wrong_count[2] = 6;
  EXPECT_THROW(LogRatioBatchMeans::deserialize(wrong_count), DataError);
  auto negative = good;
  negative[5] = -1.0;
  EXPECT_THROW(LogRatioBatchMeans::deserialize(negative), DataError);
  EXPECT_THROW(LogRatioBatchMeans::deserialize(std::vector<double>{1, 1, 0, 0, 0}), DataError);
}

}  // namespace
}  // namespace pemc::estimators
