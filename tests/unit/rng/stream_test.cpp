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

// The reproducibility contract in its plainest form: word k of a stream is word k % 4 of the
// Philox4x64-10 block with key (seed, domain) and counter (id, step, k / 4, 0). Pins the draws
// against a direct Random123 call, whatever the stream does internally (it computes its first
// block when constructed, to start that dependent chain early).
TEST(Stream, BitsAreThePhiloxBlocksOfTheKeyAndCounterInOrder) {
  using Philox = r123::Philox4x64;
  const std::uint64_t id = 17, step = 42;
  const Philox::key_type key = {{kSeed, static_cast<std::uint64_t>(Domain::kTransition)}};
  std::vector<std::uint64_t> expected;
  for (std::uint64_t block = 0; block < 3; ++block) {
    const Philox::ctr_type ctr = {{id, step, block, 0}};
    const Philox::ctr_type out = Philox()(ctr, key);
    expected.insert(expected.end(), out.v, out.v + 4);
  }
  EXPECT_EQ(take_bits(Stream(kSeed, Domain::kTransition, id, step), 12), expected);
  // Copies continue from where the original stood, block boundaries included.
  Stream s(kSeed, Domain::kTransition, id, step);
  for (int i = 0; i < 5; ++i) s.bits();
  Stream copy = s;
  for (std::size_t i = 5; i < 12; ++i) {
    EXPECT_EQ(s.bits(), expected[i]);
    EXPECT_EQ(copy.bits(), expected[i]);
  }
  // uniform_if(false) consumes nothing, also at the start of a stream.
  Stream t(kSeed, Domain::kTransition, id, step);
  EXPECT_EQ(t.uniform_if(false), 0.0);
  EXPECT_EQ(t.bits(), expected[0]);
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
  //  lag-1 autocorrelation of independent N(0,1): Var(mean of x_i x_{i-1}) = 1/n (consecutive
  //  draws use disjoint random words, so adjacent values must show no correlation).
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
  Vector v(5);  // odd: (with a pairwise generator, a cached second value would be left over)
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

// --- the ziggurat behind normal() -------------------------------------------------------------

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// The layer table must be what its definition says: x_1 = r, f(x_{i+1}) = f(x_i) + v / x_i with
// v = r f(r) + int_r^inf exp(-t^2/2) dt, x_256 = 0, and every layer (rectangle) of area v. Equal
// areas are what makes the ziggurat exact; recomputing the recursion here checks the literals.
TEST(Ziggurat, TableHasEqualAreaLayersUnderTheNormalCurve) {
  const ZigguratTables t = ziggurat_tables();
  auto f = [](double x) { return std::exp(-0.5 * x * x); };
  const double r = t.r;
  const double v = r * f(r) + std::sqrt(std::acos(-1.0) / 2.0) * std::erfc(r / std::sqrt(2.0));
  EXPECT_EQ(t.x[1], r);
  EXPECT_EQ(t.x[256], 0.0);
  EXPECT_NEAR(t.x[0] * f(r), v, 1e-15);  // the base layer: rectangle plus tail
  double x = r;
  for (int i = 1; i < 256; ++i) {
    ASSERT_NEAR(t.x[i], x, 1e-14 * x) << "edge " << i;
    ASSERT_NEAR(t.f[i], f(t.x[i]), 1e-16) << "f at edge " << i;
    ASSERT_GT(t.x[i], t.x[i + 1]);
    // Layer i: [0, x_i] x [f(x_i), f(x_{i+1})], area v. The top layer closes on f(0) = 1 to
    // rounding of the recursion (2e-13 relative), which is why r has its 17 digits.
    EXPECT_NEAR(t.x[i] * (t.f[i + 1] - t.f[i]), v, 2e-13 * v) << "layer " << i;
    if (i < 255) x = std::sqrt(-2.0 * std::log(f(x) + v / x));
  }
  EXPECT_EQ(t.f[256], 1.0);
}

// Kolmogorov-Smirnov against Phi on 10^6 draws. P(sqrt(n) D > t) -> 2 sum (-1)^(k-1) e^{-2k^2t^2};
// t = 2.2 gives 2 e^{-9.68} = 1.25e-4 (the next term is < 1e-16).
TEST(Ziggurat, NormalPassesKolmogorovSmirnov) {
  constexpr int n = 1'000'000;
  Stream s(kSeed, Domain::kTest, 11, 0);
  std::vector<double> x(n);
  for (auto& v : x) v = s.normal();
  std::sort(x.begin(), x.end());
  double d = 0.0;
  for (int i = 0; i < n; ++i) {
    const double c = normal_cdf(x[i]);
    d = std::max({d, c - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - c});
  }
  EXPECT_LT(std::sqrt(static_cast<double>(n)) * d, 2.2);
}

// Chi-square over 65 equiprobable bins (edges Phi^{-1}(k / 65) by bisection): 64 degrees of
// freedom, whose survival function is exp(-x/2) sum_{j<32} (x/2)^j / j!; the critical value at
// p = 1e-4 is found from it here.
TEST(Ziggurat, NormalPassesChiSquareOnEquiprobableBins) {
  constexpr int n_bins = 65;
  constexpr int n = 1'300'000;
  auto survival = [](double x) {
    double term = 1.0, sum = 1.0;
    for (int j = 1; j < 32; ++j) sum += (term *= 0.5 * x / j);
    return std::exp(-0.5 * x) * sum;
  };
  double lo = 64.0, hi = 400.0;
  for (int it = 0; it < 200; ++it) (survival(0.5 * (lo + hi)) > 1e-4 ? lo : hi) = 0.5 * (lo + hi);
  const double critical = hi;
  ASSERT_GT(critical, 100.0);
  ASSERT_LT(critical, 130.0);
  std::vector<double> edges(n_bins - 1);
  for (int k = 1; k < n_bins; ++k) {
    double a = -10.0, b = 10.0;
    for (int it = 0; it < 200; ++it)
      (normal_cdf(0.5 * (a + b)) < static_cast<double>(k) / n_bins ? a : b) = 0.5 * (a + b);
    edges[k - 1] = a;
  }
  Stream s(kSeed, Domain::kTest, 12, 0);
  std::vector<std::int64_t> count(n_bins, 0);
  for (int i = 0; i < n; ++i)
    ++count[std::upper_bound(edges.begin(), edges.end(), s.normal()) - edges.begin()];
  const double expected = static_cast<double>(n) / n_bins;
  double chi2 = 0.0;
  for (auto c : count) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, critical);
}

// The rare paths: the tail beyond r (base layer, 2.6e-4 of the draws) and the shape inside it,
// with enough draws (2 x 10^7, ~5200 in the tail) to see them. Proportions are binomial (4 SE).
TEST(Ziggurat, TailBeyondTheBaseLayerHasTheNormalMassAndShape) {
  constexpr int n = 20'000'000;
  const double r = ziggurat_tables().r;
  Stream s(kSeed, Domain::kTest, 13, 0);
  std::int64_t beyond_r = 0, beyond_4 = 0, beyond_45 = 0, negative_tail = 0;
  double max_abs = 0.0;
  for (int i = 0; i < n; ++i) {
    const double x = s.normal();
    const double a = std::fabs(x);
    max_abs = std::max(max_abs, a);
    if (a > r) {
      ++beyond_r;
      negative_tail += x < 0.0;
      beyond_4 += a > 4.0;
      beyond_45 += a > 4.5;
    }
  }
  const double rn = n;
  const double p_r = std::erfc(r / std::sqrt(2.0));
  EXPECT_NEAR(beyond_r / rn, p_r, 4.0 * std::sqrt(p_r * (1 - p_r) / rn));
  // Within the tail: P(|x| > 4 | |x| > r), P(|x| > 4.5 | |x| > r), and symmetry.
  const double m = static_cast<double>(beyond_r);
  const double q4 = std::erfc(4.0 / std::sqrt(2.0)) / p_r;
  const double q45 = std::erfc(4.5 / std::sqrt(2.0)) / p_r;
  EXPECT_NEAR(beyond_4 / m, q4, 4.0 * std::sqrt(q4 * (1 - q4) / m));
  EXPECT_NEAR(beyond_45 / m, q45, 4.0 * std::sqrt(q45 * (1 - q45) / m));
  EXPECT_NEAR(negative_tail / m, 0.5, 4.0 * std::sqrt(0.25 / m));
  // The largest of 2e7 |N(0,1)| exceeds 5 with probability 1 - (1 - 5.7e-7)^2e7 > 0.99999.
  EXPECT_GT(max_abs, 5.0);
}

// The wedges: the layers' outer edges are where the first (rectangle) test fails. The mass
// between consecutive edges x_{i+1} < |x| < x_i over the 16 outermost wedge layers must be the
// normal's, checked by a chi-square over those 16 intervals plus the rest (df = 16; the critical
// value at p = 1e-4 from the survival function exp(-x/2) sum_{j<8} (x/2)^j / j!).
TEST(Ziggurat, MassBetweenLayerEdgesMatchesTheNormal) {
  constexpr int n = 4'000'000;
  constexpr int k = 16;
  const ZigguratTables t = ziggurat_tables();
  auto survival = [](double x) {
    double term = 1.0, sum = 1.0;
    for (int j = 1; j < 8; ++j) sum += (term *= 0.5 * x / j);
    return std::exp(-0.5 * x) * sum;
  };
  double lo = 16.0, hi = 200.0;
  for (int it = 0; it < 200; ++it) (survival(0.5 * (lo + hi)) > 1e-4 ? lo : hi) = 0.5 * (lo + hi);
  const double critical = hi;
  ASSERT_NEAR(critical, 45.92, 0.01);  // tables: the chi2_16 upper 1e-4 point is 45.92
  // Bins: |x| in (x_{i+1}, x_i] for i = 1..k, and everything else.
  std::vector<double> p(k + 1);
  double rest = 1.0;
  for (int i = 1; i <= k; ++i) {
    p[i - 1] = std::erfc(t.x[i + 1] / std::sqrt(2.0)) - std::erfc(t.x[i] / std::sqrt(2.0));
    rest -= p[i - 1];
  }
  p[k] = rest;
  std::vector<std::int64_t> count(k + 1, 0);
  Stream s(kSeed, Domain::kTest, 14, 0);
  for (int j = 0; j < n; ++j) {
    const double a = std::fabs(s.normal());
    int bin = k;
    for (int i = 1; i <= k; ++i)
      if (a > t.x[i + 1] && a <= t.x[i]) bin = i - 1;
    ++count[bin];
  }
  double chi2 = 0.0;
  for (int b = 0; b <= k; ++b) {
    const double e = p[b] * n;
    chi2 += (count[b] - e) * (count[b] - e) / e;
  }
  EXPECT_LT(chi2, critical);
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
