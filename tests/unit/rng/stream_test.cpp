// Tests of the counter-based random streams (src/rng/stream.hpp).
//
// Statistical checks use fixed seeds and tolerances of 4 standard errors of the estimator, derived
// from the known distribution (no tuning): with a fixed seed a check either always passes or always
// fails, and a correct generator fails a 4-SE check with probability ~6e-5 per seed choice.
#include "rng/stream.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace pemc::rng {
namespace {

constexpr std::uint64_t kSeed = 20240611;

std::vector<std::uint64_t> take_bits(Stream s, int n) {
  std::vector<std::uint64_t> out(static_cast<std::size_t>(n));
  for (auto& b : out) b = s.bits();
  return out;
}

// --- determinism and keying -------------------------------------------------------------------

TEST(Stream, SameKeyAndCounterGiveIdenticalSequences) {
  Stream a(kSeed, Domain::kTransition, 17, 42);
  Stream b(kSeed, Domain::kTransition, 17, 42);
  // Mixed use: bits, uniforms, normals (with the cached second value) and below must all agree.
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(a.bits(), b.bits()) << "i=" << i;
    ASSERT_EQ(a.uniform(), b.uniform()) << "i=" << i;
    ASSERT_EQ(a.normal(), b.normal()) << "i=" << i;
    ASSERT_EQ(a.below(1000), b.below(1000)) << "i=" << i;
  }
}

TEST(Stream, ChangingAnyOfSeedDomainIdStepChangesTheSequence) {
  constexpr int n = 16;  // 4 Philox blocks: crosses the block counter too
  const auto base = take_bits(Stream(kSeed, Domain::kTransition, 5, 9), n);
  const std::array<std::vector<std::uint64_t>, 4> changed = {
      take_bits(Stream(kSeed + 1, Domain::kTransition, 5, 9), n),
      take_bits(Stream(kSeed, Domain::kInitialPoint, 5, 9), n),
      take_bits(Stream(kSeed, Domain::kTransition, 6, 9), n),
      take_bits(Stream(kSeed, Domain::kTransition, 5, 10), n)};
  const char* what[] = {"seed", "domain", "id", "step"};
  for (int k = 0; k < 4; ++k) {
    // Not merely "some word differs": a keyed PRF gives unrelated outputs, so no 64-bit word of
    // the changed sequence should coincide with the base one at the same position.
    for (int i = 0; i < n; ++i)
      EXPECT_NE(changed[k][i], base[i]) << "changing the " << what[k] << " left word " << i;
  }
  // The four changed sequences also differ from each other (e.g. id and step are not swapped
  // into the same counter word).
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) EXPECT_NE(changed[a], changed[b]) << what[a] << " vs " << what[b];
  // Swapping id and step is a different stream.
  EXPECT_NE(take_bits(Stream(kSeed, Domain::kTransition, 9, 5), n), base);
}

TEST(Stream, ConsecutiveBlocksOfOneStreamDiffer) {
  const auto v = take_bits(Stream(kSeed, Domain::kTest, 0, 0), 64);
  for (std::size_t i = 4; i < v.size(); ++i) EXPECT_NE(v[i], v[i - 4]) << i;
}

// --- uniform ----------------------------------------------------------------------------------

TEST(Stream, UniformIsStrictlyInsideTheUnitIntervalAndHasTheRightMoments) {
  constexpr int n = 1'000'000;
  Stream s(kSeed, Domain::kTest, 1, 0);
  double sum = 0.0, sum2 = 0.0, lo = 1.0, hi = 0.0;
  for (int i = 0; i < n; ++i) {
    const double u = s.uniform();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    ASSERT_TRUE(std::isfinite(std::log(u)) && std::isfinite(std::log1p(-u)));
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    sum += u;
    sum2 += u * u;
  }
  // U(0,1): mean 1/2, Var(u) = 1/12 -> SE(mean) = sqrt(1/(12 n)).
  // E[u^2] = 1/3, Var(u^2) = E[u^4] - 1/9 = 1/5 - 1/9 = 4/45 -> SE = sqrt(4/(45 n)).
  EXPECT_NEAR(sum / n, 0.5, 4.0 * std::sqrt(1.0 / (12.0 * n)));
  EXPECT_NEAR(sum2 / n, 1.0 / 3.0, 4.0 * std::sqrt(4.0 / (45.0 * n)));
  // The minimum of n uniforms exceeds t with probability (1-t)^n; t = 20/n gives e^-20.
  EXPECT_LT(lo, 20.0 / n);
  EXPECT_GT(hi, 1.0 - 20.0 / n);
}

// The mapping from bits to (0, 1) must be exact at both ends. We cannot choose the bits, so check
// the arithmetic used by uniform() on the extreme inputs: the largest 52-bit k must map below 1.
TEST(Stream, UniformMappingOfExtremeBitPatternsStaysInsideTheInterval) {
  const double k_max = static_cast<double>((~std::uint64_t{0}) >> 12);
  const double u_max = (k_max + 0.5) * 0x1.0p-52;
  const double u_min = (0.0 + 0.5) * 0x1.0p-52;
  EXPECT_LT(u_max, 1.0);
  EXPECT_EQ(u_max, 1.0 - 0x1.0p-53);
  EXPECT_GT(u_min, 0.0);
  // And uniform() is of this form: 2^52 * u - 0.5 is an integer in [0, 2^52).
  Stream s(kSeed, Domain::kTest, 2, 0);
  for (int i = 0; i < 1000; ++i) {
    const double k = s.uniform() * 0x1.0p52 - 0.5;
    ASSERT_EQ(k, std::floor(k));
    ASSERT_GE(k, 0.0);
    ASSERT_LE(k, k_max);
  }
}

// --- normal -----------------------------------------------------------------------------------

TEST(Stream, NormalMomentsMatchTheStandardNormal) {
  constexpr int n = 1'000'000;
  Stream s(kSeed, Domain::kTest, 3, 0);
  std::vector<double> x(n);
  for (auto& v : x) {
    v = s.normal();
    ASSERT_TRUE(std::isfinite(v));
  }
  double m1 = 0.0;
  for (double v : x) m1 += v;
  m1 /= n;
  double m2 = 0.0, m3 = 0.0, m4 = 0.0, lag1 = 0.0;
  for (int i = 0; i < n; ++i) {
    const double d = x[i] - m1, d2 = d * d;
    m2 += d2;
    m3 += d2 * d;
    m4 += d2 * d2;
    if (i > 0) lag1 += x[i] * x[i - 1];
  }
  m2 /= n;
  m3 /= n;
  m4 /= n;
  lag1 /= (n - 1);
  const double rn = static_cast<double>(n);
  // Standard errors for N(0,1) samples (moments mu_k = E[x^k]: mu2 = 1, mu4 = 3, mu6 = 15, mu8 = 105):
  //  mean:      Var = mu2 / n = 1/n.
  //  variance:  Var(s^2) ~ (mu4 - mu2^2) / n = 2/n.
  //  skewness:  m3 / m2^{3/2}, asymptotic Var = 6/n (delta method; e.g. Kendall & Stuart).
  //  kurtosis:  m4 / m2^2,     asymptotic Var = 24/n (delta method, normal parent).
  //  lag-1 autocorrelation of independent N(0,1): Var(mean of x_i x_{i-1}) = 1/n; the Box-Muller
  //  pair (r cos, r sin) is uncorrelated, so adjacent values must show no correlation either.
  EXPECT_NEAR(m1, 0.0, 4.0 * std::sqrt(1.0 / rn));
  EXPECT_NEAR(m2, 1.0, 4.0 * std::sqrt(2.0 / rn));
  EXPECT_NEAR(m3 / std::pow(m2, 1.5), 0.0, 4.0 * std::sqrt(6.0 / rn));
  EXPECT_NEAR(m4 / (m2 * m2), 3.0, 4.0 * std::sqrt(24.0 / rn));
  EXPECT_NEAR(lag1, 0.0, 4.0 * std::sqrt(1.0 / rn));

  // Shape, not just moments: the empirical CDF at a few points. Each fraction is a binomial
  // proportion with SE sqrt(p (1 - p) / n). Phi values to 10 digits.
  const double z[] = {-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0};
  const double phi[] = {0.0013498980, 0.0227501319, 0.1586552539, 0.5,
                        0.8413447461, 0.9772498681, 0.9986501020};
  for (int k = 0; k < 7; ++k) {
    std::int64_t below = 0;
    for (double v : x) below += v < z[k];
    const double p = phi[k];
    EXPECT_NEAR(static_cast<double>(below) / rn, p, 4.0 * std::sqrt(p * (1.0 - p) / rn))
        << "P(x < " << z[k] << ")";
  }
}

TEST(Stream, FillNormalEqualsRepeatedNormalAndKeepsTheCachedValue) {
  Stream a(kSeed, Domain::kTest, 4, 0);
  Stream b(kSeed, Domain::kTest, 4, 0);
  Vector v(5);  // odd: the 5th value leaves the second Box-Muller value cached
  a.fill_normal(v);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(v[i], b.normal()) << i;
  // The cached 6th value comes next from both.
  EXPECT_EQ(a.normal(), b.normal());
  // A block of a larger vector, through an Eigen::Ref to a segment.
  Vector w = Vector::Constant(10, -99.0);
  a.fill_normal(w.segment(2, 6));
  EXPECT_EQ(w[0], -99.0);
  EXPECT_EQ(w[1], -99.0);
  for (int i = 2; i < 8; ++i) EXPECT_EQ(w[i], b.normal()) << i;
  EXPECT_EQ(w[8], -99.0);
  EXPECT_EQ(w[9], -99.0);
  // Empty vector: consumes nothing.
  Vector e(0);
  a.fill_normal(e);
  EXPECT_EQ(a.normal(), b.normal());
  EXPECT_EQ(a.bits(), b.bits());
}

TEST(Stream, FillNormalValuesAreDistinctAndFinite) {
  Stream s(kSeed, Domain::kTest, 5, 0);
  Vector v(1000);
  s.fill_normal(v);
  EXPECT_TRUE(v.allFinite());
  std::vector<double> sorted(v.data(), v.data() + v.size());
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  // 1000 N(0,1): mean within 4 SE = 4/sqrt(1000).
  EXPECT_NEAR(v.mean(), 0.0, 4.0 / std::sqrt(1000.0));
}

// --- below ------------------------------------------------------------------------------------

// Chi-square upper critical value for 6 degrees of freedom at p = 1e-4. For even k = 2m the
// survival function is exp(-x/2) sum_{j<m} (x/2)^j / j!, checked below.
constexpr double kChi2Df6P1em4 = 27.856341;

TEST(Stream, Chi2CriticalValueIsRight) {
  const double h = kChi2Df6P1em4 / 2.0;
  const double sf = std::exp(-h) * (1.0 + h + h * h / 2.0);
  EXPECT_NEAR(sf, 1e-4, 1e-9);
}

TEST(Stream, BelowSevenIsUniformByChiSquare) {
  constexpr int n_bins = 7;
  constexpr int n = 700'000;
  Stream s(kSeed, Domain::kTest, 6, 0);
  std::array<std::int64_t, n_bins> count{};
  for (int i = 0; i < n; ++i) {
    const std::uint64_t k = s.below(n_bins);
    ASSERT_LT(k, static_cast<std::uint64_t>(n_bins));
    ++count[k];
  }
  const double expected = static_cast<double>(n) / n_bins;
  double chi2 = 0.0;
  for (auto c : count) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, kChi2Df6P1em4) << "counts far from uniform";
}

// For n = 3 * 2^62 a plain `bits % n` would return values in [0, 2^62) with probability 1/2
// instead of 1/3: this checks that the rejection step is really there for large n.
TEST(Stream, BelowIsUnbiasedForLargeN) {
  constexpr std::uint64_t big = 3ull << 62;
  constexpr int n = 40'000;
  Stream s(kSeed, Domain::kTest, 7, 0);
  std::int64_t low = 0;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t k = s.below(big);
    ASSERT_LT(k, big);
    low += k < (1ull << 62);
  }
  const double p = 1.0 / 3.0;
  EXPECT_NEAR(static_cast<double>(low) / n, p, 4.0 * std::sqrt(p * (1 - p) / n));
}

TEST(Stream, BelowEdgeCases) {
  Stream s(kSeed, Domain::kTest, 8, 0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(s.below(1), 0u);
  // n = 2^64 - 1: every value but the top one is accepted.
  for (int i = 0; i < 100; ++i) EXPECT_LT(s.below(UINT64_MAX), UINT64_MAX);
  // A power of two: no rejection at all, so below(2^k) is the low bits of bits().
  Stream a(kSeed, Domain::kTest, 9, 0), b(kSeed, Domain::kTest, 9, 0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.below(1024), b.bits() % 1024);
  EXPECT_THROW(s.below(0), std::invalid_argument);
}

}  // namespace
}  // namespace pemc::rng
