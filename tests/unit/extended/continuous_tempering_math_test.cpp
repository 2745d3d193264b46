// Tests of the scalar continuous-tempering formulas (src/extended/continuous_tempering_math.hpp):
// the Rao-Blackwellisation weights of eq. (20) against long double references and their limits,
// and the inverse-transform draw of beta | x (eq. (17)) at Delta ~ 0, large positive and large
// negative, plus a Kolmogorov-Smirnov check of the draws against the exact CDF.
#include "extended/continuous_tempering_math.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "rng/stream.hpp"

namespace pemc::extended {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// log(Delta / (1 - e^{-Delta})) in long double (80-bit: fine for |Delta| <= 50).
double reference_log_w0(double delta) {
  const long double d = delta;
  return static_cast<double>(std::log(d / (1.0L - std::exp(-d))));
}

TEST(RbWeights, MatchLongDoubleReferenceOnModerateDelta) {
  for (double delta : {-50.0, -10.0, -2.0, -1.0, -0.999, -0.5, -1e-3, 1e-3, 0.25, 0.999, 1.0, 1.5,
                       3.0, 20.0, 50.0}) {
    EXPECT_NEAR(rb_log_w0(delta), reference_log_w0(delta), 1e-14 * std::max(1.0, std::fabs(delta)))
        << "Delta = " << delta;
    // w1(Delta) = Delta / (e^Delta - 1) = w0(Delta) e^{-Delta}.
    EXPECT_NEAR(rb_log_w1(delta), reference_log_w0(delta) - delta,
                1e-13 * std::max(1.0, std::fabs(delta)))
        << "Delta = " << delta;
  }
}

TEST(RbWeights, LimitsAtZero) {
  EXPECT_EQ(rb_log_w0(0.0), 0.0);
  EXPECT_EQ(rb_log_w1(0.0), 0.0);
  // log w0 = Delta/2 - Delta^2/24 + O(Delta^4) near 0.
  for (double delta : {1e-300, -1e-300, 1e-16, -1e-16, 1e-10, -1e-10, 1e-6, -1e-6}) {
    const double series = delta / 2.0 - delta * delta / 24.0;
    // The ratio Delta / -expm1(-Delta) is accurate to a few ulps of 1, so log w is to ~5e-16.
    EXPECT_NEAR(rb_log_w0(delta), series, 5e-16) << delta;
    EXPECT_NEAR(rb_log_w1(delta), -delta / 2.0 - delta * delta / 24.0, 5e-16) << delta;
  }
}

TEST(RbWeights, LargeMagnitudesStayFiniteAndAccurate) {
  // Delta >> 1: w0 -> Delta, w1 -> Delta e^{-Delta}.
  for (double delta : {800.0, 1e5, 1e300}) {
    EXPECT_NEAR(rb_log_w0(delta), std::log(delta), 1e-15 * std::log(delta)) << delta;
    EXPECT_NEAR(rb_log_w1(delta), std::log(delta) - delta, 1e-15 * delta) << delta;
    EXPECT_NEAR(rb_log_w0(-delta), std::log(delta) - delta, 1e-15 * delta) << delta;
    EXPECT_NEAR(rb_log_w1(-delta), std::log(delta), 1e-15 * std::log(delta)) << delta;
  }
  // No catastrophic cancellation: log w1(-1e10) is log(1e10) to full precision.
  EXPECT_NEAR(rb_log_w1(-1e10), std::log(1e10), 1e-14);
  EXPECT_EQ(rb_log_w0(kInf), kInf);
  EXPECT_EQ(rb_log_w1(kInf), -kInf);
  EXPECT_EQ(rb_log_w0(-kInf), -kInf);
  EXPECT_EQ(rb_log_w1(-kInf), kInf);
  EXPECT_TRUE(std::isnan(rb_log_w0(std::nan(""))));
}

// rb_log_weights (one log and one log1mexp for |Delta| >= 1) gives exactly the bits of the two
// single weights, on both sides of every branch.
TEST(RbWeights, PairIsBitIdenticalToTheSingleWeights) {
  std::vector<double> deltas{0.0, -0.0, 1.0, -1.0, std::nextafter(1.0, 0.0), std::nextafter(-1.0, 0.0),
                             0.6931471805599453, -0.6931471805599453, 1e-300, -1e-300, 1e300,
                             -1e300, kInf, -kInf, std::nan("")};
  rng::Stream s(7, rng::Domain::kTest, 0, 0);
  for (int i = 0; i < 2000; ++i) deltas.push_back(std::ldexp(s.normal(), static_cast<int>(s.below(40)) - 20));
  for (const double delta : deltas) {
    const RbLogWeights w = rb_log_weights(delta);
    const double w0 = rb_log_w0(delta), w1 = rb_log_w1(delta);
    EXPECT_EQ(std::memcmp(&w.log_w0, &w0, sizeof(double)), 0) << "Delta = " << delta;
    EXPECT_EQ(std::memcmp(&w.log_w1, &w1, sizeof(double)), 0) << "Delta = " << delta;
  }
}

TEST(RbWeights, AreTheConditionalDensityAtTheEnds) {
  // w0 = p(beta = 0 | x), w1 = p(beta = 1 | x) under eq. (17).
  for (double delta : {-30.0, -1.0, 1e-8, 0.7, 12.0}) {
    EXPECT_NEAR(log_beta_conditional_density(0.0, delta), rb_log_w0(delta), 1e-12);
    EXPECT_NEAR(log_beta_conditional_density(1.0, delta), rb_log_w1(delta), 1e-12);
  }
}

TEST(RbWeights, ConditionalDensityIntegratesToOne) {
  for (double delta : {-40.0, -3.0, -1e-9, 0.0, 0.5, 8.0, 40.0}) {
    // Composite Simpson on [0, 1], 20000 intervals.
    const int n = 20000;
    double s = 0.0;
    for (int i = 0; i <= n; ++i) {
      const double b = static_cast<double>(i) / n;
      const double w = (i == 0 || i == n) ? 1.0 : (i % 2 ? 4.0 : 2.0);
      s += w * std::exp(log_beta_conditional_density(b, delta));
    }
    EXPECT_NEAR(s / (3.0 * n), 1.0, 1e-6) << delta;
  }
}

// Exact CDF of eq. (17): (1 - e^{-beta Delta}) / (1 - e^{-Delta}).
double exact_cdf(double beta, double delta) {
  if (delta == 0.0) return beta;
  return std::expm1(-beta * delta) / std::expm1(-delta);
}

TEST(TruncatedExponential, InverseCdfInvertsTheCdf) {
  for (double delta : {-60.0, -5.0, -1e-12, 1e-12, 0.3, 5.0, 60.0}) {
    for (double u : {1e-9, 0.01, 0.3, 0.5, 0.77, 0.999}) {
      const double beta = truncated_exponential_inverse_cdf(delta, u);
      ASSERT_GE(beta, 0.0);
      ASSERT_LE(beta, 1.0);
      EXPECT_NEAR(exact_cdf(beta, delta), u, 1e-12) << "Delta " << delta << " u " << u;
    }
  }
}

TEST(TruncatedExponential, DeltaNearZeroIsUniform) {
  for (double u : {1e-12, 0.2, 0.5, 0.9, 1.0 - 1e-12}) {
    EXPECT_EQ(truncated_exponential_inverse_cdf(0.0, u), u);
    EXPECT_NEAR(truncated_exponential_inverse_cdf(1e-300, u), u, 1e-15);
    EXPECT_NEAR(truncated_exponential_inverse_cdf(-1e-300, u), u, 1e-15);
    EXPECT_NEAR(truncated_exponential_inverse_cdf(1e-9, u), u, 1e-9);
    EXPECT_NEAR(truncated_exponential_inverse_cdf(-1e-9, u), u, 1e-9);
  }
}

TEST(TruncatedExponential, LargeDeltaConcentratesAtTheEnds) {
  // Delta >> 1: beta ~ Exp(Delta) (the truncation is invisible): beta = -log(1 - u) / Delta.
  for (double delta : {1e3, 1e8, 1e300}) {
    for (double u : {1e-6, 0.5, 0.999999}) {
      const double beta = truncated_exponential_inverse_cdf(delta, u);
      EXPECT_NEAR(beta, -std::log1p(-u) / delta, 1e-13 * (-std::log1p(-u) / delta)) << delta;
      // Delta << -1: 1 - beta ~ Exp(|Delta|) at 1 - u; beta rounds towards 1 but never exceeds it.
      const double beta_neg = truncated_exponential_inverse_cdf(-delta, u);
      EXPECT_LE(beta_neg, 1.0);
      EXPECT_NEAR(1.0 - beta_neg, -std::log(u) / delta, 1e-15 + 1e-12 * (-std::log(u) / delta))
          << -delta;
    }
  }
  EXPECT_EQ(truncated_exponential_inverse_cdf(kInf, 0.5), 0.0);
  EXPECT_EQ(truncated_exponential_inverse_cdf(-kInf, 0.5), 1.0);
  EXPECT_TRUE(std::isnan(truncated_exponential_inverse_cdf(std::nan(""), 0.5)));
}

TEST(TruncatedExponential, IsMonotoneInU) {
  for (double delta : {-20.0, -0.1, 0.1, 20.0}) {
    double prev = -1.0;
    for (int i = 1; i < 1000; ++i) {
      const double beta = truncated_exponential_inverse_cdf(delta, i / 1000.0);
      EXPECT_GE(beta, prev);
      prev = beta;
    }
  }
}

TEST(TruncatedExponential, DrawsPassKolmogorovSmirnov) {
  // n = 20000 draws per Delta; the KS statistic's 0.1% critical value is 1.95 / sqrt(n).
  const int n = 20000;
  const std::vector<double> deltas = {-25.0, -2.0, 0.0, 1e-7, 3.0, 25.0};
  for (std::size_t k = 0; k < deltas.size(); ++k) {
    const double delta = deltas[k];
    rng::Stream stream(7, rng::Domain::kTest, k, 0);
    std::vector<double> draws(n);
    for (double& b : draws) b = truncated_exponential_inverse_cdf(delta, stream.uniform());
    std::sort(draws.begin(), draws.end());
    double ks = 0.0;
    for (int i = 0; i < n; ++i) {
      const double f = exact_cdf(draws[i], delta);
      ks = std::max({ks, std::fabs(f - static_cast<double>(i) / n),
                     std::fabs(f - static_cast<double>(i + 1) / n)});
    }
    EXPECT_LT(ks, 1.95 / std::sqrt(static_cast<double>(n))) << "Delta " << delta;
  }
}

}  // namespace
}  // namespace pemc::extended
