// Tests of the mergeable weighted-moment accumulator (src/estimators/weighted_moments.hpp) against
// direct computations: exact for unweighted dyadic data, long double references for extreme log
// weights (exp(720) overflows a double but not an 80-bit long double).
#include "estimators/weighted_moments.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/error.hpp"

namespace pemc::estimators {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Sample {
  Vector x;
  double log_w;
};

// n samples of dimension d, x ~ N(1, 2^2) per coordinate, log weights uniform in [lo, hi].
std::vector<Sample> make_samples(int n, int d, double lo, double hi, std::uint64_t id) {
  // std::mt19937_64 (this test links only pemc_estimators, not pemc_rng); fixed seed per id.
  std::mt19937_64 gen(1000 + id);
  std::normal_distribution<double> normal(1.0, 2.0);
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<Sample> out;
  for (int i = 0; i < n; ++i) {
    Vector x(d);
    for (int k = 0; k < d; ++k) x[k] = normal(gen);
    out.push_back({x, lo == hi ? lo : uniform(gen)});
  }
  return out;
}

// Self-normalised moments in long double: sum exp(lw) x / sum exp(lw), no shifting needed.
struct Reference {
  std::vector<long double> mean, second;
  long double sum_w = 0, sum_w2 = 0;
};
Reference reference(const std::vector<Sample>& samples) {
  const int d = static_cast<int>(samples.front().x.size());
  Reference r;
  std::vector<long double> sx(d, 0.0L), sxx(d, 0.0L);
  for (const auto& s : samples) {
    if (s.log_w == kNegInf) continue;
    const long double w = std::exp(static_cast<long double>(s.log_w));
    r.sum_w += w;
    r.sum_w2 += w * w;
    for (int k = 0; k < d; ++k) {
      sx[k] += w * s.x[k];
      sxx[k] += w * s.x[k] * s.x[k];
    }
  }
  for (int k = 0; k < d; ++k) {
    r.mean.push_back(sx[k] / r.sum_w);
    r.second.push_back(sxx[k] / r.sum_w);
  }
  return r;
}

void expect_rel_near(double actual, double expected, double rel, const char* what, int k) {
  EXPECT_NEAR(actual, expected, rel * std::max(1.0, std::fabs(expected))) << what << "[" << k << "]";
}

void expect_matches(const WeightedMoments& m, const Reference& r, double rel) {
  const Vector mean = m.mean(), second = m.second_moment();
  ASSERT_EQ(mean.size(), static_cast<Eigen::Index>(r.mean.size()));
  for (int k = 0; k < mean.size(); ++k) {
    expect_rel_near(mean[k], static_cast<double>(r.mean[k]), rel, "mean", k);
    expect_rel_near(second[k], static_cast<double>(r.second[k]), rel, "second moment", k);
  }
  const double ess = static_cast<double>(r.sum_w * r.sum_w / r.sum_w2);
  EXPECT_NEAR(m.kish_ess(), ess, rel * ess);
  EXPECT_NEAR(m.log_sum_weights(), static_cast<double>(std::log(r.sum_w)),
              rel * std::max(1.0, static_cast<double>(std::fabs(std::log(r.sum_w)))));
}

// --- unweighted -------------------------------------------------------------------------------

TEST(WeightedMoments, UnweightedDyadicDataIsExact) {
  // Values k/8 with small k: every sum is exact in double, so the moments must be bit-exact.
  WeightedMoments m(2);
  double s0 = 0, s1 = 0, q0 = 0, q1 = 0;
  const int n = 64;
  for (int i = 0; i < n; ++i) {
    Vector x(2);
    x << (i % 13) / 8.0, -((i * 7) % 11) / 4.0;
    m.add(x);
    s0 += x[0];
    s1 += x[1];
    q0 += x[0] * x[0];
    q1 += x[1] * x[1];
  }
  EXPECT_EQ(m.count(), n);
  EXPECT_EQ(m.mean()[0], s0 / n);
  EXPECT_EQ(m.mean()[1], s1 / n);
  EXPECT_EQ(m.second_moment()[0], q0 / n);
  EXPECT_EQ(m.second_moment()[1], q1 / n);
  EXPECT_EQ(m.kish_ess(), n);
  EXPECT_DOUBLE_EQ(m.log_sum_weights(), std::log(static_cast<double>(n)));
}

TEST(WeightedMoments, UnweightedMatchesDirectComputation) {
  const auto samples = make_samples(5000, 3, 0.0, 0.0, 1);
  WeightedMoments m;  // dimension taken from the first sample
  Vector sum = Vector::Zero(3), sum2 = Vector::Zero(3);
  for (const auto& s : samples) {
    m.add(s.x);
    sum += s.x;
    sum2 += s.x.cwiseProduct(s.x);
  }
  // Same additions in the same order with weight exactly 1: identical up to Eigen's
  // vectorisation of the products (a few ulps at most).
  for (int k = 0; k < 3; ++k) {
    EXPECT_DOUBLE_EQ(m.mean()[k], sum[k] / 5000.0) << k;
    EXPECT_DOUBLE_EQ(m.second_moment()[k], sum2[k] / 5000.0) << k;
  }
  EXPECT_EQ(m.count(), 5000);
  EXPECT_EQ(m.kish_ess(), 5000.0);
}

// --- weighted, extreme log weights ----------------------------------------------------------

TEST(WeightedMoments, ExtremeLogWeightsDoNotOverflow) {
  // Log weights in [-760, 720]: exp overflows a double above ~709.8 and underflows below ~-745,
  // so a naive sum would give inf/inf or 0/0.
  auto samples = make_samples(2000, 3, -760.0, 720.0, 2);
  const Reference ref = reference(samples);
  // Arrival order matters for the running shift: random, increasing (a rescale at every sample,
  // the worst case for rounding) and decreasing (no rescale).
  for (int order = 0; order < 3; ++order) {
    SCOPED_TRACE(order);
    if (order == 1)
      std::sort(samples.begin(), samples.end(),
                [](const Sample& a, const Sample& b) { return a.log_w < b.log_w; });
    if (order == 2)
      std::sort(samples.begin(), samples.end(),
                [](const Sample& a, const Sample& b) { return a.log_w > b.log_w; });
    WeightedMoments m(3);
    for (const auto& s : samples) m.add(s.x, s.log_w);
    ASSERT_TRUE(m.mean().allFinite());
    ASSERT_TRUE(m.second_moment().allFinite());
    expect_matches(m, ref, 1e-12);
    EXPECT_EQ(m.count(), 2000);
  }
}

TEST(WeightedMoments, WeightsOnlyMatterUpToAConstant) {
  // Shifting every log weight by +-700 changes nothing but log_sum_weights (by exactly the shift).
  const auto samples = make_samples(500, 2, -3.0, 3.0, 3);
  WeightedMoments base(2), up(2), down(2);
  for (const auto& s : samples) {
    base.add(s.x, s.log_w);
    up.add(s.x, s.log_w + 700.0);
    down.add(s.x, s.log_w - 700.0);
  }
  for (const WeightedMoments* m : {&up, &down}) {
    for (int k = 0; k < 2; ++k) {
      EXPECT_NEAR(m->mean()[k], base.mean()[k], 1e-12 * std::fabs(base.mean()[k]));
      EXPECT_NEAR(m->second_moment()[k], base.second_moment()[k],
                  1e-12 * base.second_moment()[k]);
    }
    EXPECT_NEAR(m->kish_ess(), base.kish_ess(), 1e-12 * base.kish_ess());
  }
  EXPECT_NEAR(up.log_sum_weights(), base.log_sum_weights() + 700.0, 1e-10);
  EXPECT_NEAR(down.log_sum_weights(), base.log_sum_weights() - 700.0, 1e-10);
}

TEST(WeightedMoments, WeightedMatchesShiftedDirectComputation) {
  // A second, independent reference in plain double: shift by the maximum first.
  const auto samples = make_samples(300, 2, -700.0, 700.0, 4);
  double max_lw = kNegInf;
  for (const auto& s : samples) max_lw = std::max(max_lw, s.log_w);
  double sw = 0;
  Vector sx = Vector::Zero(2), sxx = Vector::Zero(2);
  for (const auto& s : samples) {
    const double w = std::exp(s.log_w - max_lw);
    sw += w;
    sx += w * s.x;
    sxx += w * s.x.cwiseProduct(s.x);
  }
  WeightedMoments m(2);
  for (const auto& s : samples) m.add(s.x, s.log_w);
  for (int k = 0; k < 2; ++k) {
    EXPECT_NEAR(m.mean()[k], sx[k] / sw, 1e-12 * std::max(1.0, std::fabs(sx[k] / sw)));
    EXPECT_NEAR(m.second_moment()[k], sxx[k] / sw, 1e-12 * sxx[k] / sw);
  }
  EXPECT_NEAR(m.log_sum_weights(), max_lw + std::log(sw), 1e-12 * std::fabs(max_lw));
}

// --- merge --------------------------------------------------------------------------------------

TEST(WeightedMoments, MergeEqualsAddingEverythingIntoOne) {
  // Parts on very different weight scales, so merge must rescale either side.
  const auto a_samples = make_samples(700, 3, -700.0, -500.0, 5);
  const auto b_samples = make_samples(400, 3, 500.0, 700.0, 6);
  const auto c_samples = make_samples(300, 3, -700.0, 700.0, 7);
  WeightedMoments all(3), a(3), b(3), c(3);
  std::vector<Sample> every;
  for (const auto* part : {&a_samples, &b_samples, &c_samples})
    every.insert(every.end(), part->begin(), part->end());
  for (const auto& s : every) all.add(s.x, s.log_w);
  for (const auto& s : a_samples) a.add(s.x, s.log_w);
  for (const auto& s : b_samples) b.add(s.x, s.log_w);
  for (const auto& s : c_samples) c.add(s.x, s.log_w);
  const Reference ref = reference(every);

  // (a + b) + c with the small-weight side receiving the large one ...
  WeightedMoments ab = a;
  ab.merge(b);
  ab.merge(c);
  // ... and c + (b + a) with the large-weight side receiving the small one.
  WeightedMoments ba = b;
  ba.merge(a);
  WeightedMoments cba = c;
  cba.merge(ba);
  for (const WeightedMoments* m : {&ab, &cba}) {
    EXPECT_EQ(m->count(), all.count());
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(m->mean()[k], all.mean()[k], 1e-12 * std::max(1.0, std::fabs(all.mean()[k])));
      EXPECT_NEAR(m->second_moment()[k], all.second_moment()[k],
                  1e-12 * all.second_moment()[k]);
    }
    EXPECT_NEAR(m->kish_ess(), all.kish_ess(), 1e-12 * all.kish_ess());
    EXPECT_NEAR(m->log_sum_weights(), all.log_sum_weights(),
                1e-12 * std::fabs(all.log_sum_weights()));
    expect_matches(*m, ref, 1e-12);
  }
}

TEST(WeightedMoments, MergeWithEmpty) {
  const auto samples = make_samples(100, 2, -5.0, 5.0, 8);
  WeightedMoments full(2);
  for (const auto& s : samples) full.add(s.x, s.log_w);

  // full += empty: unchanged.
  WeightedMoments x = full;
  x.merge(WeightedMoments(2));
  x.merge(WeightedMoments());  // dimension 0: "no samples yet"
  EXPECT_EQ(x.count(), full.count());
  EXPECT_EQ(x.mean(), full.mean());
  EXPECT_EQ(x.second_moment(), full.second_moment());
  EXPECT_EQ(x.kish_ess(), full.kish_ess());
  EXPECT_EQ(x.log_sum_weights(), full.log_sum_weights());

  // empty += full: a copy (also for a default-constructed, dimensionless accumulator).
  for (int d : {0, 2}) {
    WeightedMoments y(d);
    y.merge(full);
    EXPECT_EQ(y.count(), full.count());
    EXPECT_EQ(y.mean(), full.mean());
    EXPECT_EQ(y.second_moment(), full.second_moment());
    EXPECT_EQ(y.kish_ess(), full.kish_ess());
    EXPECT_EQ(y.log_sum_weights(), full.log_sum_weights());
  }

  // empty += empty.
  WeightedMoments e1, e2(3);
  e1.merge(e2);
  EXPECT_EQ(e1.count(), 0);
  EXPECT_EQ(e1.kish_ess(), 0.0);
  EXPECT_EQ(e1.log_sum_weights(), kNegInf);
}

TEST(WeightedMoments, MergeOfZeroWeightSamplesOnlyCounts) {
  WeightedMoments zero(2);
  zero.add(Vector::Constant(2, 1e300), kNegInf);
  zero.add(Vector::Constant(2, -3.0), kNegInf);
  WeightedMoments m(2);
  m.add(Vector::Constant(2, 4.0), 1.0);
  m.merge(zero);
  EXPECT_EQ(m.count(), 3);
  EXPECT_EQ(m.mean(), Vector::Constant(2, 4.0));
  EXPECT_EQ(m.kish_ess(), 1.0);
  // And the other way round: the dimension is carried over.
  WeightedMoments n0;
  n0.merge(zero);
  n0.add(Vector::Constant(2, 2.0));
  EXPECT_EQ(n0.count(), 3);
  EXPECT_EQ(n0.mean(), Vector::Constant(2, 2.0));
}

TEST(WeightedMoments, MergeRejectsMismatchedDimensions) {
  WeightedMoments a(2), b(3);
  a.add(Vector::Zero(2));
  b.add(Vector::Zero(3));
  EXPECT_THROW(a.merge(b), DataError);
}

// --- Kish ESS -------------------------------------------------------------------------------

TEST(WeightedMoments, KishEssIsNForEqualWeights) {
  for (double lw : {-700.0, 0.0, 123.456, 700.0}) {
    WeightedMoments m(1);
    for (int i = 0; i < 250; ++i) m.add(Vector::Constant(1, i), lw);
    EXPECT_EQ(m.kish_ess(), 250.0) << "log weight " << lw;
  }
}

TEST(WeightedMoments, KishEssIsOneWhenOneWeightDominates) {
  WeightedMoments m(1);
  for (int i = 0; i < 100; ++i) m.add(Vector::Constant(1, i), -800.0);
  m.add(Vector::Constant(1, 42.0), 0.0);  // exp(-800) relative: the others vanish exactly
  for (int i = 0; i < 100; ++i) m.add(Vector::Constant(1, i), -800.0);
  EXPECT_EQ(m.kish_ess(), 1.0);
  EXPECT_EQ(m.mean()[0], 42.0);
  EXPECT_EQ(m.second_moment()[0], 42.0 * 42.0);

  // Strong but not total domination: ESS = (1 + 99 e^-30)^2 / (1 + 99 e^-60), ~ 1 + 2e-11.
  WeightedMoments p(1);
  p.add(Vector::Constant(1, 1.0), 30.0);
  for (int i = 0; i < 99; ++i) p.add(Vector::Constant(1, 0.0), 0.0);
  const double r = 99.0 * std::exp(-30.0);
  // Each of the 99 additions of e^-30 to a sum near 1 rounds by up to ulp(1)/2 = 1.1e-16, so
  // sum_w is good to ~1.1e-14 and its square to ~2.2e-14: allow 1e-13.
  EXPECT_NEAR(p.kish_ess(), (1 + r) * (1 + r) / (1 + 99.0 * std::exp(-60.0)), 1e-13);
  EXPECT_GT(p.kish_ess(), 1.0);
}

TEST(WeightedMoments, KishEssForKnownWeights) {
  // Weights 1, 2, 3, 4: (10)^2 / 30.
  WeightedMoments m(1);
  for (int w = 1; w <= 4; ++w) m.add(Vector::Constant(1, w), std::log(static_cast<double>(w)));
  EXPECT_NEAR(m.kish_ess(), 100.0 / 30.0, 1e-14);
  EXPECT_NEAR(m.mean()[0], 30.0 / 10.0, 1e-14);          // sum w*w / sum w
  EXPECT_NEAR(m.second_moment()[0], 100.0 / 10.0, 1e-14);  // sum w*w^2 / sum w
}

// --- -inf and invalid weights ------------------------------------------------------------------

TEST(WeightedMoments, MinusInfinityLogWeightsAreIgnored) {
  const auto samples = make_samples(200, 2, -10.0, 10.0, 9);
  WeightedMoments with(2), without(2);
  // Zero-weight samples first (before any positive weight fixes the shift), interleaved and last;
  // their x values are huge, so any leak into the sums would show.
  with.add(Vector::Constant(2, 1e200), kNegInf);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    with.add(samples[i].x, samples[i].log_w);
    without.add(samples[i].x, samples[i].log_w);
    if (i % 10 == 0) with.add(Vector::Constant(2, -1e200), kNegInf);
  }
  with.add(Vector::Constant(2, 1e200), kNegInf);
  EXPECT_EQ(with.mean(), without.mean());
  EXPECT_EQ(with.second_moment(), without.second_moment());
  EXPECT_EQ(with.kish_ess(), without.kish_ess());
  EXPECT_EQ(with.log_sum_weights(), without.log_sum_weights());
  EXPECT_EQ(with.count(), without.count() + 2 + 20);  // counted, but weightless
}

TEST(WeightedMoments, OnlyZeroWeightsLeaveTheMomentsUndefined) {
  WeightedMoments m(2);
  m.add(Vector::Ones(2), kNegInf);
  EXPECT_EQ(m.count(), 1);
  EXPECT_EQ(m.kish_ess(), 0.0);
  EXPECT_EQ(m.log_sum_weights(), kNegInf);
  EXPECT_TRUE(m.mean().array().isNaN().all());  // documented: NaN, check kish_ess() > 0
}

TEST(WeightedMoments, RejectsNaNAndPlusInfinityLogWeightsAndWrongDimensions) {
  WeightedMoments m(2);
  m.add(Vector::Ones(2), 0.5);
  EXPECT_THROW(m.add(Vector::Ones(2), std::nan("")), NumericalError);
  EXPECT_THROW(m.add(Vector::Ones(2), std::numeric_limits<double>::infinity()), NumericalError);
  EXPECT_THROW(m.add(Vector::Ones(3)), DataError);
  // A rejected sample leaves the accumulator untouched.
  EXPECT_EQ(m.count(), 1);
  EXPECT_EQ(m.mean(), Vector::Ones(2));
  EXPECT_EQ(m.kish_ess(), 1.0);
}

}  // namespace
}  // namespace pemc::estimators
