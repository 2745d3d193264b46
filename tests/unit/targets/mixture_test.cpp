// GaussianMixture: exact moments against independent computations (direct sums, brute-force grid
// integration of exp(-potential), the pseudo-extended paper's Table 1), gradients against finite
// differences (also hundreds of standard deviations from every component), config errors.
#include "targets/mixture.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PEMC_TEST_SLEEF_WIDTHS 1
#endif

#include "core/batched_exp.hpp"
#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "pemc/v1/config.pb.h"
#include "rng/stream.hpp"
#include "support/batch_support.hpp"
#include "support/gradient_check.hpp"

namespace pemc::targets {
namespace {

using pemc::testing::expect_gradient_matches;

// Kou, Zhou & Wong (2006) means, typed in again here (independently of kou_means()).
constexpr double kKou[20][2] = {{2.18, 5.76}, {8.67, 9.59}, {4.24, 8.48}, {8.41, 1.68},
                                {3.93, 8.82}, {3.25, 3.47}, {1.70, 0.50}, {4.59, 5.60},
                                {6.91, 5.81}, {6.87, 5.40}, {5.41, 2.65}, {2.70, 7.88},
                                {4.98, 3.70}, {1.14, 2.39}, {8.33, 9.50}, {4.93, 1.50},
                                {1.83, 0.09}, {2.26, 0.31}, {5.54, 6.86}, {1.69, 8.11}};

double dist_to_55(int j) { return std::hypot(kKou[j][0] - 5.0, kKou[j][1] - 5.0); }

// Direct moments of an isotropic bivariate mixture over the Kou means.
struct Moments {
  double m[2] = {0, 0};
  double s[2] = {0, 0};
  double c12 = 0;
};
Moments direct_moments(const std::vector<double>& w_raw, const std::vector<double>& var) {
  double total = 0;
  for (double w : w_raw) total += w;
  Moments out;
  for (int j = 0; j < 20; ++j) {
    const double w = w_raw[j] / total;
    for (int i = 0; i < 2; ++i) {
      out.m[i] += w * kKou[j][i];
      out.s[i] += w * (kKou[j][i] * kKou[j][i] + var[j]);
    }
    out.c12 += w * kKou[j][0] * kKou[j][1];
  }
  return out;
}

std::shared_ptr<GaussianMixture> preset(v1::MixtureTarget::Preset p) {
  v1::MixtureTarget cfg;
  cfg.set_preset(p);
  return make_mixture(cfg);
}

void expect_truth_equals(const Truth& t, const Moments& m, double tol) {
  ASSERT_TRUE(t.mean && t.second_moment && t.cross_moment && t.log_z);
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR((*t.mean)[i], m.m[i], tol);
    EXPECT_NEAR((*t.second_moment)[i], m.s[i], tol);
    EXPECT_NEAR((*t.cross_moment)(i, i), m.s[i], tol);
  }
  EXPECT_NEAR((*t.cross_moment)(0, 1), m.c12, tol);
  EXPECT_NEAR((*t.cross_moment)(1, 0), m.c12, tol);
  EXPECT_EQ(*t.log_z, 0.0);
}

TEST(KouMixture, ScenarioATruthMatchesDirectSums) {
  const auto t = preset(v1::MixtureTarget::KOU_A);
  ASSERT_EQ(t->dim(), 2);
  ASSERT_EQ(t->n_components(), 20);
  expect_truth_equals(t->truth(),
                      direct_moments(std::vector<double>(20, 1.0), std::vector<double>(20, 0.01)),
                      1e-12);
}

TEST(KouMixture, ScenarioBTruthMatchesDirectSums) {
  std::vector<double> w(20), var(20);
  for (int j = 0; j < 20; ++j) {
    w[j] = 1.0 / dist_to_55(j);
    var[j] = dist_to_55(j) / 20.0;
  }
  expect_truth_equals(preset(v1::MixtureTarget::KOU_B)->truth(), direct_moments(w, var), 1e-12);
}

// Table 1 of the arXiv version (papers/003_*.txt) lists the true moments to three decimals.
TEST(KouMixture, ScenarioAMatchesPaperTable1) {
  const Truth t = preset(v1::MixtureTarget::KOU_A)->truth();
  const double half_ulp = 0.5e-3 + 1e-9;  // table rounded to 3 decimals
  EXPECT_NEAR((*t.mean)[0], 4.478, half_ulp);
  EXPECT_NEAR((*t.mean)[1], 4.905, half_ulp);
  EXPECT_NEAR((*t.second_moment)[0], 25.605, half_ulp);
  EXPECT_NEAR((*t.second_moment)[1], 33.920, half_ulp);
}

// Scenario (b): the table's means agree, but its second moments (25.558, 31.378) are those of
// component *standard deviations* ||mu - (5,5)||/20, not of the variances ||mu - (5,5)||/20 that
// the paper's text and its code (Stan multi_normal with diag(sigma)) use. We implement the text;
// this test pins down both facts so that a change in either direction is noticed.
TEST(KouMixture, ScenarioBPaperTable1UsesStandardDeviationsForSecondMoments) {
  const Truth t = preset(v1::MixtureTarget::KOU_B)->truth();
  const double half_ulp = 0.5e-3 + 1e-9;
  EXPECT_NEAR((*t.mean)[0], 4.688, half_ulp);
  EXPECT_NEAR((*t.mean)[1], 5.030, half_ulp);
  std::vector<double> w(20), var_if_sd(20);
  for (int j = 0; j < 20; ++j) {
    w[j] = 1.0 / dist_to_55(j);
    var_if_sd[j] = std::pow(dist_to_55(j) / 20.0, 2);
  }
  const Moments table_reading = direct_moments(w, var_if_sd);
  EXPECT_NEAR(table_reading.s[0], 25.558, half_ulp);
  EXPECT_NEAR(table_reading.s[1], 31.378, half_ulp);
  // Our (variance) reading is larger by sum_j w_j (d_j/20 - d_j^2/400) ~ 0.11.
  EXPECT_GT((*t.second_moment)[0] - 25.558, 0.1);
  EXPECT_GT((*t.second_moment)[1] - 31.378, 0.1);
}

// Brute-force midpoint integration of exp(-potential) over a fine grid: Z = 1 and the moments.
// The midpoint rule is spectrally accurate for Gaussians sampled at h << sd, so the only errors
// are rounding and the (negligible) mass outside the box.
void check_by_grid(const GaussianMixture& t, double lo, double hi, double h, double tol) {
  const int n = static_cast<int>(std::lround((hi - lo) / h));
  double z = 0, m0 = 0, m1 = 0, s0 = 0, s1 = 0, c01 = 0;
  Eigen::Vector2d x;
  for (int i = 0; i < n; ++i) {
    x[0] = lo + (i + 0.5) * h;
    for (int j = 0; j < n; ++j) {
      x[1] = lo + (j + 0.5) * h;
      const double p = std::exp(-t.potential(x)) * h * h;
      z += p;
      m0 += p * x[0];
      m1 += p * x[1];
      s0 += p * x[0] * x[0];
      s1 += p * x[1] * x[1];
      c01 += p * x[0] * x[1];
    }
  }
  const Truth tr = t.truth();
  EXPECT_NEAR(z, 1.0, tol);  // log_z = 0: exp(-potential) is normalised
  EXPECT_NEAR(m0 / z, (*tr.mean)[0], tol * 10);
  EXPECT_NEAR(m1 / z, (*tr.mean)[1], tol * 10);
  EXPECT_NEAR(s0 / z, (*tr.second_moment)[0], tol * 100);
  EXPECT_NEAR(s1 / z, (*tr.second_moment)[1], tol * 100);
  EXPECT_NEAR(c01 / z, (*tr.cross_moment)(0, 1), tol * 100);
}

TEST(KouMixture, ScenarioAGridIntegration) {
  check_by_grid(*preset(v1::MixtureTarget::KOU_A), -1.5, 11.5, 0.02, 1e-10);
}

TEST(KouMixture, ScenarioBGridIntegration) {
  check_by_grid(*preset(v1::MixtureTarget::KOU_B), -6.0, 16.0, 0.02, 1e-10);
}

TEST(Bimodal1D, TruthAndNormalisationByGrid) {
  const auto t = preset(v1::MixtureTarget::BIMODAL_1D);
  ASSERT_EQ(t->dim(), 1);
  const Truth tr = t->truth();
  EXPECT_DOUBLE_EQ((*tr.mean)[0], 0.0);
  EXPECT_NEAR((*tr.second_moment)[0], 0.5 * (1 + 0.1) + 0.5 * (1 + 0.02), 1e-15);
  const double h = 1e-3;
  double z = 0, m = 0, s = 0;
  Vector x(1);
  for (double v = -6.0 + h / 2; v < 6.0; v += h) {
    x[0] = v;
    const double p = std::exp(-t->potential(x)) * h;
    z += p;
    m += p * v;
    s += p * v * v;
  }
  EXPECT_NEAR(z, 1.0, 1e-10);
  EXPECT_NEAR(m / z, 0.0, 1e-10);
  EXPECT_NEAR(s / z, 1.06, 1e-9);
  // The two variances are the stated ones: density at the modes ~ 0.5 / sqrt(2 pi var).
  x[0] = 1.0;
  EXPECT_NEAR(std::exp(-t->potential(x)), 0.5 / std::sqrt(2 * M_PI * 0.02), 1e-6);
}

Vector random_point(rng::Stream& s, int d, double centre, double scale) {
  Vector x(d);
  for (int i = 0; i < d; ++i) x[i] = centre + scale * s.normal();
  return x;
}

// Between two KOU_A components (sd 0.1, ~3 apart) the responsibilities switch within ~sd^2/3, so
// the potential's third derivative reaches ~1e7 and the plain O(h^2) central difference of
// gradient_check.hpp is off by ~1e-5 relative. Richardson extrapolation of two central differences
// (steps h and h/2) cancels the h^2 term: error O(h^4 f^(5)) + O(eps |U| / h), both < 1e-8 relative
// here (checked against a 50-digit mpmath derivative at the worst point found).
void expect_gradient_matches_richardson(const Target& t, const Vector& x, double rel_tol = 1e-7) {
  Vector g(t.dim());
  const double u = t.potential_and_gradient(x, g);
  ASSERT_TRUE(std::isfinite(u));
  EXPECT_NEAR(u, t.potential(x), 1e-12 * std::max(1.0, std::fabs(u)));
  Vector fd(t.dim());
  for (int i = 0; i < t.dim(); ++i) {
    auto central = [&](double h) {
      Vector xp = x, xm = x;
      xp[i] += h;
      xm[i] -= h;
      return (t.potential(xp) - t.potential(xm)) / (2 * h);
    };
    const double h = 2e-5 * std::max(1.0, std::fabs(x[i]));
    fd[i] = (4 * central(h / 2) - central(h)) / 3;
  }
  const double scale = std::max(1.0, fd.cwiseAbs().maxCoeff());
  for (int i = 0; i < t.dim(); ++i)
    EXPECT_NEAR(g[i], fd[i], rel_tol * scale) << "d/dx_" << i << " at " << x.transpose();
}

TEST(MixtureGradient, MatchesFiniteDifferencesForPresets) {
  rng::Stream s(11, rng::Domain::kTest, 1, 0);
  for (auto p : {v1::MixtureTarget::KOU_A, v1::MixtureTarget::KOU_B}) {
    const auto t = preset(p);
    for (int k = 0; k < 100; ++k)
      expect_gradient_matches_richardson(*t, random_point(s, 2, 5.0, 3.0));
    // near modes the plain check of gradient_check.hpp applies
    for (int k = 0; k < 20; ++k) {
      const Vector& mu = t->components()[k % 20].mean;
      expect_gradient_matches(*t, random_point(s, 2, 0.0, 0.05) + mu);
    }
    // exactly on a component's mean and between two close ones
    expect_gradient_matches(*t, Eigen::Vector2d(6.91, 5.81));
    expect_gradient_matches_richardson(*t, Eigen::Vector2d(6.89, 5.6));
  }
  const auto b = preset(v1::MixtureTarget::BIMODAL_1D);
  for (int k = 0; k < 50; ++k) expect_gradient_matches(*b, random_point(s, 1, 0.0, 2.0));
}

TEST(MixtureGradient, MatchesFiniteDifferencesInFiveDimensionsWithDiagonalVariances) {
  rng::Stream s(12, rng::Domain::kTest, 1, 0);
  std::vector<GaussianMixture::Component> comps;
  for (int k = 0; k < 4; ++k) {
    GaussianMixture::Component c;
    c.weight = 1.0 + k;
    c.mean = random_point(s, 5, 0.0, 3.0);
    c.variance = (random_point(s, 5, 0.0, 1.0).array().square() + 0.1).matrix();
    comps.push_back(c);
  }
  const GaussianMixture t(comps);
  for (int k = 0; k < 100; ++k) expect_gradient_matches(t, random_point(s, 5, 0.0, 4.0));
}

// Two unit-variance components 200 sd apart; points far from both. A naive sum of densities
// underflows to 0 (potential +inf) there; the log-sum-exp must not.
TEST(MixtureTails, FarFromEveryComponentStaysFiniteAndExact) {
  std::vector<GaussianMixture::Component> comps = {
      {0.3, Eigen::Vector2d(-100.0, 0.0), Eigen::Vector2d(1.0, 1.0)},
      {0.7, Eigen::Vector2d(100.0, 0.0), Eigen::Vector2d(1.0, 1.0)}};
  const GaussianMixture t(comps);
  rng::Stream s(13, rng::Domain::kTest, 1, 0);
  for (double far : {0.0, 150.0, 1000.0, 1e4}) {
    for (int k = 0; k < 20; ++k) {
      Vector x = random_point(s, 2, 0.0, 1.0);
      x[1] += far;
      Vector g(2);
      const double u = t.potential_and_gradient(x, g);
      ASSERT_TRUE(std::isfinite(u)) << "x = " << x.transpose();
      ASSERT_TRUE(g.allFinite());
      // Independent: log-sum-exp written out in long double.
      long double a = std::log(0.3L) - std::log(2 * M_PIl) -
                      0.5L * ((x[0] + 100.0L) * (x[0] + 100.0L) + (long double)x[1] * x[1]);
      long double b = std::log(0.7L) - std::log(2 * M_PIl) -
                      0.5L * ((x[0] - 100.0L) * (x[0] - 100.0L) + (long double)x[1] * x[1]);
      const long double m = std::max(a, b);
      const long double expected = -(m + std::log(std::exp(a - m) + std::exp(b - m)));
      EXPECT_NEAR(u, static_cast<double>(expected), 1e-12 * std::max(1.0, std::fabs(u)));
      if (far <= 1000.0) expect_gradient_matches(t, x);
    }
  }
  // Midway the gradient's x-part is a genuine mix of both components.
  Vector g(2);
  t.potential_and_gradient(Eigen::Vector2d(0.0, 0.0), g);
  EXPECT_TRUE(g.allFinite());
}

TEST(MixtureNonFinite, NanAndInfInputsRejectWithoutCrash) {
  const auto t = preset(v1::MixtureTarget::KOU_A);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Vector g(2);
  EXPECT_TRUE(std::isnan(t->potential(Eigen::Vector2d(nan, 1.0))));
  EXPECT_TRUE(std::isnan(t->potential_and_gradient(Eigen::Vector2d(1.0, nan), g)));
  EXPECT_EQ(t->potential(Eigen::Vector2d(inf, 1.0)), inf);
  EXPECT_EQ(t->potential_and_gradient(Eigen::Vector2d(1.0, -inf), g), inf);
  // and a later finite call is unaffected by the scratch state
  EXPECT_TRUE(std::isfinite(t->potential_and_gradient(Eigen::Vector2d(5.0, 5.0), g)));
  EXPECT_TRUE(g.allFinite());
}

// n_comp components in d dimensions with unequal weights and diagonal variances.
std::vector<GaussianMixture::Component> random_components(rng::Stream& s, int d, int n_comp) {
  std::vector<GaussianMixture::Component> comps;
  for (int k = 0; k < n_comp; ++k) {
    GaussianMixture::Component c;
    c.weight = 0.5 + s.uniform();
    c.mean = random_point(s, d, 0.0, 3.0);
    c.variance = (random_point(s, d, 0.0, 0.7).array().square() + 0.05).matrix();
    comps.push_back(c);
  }
  return comps;
}
// A mixture of them.
GaussianMixture random_mixture(rng::Stream& s, int d, int n_comp) {
  return GaussianMixture(random_components(s, d, n_comp));
}

// The vectorised evaluation against a plain long double log-sum-exp over the components, for
// component counts that do and do not fill the SIMD pairs and dimensions with and without a
// compile-time specialisation (1..4, and 7), with unequal weights and diagonal variances.
TEST(MixtureVectorised, PotentialAndGradientMatchLongDoubleReference) {
  rng::Stream s(15, rng::Domain::kTest, 1, 0);
  for (const int d : {1, 2, 3, 4, 7}) {
    for (const int n_comp : {1, 2, 3, 5, 20}) {
      const GaussianMixture t = random_mixture(s, d, n_comp);
      for (int rep = 0; rep < 20; ++rep) {
        // near the components and far from all of them (components > 708 below the maximum)
        const Vector x = random_point(s, d, 0.0, rep < 10 ? 3.0 : 30.0);
        std::vector<long double> lt(static_cast<std::size_t>(n_comp));
        long double m = -INFINITY;
        for (int k = 0; k < n_comp; ++k) {
          const auto& c = t.components()[static_cast<std::size_t>(k)];
          long double l = std::log(static_cast<long double>(c.weight));
          for (int i = 0; i < d; ++i) {
            const long double z = static_cast<long double>(x[i]) - c.mean[i];
            l -= 0.5L * (z * z / c.variance[i] + std::log(2 * M_PIl * c.variance[i]));
          }
          lt[static_cast<std::size_t>(k)] = l;
          m = std::max(m, l);
        }
        long double sum = 0;
        Eigen::Matrix<long double, Eigen::Dynamic, 1> g = Eigen::Matrix<long double, Eigen::Dynamic, 1>::Zero(d);
        for (int k = 0; k < n_comp; ++k) {
          const auto& c = t.components()[static_cast<std::size_t>(k)];
          const long double r = std::exp(lt[static_cast<std::size_t>(k)] - m);
          sum += r;
          for (int i = 0; i < d; ++i) g[i] += r * (static_cast<long double>(x[i]) - c.mean[i]) / c.variance[i];
        }
        const double expected = static_cast<double>(-(m + std::log(sum)));
        Vector grad(d);
        const double u = t.potential_and_gradient(x, grad);
        EXPECT_NEAR(u, expected, 1e-13 * std::max(1.0, std::fabs(expected))) << "d " << d << " K " << n_comp;
        EXPECT_EQ(t.potential(x), u);
        const double scale = std::max(1.0, static_cast<double>((g / sum).cwiseAbs().maxCoeff()));
        for (int i = 0; i < d; ++i)
          EXPECT_NEAR(grad[i], static_cast<double>(g[i] / sum), 1e-12 * scale)
              << "d " << d << " K " << n_comp << " i " << i;
      }
    }
  }
}

// Three components in d = 3, one with variance 1e-300: far from it, (x - mu) / var overflows to
// inf while its weight is exactly 0 (an odd count also exercises the SIMD padding).
GaussianMixture overflow_mixture() {
  return GaussianMixture({{1.0, Vector::Constant(3, 0.0), Vector::Constant(3, 1e-300)},
                          {1.0, Vector::Constant(3, 1.0), Vector::Constant(3, 1.0)},
                          {2.0, Vector::Constant(3, -1.0), Vector::Constant(3, 4.0)}});
}

// A far point where one component's (x - mu) / var overflows to inf (tiny variance): that
// component's weight is exactly 0 and 0 * inf must not turn the gradient into NaN; an odd
// component count and d = 3 also check the SIMD padding with non-finite inputs.
TEST(MixtureVectorised, OverflowingTermsAndNonFiniteInputs) {
  const GaussianMixture t = overflow_mixture();
  const Vector x = Vector::Constant(3, 1e10);
  Vector g(3);
  const double u = t.potential_and_gradient(x, g);
  ASSERT_TRUE(std::isfinite(u));
  ASSERT_TRUE(g.allFinite()) << g.transpose();
  // Far from both finite components, component 2 (variance 4) dominates: grad = (x + 1) / 4.
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(g[i], (1e10 + 1.0) / 4.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(std::isnan(t.potential_and_gradient(Eigen::Vector3d(0.0, nan, 0.0), g)));
  EXPECT_TRUE(std::isnan(g[0]));
  EXPECT_EQ(t.potential_and_gradient(Eigen::Vector3d(0.0, 0.0, -inf), g), inf);
  EXPECT_EQ(t.potential(Eigen::Vector3d(inf, 0.0, 0.0)), inf);
  EXPECT_TRUE(std::isnan(t.potential(Eigen::Vector3d(inf, nan, 0.0))));
}

TEST(Mixture, WeightsAreNormalised) {
  std::vector<GaussianMixture::Component> a = {
      {2.0, Vector::Constant(1, -1.0), Vector::Constant(1, 0.5)},
      {6.0, Vector::Constant(1, 2.0), Vector::Constant(1, 2.0)}};
  std::vector<GaussianMixture::Component> b = a;
  b[0].weight = 0.25;
  b[1].weight = 0.75;
  const GaussianMixture ta(a), tb(b);
  EXPECT_DOUBLE_EQ(ta.components()[0].weight, 0.25);
  for (double v : {-3.0, -1.0, 0.3, 2.0, 7.0}) {
    const Vector x = Vector::Constant(1, v);
    EXPECT_NEAR(ta.potential(x), tb.potential(x), 1e-14);
    // exact density of the normalised mixture
    const double p = 0.25 * std::exp(-0.5 * (v + 1) * (v + 1) / 0.5) / std::sqrt(2 * M_PI * 0.5) +
                     0.75 * std::exp(-0.5 * (v - 2) * (v - 2) / 2.0) / std::sqrt(2 * M_PI * 2.0);
    EXPECT_NEAR(ta.potential(x), -std::log(p), 1e-12);
  }
  EXPECT_NEAR((*ta.truth().mean)[0], 0.25 * -1 + 0.75 * 2, 1e-15);
}

TEST(MixtureConfig, ExplicitComponentsWithIsotropicAndDiagonalVariances) {
  v1::MixtureTarget cfg;
  auto* c0 = cfg.add_components();
  c0->set_weight(1.0);
  c0->add_mean(0.0);
  c0->add_mean(1.0);
  c0->set_variance(2.0);
  auto* c1 = cfg.add_components();
  c1->set_weight(3.0);
  c1->add_mean(4.0);
  c1->add_mean(-1.0);
  c1->add_diag_variance(0.5);
  c1->add_diag_variance(1.5);
  const auto t = make_mixture(cfg);
  ASSERT_EQ(t->dim(), 2);
  const Truth tr = t->truth();
  EXPECT_NEAR((*tr.second_moment)[0], 0.25 * (0 + 2.0) + 0.75 * (16 + 0.5), 1e-14);
  EXPECT_NEAR((*tr.second_moment)[1], 0.25 * (1 + 2.0) + 0.75 * (1 + 1.5), 1e-14);
}

void expect_config_error(const v1::MixtureTarget& cfg, const std::string& fragment) {
  try {
    make_mixture(cfg);
    ADD_FAILURE() << "expected ConfigError containing '" << fragment << "'";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(MixtureConfig, ErrorsNameTheField) {
  v1::MixtureTarget empty;
  expect_config_error(empty, "neither a preset nor any components");

  v1::MixtureTarget both;
  both.set_preset(v1::MixtureTarget::KOU_A);
  both.add_components()->add_mean(1.0);
  expect_config_error(both, "either a preset or components");

  v1::MixtureTarget base;
  auto* c = base.add_components();
  c->set_weight(1.0);
  c->add_mean(0.0);
  c->add_mean(0.0);
  c->set_variance(1.0);

  v1::MixtureTarget no_var = base;
  no_var.mutable_components(0)->clear_variance();
  expect_config_error(no_var, "target.mixture.components[0]: no variance");

  v1::MixtureTarget bad_weight = base;
  bad_weight.mutable_components(0)->set_weight(-1.0);
  expect_config_error(bad_weight, "target.mixture.components[0].weight");

  v1::MixtureTarget bad_dim = base;
  auto* c1 = bad_dim.add_components();
  c1->set_weight(1.0);
  c1->add_mean(1.0);
  c1->set_variance(1.0);
  expect_config_error(bad_dim, "target.mixture.components[1].mean");

  v1::MixtureTarget bad_diag = base;
  bad_diag.mutable_components(0)->clear_variance();
  bad_diag.mutable_components(0)->add_diag_variance(1.0);
  expect_config_error(bad_diag, "target.mixture.components[0].diag_variance");

  v1::MixtureTarget zero_var = base;
  zero_var.mutable_components(0)->set_variance(0.0);
  expect_config_error(zero_var, "target.mixture.components[0].variance");

  v1::MixtureTarget both_var = base;
  both_var.mutable_components(0)->add_diag_variance(1.0);
  both_var.mutable_components(0)->add_diag_variance(1.0);
  expect_config_error(both_var, "either variance or diag_variance");
}

TEST(MixtureConfig, ConstructorRejectsBadComponents) {
  EXPECT_THROW(GaussianMixture({}), ConfigError);
  EXPECT_THROW(GaussianMixture({{1.0, Vector::Zero(2), Vector::Constant(2, -1.0)}}), ConfigError);
  EXPECT_THROW(GaussianMixture({{1.0, Vector::Zero(2), Vector::Ones(2)},
                                {1.0, Vector::Zero(3), Vector::Ones(3)}}),
               ConfigError);
}


// ---- potential_and_gradient_batch (pseudo-extended HMC's N pseudo-samples in one call) ---------

using testing::BatchResult;
using testing::run_batch;

// Same bits (NaN = NaN).
bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b); }

// Every batch size (short last batches repeat a point in spare lanes), dimensions with and
// without a compile-time specialisation, points near and far (terms > 708 below the maximum):
// the batch agrees with the single evaluation to rounding (both are checked against long double
// above).
TEST(MixtureBatch, AgreesWithSingleEvaluations) {
  rng::Stream s(21, rng::Domain::kTest, 1, 0);
  for (const int d : {1, 2, 3, 4, 7}) {
    for (const int n_comp : {1, 3, 20}) {
      const GaussianMixture t = random_mixture(s, d, n_comp);
      for (const int m : {1, 2, 3, 4, 5, 9}) {
        std::vector<Vector> points;
        for (int j = 0; j < m; ++j) points.push_back(random_point(s, d, 0.0, j % 2 ? 30.0 : 3.0));
        const BatchResult r = run_batch(t, points);
        for (int j = 0; j < m; ++j) {
          Vector g(d);
          const double u = t.potential_and_gradient(points[static_cast<std::size_t>(j)], g);
          EXPECT_NEAR(r.u[static_cast<std::size_t>(j)], u, 2e-13 * std::max(1.0, std::fabs(u)))
              << "d " << d << " K " << n_comp << " m " << m << " j " << j;
          const double scale = std::max(1.0, g.cwiseAbs().maxCoeff());
          for (int i = 0; i < d; ++i)
            EXPECT_NEAR(r.g[static_cast<std::size_t>(j * d + i)], g[i], 2e-12 * scale)
                << "d " << d << " K " << n_comp << " m " << m << " j " << j << " i " << i;
        }
      }
    }
  }
}

// The batch contract: a point's bits do not depend on its neighbours, its position or the batch
// size (the pseudo-extended chain split over 1, 2 or 4 ranks relies on it).
TEST(MixtureBatch, APointsBitsDoNotDependOnItsBatch) {
  rng::Stream s(22, rng::Domain::kTest, 1, 0);
  for (const int d : {2, 7}) {
    const GaussianMixture t = random_mixture(s, d, 20);
    std::vector<Vector> pool;
    for (int j = 0; j < 9; ++j) pool.push_back(random_point(s, d, 0.0, 3.0));
    const BatchResult all = run_batch(t, pool);
    for (std::size_t p = 0; p < pool.size(); ++p) {
      const BatchResult alone = run_batch(t, {pool[p]});
      ASSERT_TRUE(same(alone.u[0], all.u[p])) << "d " << d << " point " << p;
      for (int i = 0; i < d; ++i)
        ASSERT_TRUE(same(alone.g[static_cast<std::size_t>(i)], all.g[p * d + i]));
      for (std::size_t lane = 0; lane < 4; ++lane) {
        std::vector<Vector> four;
        for (std::size_t l = 0; l < 4; ++l)
          four.push_back(l == lane ? pool[p] : random_point(s, d, 0.0, 30.0));
        const BatchResult r = run_batch(t, four);
        ASSERT_TRUE(same(r.u[lane], all.u[p])) << "d " << d << " point " << p << " lane " << lane;
        for (int i = 0; i < d; ++i) ASSERT_TRUE(same(r.g[lane * d + i], all.g[p * d + i]));
      }
    }
  }
}

// The 4- and 8-lane passes exp only the (component, lane) pairs above the cut, packed together
// (compress / expand; on AVX2 the 8-lane pass packs its two 4-lane halves one after the other);
// the 2-lane pass exps whole components. On the Kou (a) mixture (sd 0.1, so each point keeps ~7
// of its 20 components, a different set per point) batches of 3 to 9 points around the means give
// every pattern of kept components in each group of four lanes; each point must get the bits of
// its own one-point batch (a 2-lane pass), whatever the pattern.
TEST(MixtureBatch, PackedExpsGiveTheUnpackedBits) {
  const auto t = preset(v1::MixtureTarget::KOU_A);
  rng::Stream s(23, rng::Domain::kTest, 1, 0);
  // How often each keep pattern occurred over points 0-3 and (batches of 8 or more) 4-7.
  std::array<int, 16> patterns{}, patterns_high{};
  for (int trial = 0; trial < 200; ++trial) {
    const int m = 3 + trial % 7;
    std::vector<Vector> points;
    for (int j = 0; j < m; ++j) points.push_back(random_point(s, 2, 5.0, 2.5));
    const BatchResult all = run_batch(*t, points);
    for (int j = 0; j < m; ++j) {
      const auto p = static_cast<std::size_t>(j);
      const BatchResult alone = run_batch(*t, {points[p]});
      ASSERT_TRUE(same(alone.u[0], all.u[p])) << "trial " << trial << " point " << j;
      for (std::size_t i = 0; i < 2; ++i) ASSERT_TRUE(same(alone.g[i], all.g[p * 2 + i]));
    }
    // The keep pattern of each component over four consecutive points (cut: 708 below the
    // point's largest log term), to show the test covers them.
    auto count_patterns = [&points](int first, std::array<int, 16>& counts) {
      for (const auto& mu : kKou) {
        int pattern = 0;
        for (int l = 0; l < 4; ++l) {
          const Vector& x = points[static_cast<std::size_t>(first + l)];
          auto log_term = [&x](const double* c) {
            return -(std::pow(x[0] - c[0], 2) + std::pow(x[1] - c[1], 2)) / 0.02;
          };
          double best = -std::numeric_limits<double>::infinity();
          for (const auto& other : kKou) best = std::max(best, log_term(other));
          if (log_term(mu) - best >= -708.0) pattern |= 1 << l;
        }
        ++counts[static_cast<std::size_t>(pattern)];
      }
    };
    if (m >= 4) count_patterns(0, patterns);
    if (m >= 8) count_patterns(4, patterns_high);
  }
  for (int pattern = 0; pattern < 16; ++pattern) {
    EXPECT_GT(patterns[static_cast<std::size_t>(pattern)], 0) << "keep pattern " << pattern;
    EXPECT_GT(patterns_high[static_cast<std::size_t>(pattern)], 0)
        << "keep pattern " << pattern << " in lanes 4-7";
  }
}

// Non-finite inputs and overflowing terms inside a batch get exactly the single evaluation's
// special values, and leave their neighbours alone.
TEST(MixtureBatch, NonFiniteInputsAndOverflowingTermsPerPoint) {
  const GaussianMixture t = overflow_mixture();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Vector> points = {Eigen::Vector3d(0.5, 0.2, -0.3), Eigen::Vector3d(0.0, nan, 0.0),
                                      Vector::Constant(3, 1e10), Eigen::Vector3d(0.0, 0.0, -inf),
                                      Eigen::Vector3d(1.0, 2.0, 3.0)};
  const BatchResult r = run_batch(t, points);
  EXPECT_TRUE(std::isnan(r.u[1]));
  EXPECT_EQ(r.u[3], inf);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(std::isnan(r.g[static_cast<std::size_t>(3 + i)]));
    EXPECT_TRUE(std::isnan(r.g[static_cast<std::size_t>(9 + i)]));
    EXPECT_DOUBLE_EQ(r.g[static_cast<std::size_t>(6 + i)], (1e10 + 1.0) / 4.0);
  }
  for (const std::size_t j : {std::size_t{0}, std::size_t{2}, std::size_t{4}}) {
    Vector g(3);
    const double u = t.potential_and_gradient(points[j], g);
    EXPECT_NEAR(r.u[j], u, 2e-13 * std::max(1.0, std::fabs(u)));
    for (std::size_t i = 0; i < 3; ++i)
      EXPECT_NEAR(r.g[j * 3 + i], g[static_cast<Eigen::Index>(i)],
                  2e-12 * std::max(1.0, g.cwiseAbs().maxCoeff()));
  }
}

// The same special values in every lane of the passes of 5 to 9 points (the eight-lane pass holds
// lanes 4-7 in a second register on AVX2): a NaN coordinate gives a NaN potential and gradient, an
// infinite one +inf and a NaN gradient, and the points beside them keep their one-point bits.
TEST(MixtureBatch, SpecialValuesInEveryLane) {
  const GaussianMixture t = overflow_mixture();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  rng::Stream s(24, rng::Domain::kTest, 1, 0);
  int special_checked = 0;
  for (int m = 5; m <= 9; ++m) {
    for (int at = 0; at < m; ++at) {
      std::vector<Vector> points;
      for (int j = 0; j < m; ++j) points.push_back(random_point(s, 3, 0.0, 3.0));
      const int other = (at + 3) % m;  // a second special point elsewhere in the batch
      points[static_cast<std::size_t>(at)][1] = nan;
      points[static_cast<std::size_t>(other)][2] = -inf;
      const BatchResult r = run_batch(t, points);
      for (int j = 0; j < m; ++j) {
        const auto p = static_cast<std::size_t>(j);
        if (j == at || j == other) {
          if (j == at)
            EXPECT_TRUE(std::isnan(r.u[p])) << "m " << m << " at " << j;
          else
            EXPECT_EQ(r.u[p], inf) << "m " << m << " at " << j;
          for (std::size_t i = 0; i < 3; ++i)
            EXPECT_TRUE(std::isnan(r.g[p * 3 + i])) << "m " << m << " at " << j << " i " << i;
          ++special_checked;
          continue;
        }
        const BatchResult alone = run_batch(t, {points[p]});
        ASSERT_TRUE(same(alone.u[0], r.u[p])) << "m " << m << " point " << j;
        for (std::size_t i = 0; i < 3; ++i)
          ASSERT_TRUE(same(alone.g[i], r.g[p * 3 + i])) << "m " << m << " point " << j;
      }
    }
  }
  EXPECT_EQ(special_checked, 2 * (5 + 6 + 7 + 8 + 9));
}

TEST(MixtureBatch, WrongShapesAreRefused) {
  const auto t = preset(v1::MixtureTarget::KOU_A);
  std::vector<double> x(6, 1.0), u(3), g(5);
  EXPECT_THROW(t->potential_and_gradient_batch(x, u, g), std::invalid_argument);
  std::vector<double> g6(6), u2(2);
  EXPECT_THROW(t->potential_and_gradient_batch(x, u2, g6), std::invalid_argument);
}


// ---- the AVX-512 batch path (8 points per pass) against the AVX2 one (4 and 2) -----------------
//
// A run's draws must not depend on whether its nodes have AVX-512: every point's potential and
// gradient bits from the 8-lane path must be those of the AVX2 path. Each test builds the mixture
// twice, once with AVX-512 forbidden (set_avx512_allowed(false) before construction).

// Sets whether AVX-512 may be used for its lifetime, and allows it again after (the default), so
// no test leaves it off for the tests after it.
class Avx512Allowed {
 public:
  explicit Avx512Allowed(bool allowed) { set_avx512_allowed(allowed); }
  ~Avx512Allowed() { set_avx512_allowed(true); }
  Avx512Allowed(const Avx512Allowed&) = delete;
  Avx512Allowed& operator=(const Avx512Allowed&) = delete;
};

// The message of the skip on CPUs without AVX-512F (nothing to compare there).
#define PEMC_SKIP_WITHOUT_AVX512()                                                        \
  do {                                                                                    \
    const Avx512Allowed allow(true);                                                      \
    if (!cpu_has_avx512f())                                                               \
      GTEST_SKIP() << "this CPU has no AVX-512F: the AVX-512 path cannot run here, so " \
                      "there is nothing to compare with the AVX2 path";                   \
  } while (0)

GaussianMixture avx2_only(const std::vector<GaussianMixture::Component>& comps) {
  const Avx512Allowed off(false);
  GaussianMixture t(comps);
  EXPECT_EQ(t.batch_width(), 4);
  return t;
}
GaussianMixture with_avx512(const std::vector<GaussianMixture::Component>& comps) {
  const Avx512Allowed on(true);
  GaussianMixture t(comps);
  EXPECT_EQ(t.batch_width(), 8);
  return t;
}

std::vector<GaussianMixture::Component> kou_components(v1::MixtureTarget::Preset p) {
  return preset(p)->components();  // normalised already: renormalising keeps them
}

// A point of one of several kinds: near the components, far (terms > 708 below the maximum, so
// the exp is skipped for most components in most lanes), very far (one component left), beyond
// overflow ((x - mu)^2 / var = inf: potential +inf), or within 1e-9 of a component's mean.
Vector mixed_point(rng::Stream& s, const GaussianMixture& t, int kind) {
  const int d = t.dim();
  switch (kind % 5) {
    case 0:
      return random_point(s, d, 0.0, 3.0);
    case 1:
      return random_point(s, d, 0.0, 30.0);
    case 2:
      return random_point(s, d, 0.0, 1e4);
    case 3:
      return random_point(s, d, 0.0, 1e160);
    default: {
      const auto k = static_cast<std::size_t>(s.uniform() * t.n_components()) %
                     static_cast<std::size_t>(t.n_components());
      return t.components()[k].mean + random_point(s, d, 0.0, 1e-9);
    }
  }
}

void expect_same_bits(const BatchResult& a, const BatchResult& b, int d, const std::string& what) {
  ASSERT_EQ(a.u.size(), b.u.size());
  for (std::size_t j = 0; j < a.u.size(); ++j) {
    EXPECT_TRUE(same(a.u[j], b.u[j]))
        << what << " point " << j << ": potential " << a.u[j] << " vs " << b.u[j];
    for (std::size_t i = 0; i < static_cast<std::size_t>(d); ++i)
      EXPECT_TRUE(same(a.g[j * d + i], b.g[j * d + i]))
          << what << " point " << j << " gradient " << i << ": " << a.g[j * d + i] << " vs "
          << b.g[j * d + i];
  }
}

#ifdef PEMC_TEST_SLEEF_WIDTHS
// SLEEF's fixed variants the batch paths call: the avx512f exp and log must give the avx2 ones'
// bits (one algorithm with FMAs), over random arguments across the whole range and the extremes,
// not only the [-708, 0] and [1, K] the mixture feeds them.
extern "C" {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
__m256d Sleef_expd4_u10avx2(__m256d);
__m256d Sleef_logd4_u10avx2(__m256d);
__m512d Sleef_expd8_u10avx512f(__m512d);
__m512d Sleef_logd8_u10avx512f(__m512d);
#pragma GCC diagnostic pop
}
__attribute__((target("avx2,fma"))) void sleef_avx2(bool log, const double* in, double* out) {
  const __m256d v = _mm256_loadu_pd(in);
  _mm256_storeu_pd(out, log ? Sleef_logd4_u10avx2(v) : Sleef_expd4_u10avx2(v));
}
__attribute__((target("avx512f,avx2,fma"))) void sleef_avx512(bool log, const double* in,
                                                               double* out) {
  const __m512d v = _mm512_loadu_pd(in);
  _mm512_storeu_pd(out, log ? Sleef_logd8_u10avx512f(v) : Sleef_expd8_u10avx512f(v));
}

TEST(MixtureBatch, SleefAvx512ExpAndLogMatchAvx2BitForBit) {
  PEMC_SKIP_WITHOUT_AVX512();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double tiny = std::numeric_limits<double>::denorm_min();
  const double least = std::numeric_limits<double>::min();
  const double big = std::numeric_limits<double>::max();
  for (const bool log : {false, true}) {
    std::vector<double> args = {0.0, -0.0, inf, -inf, nan, -nan, 1.0, -1.0, tiny, -tiny, least,
                                -least, big, -big, kExpCut, 709.78, 709.79, -708.39, -708.4,
                                -709.0, -744.44, -745.2, -746.0, 1e-300, 2.0, 0.5, 20.0};
    // log near 1 (cancellation) and exp near 0: the doubles next to 1 on both sides
    for (double up = 1.0, down = 1.0; args.size() < 2000;
         up = std::nextafter(up, 2.0), down = std::nextafter(down, 0.0)) {
      args.push_back(up);
      args.push_back(down);
    }
    rng::Stream s(23, rng::Domain::kTest, log ? 1 : 0, 0);
    for (int k = 0; k < 400000; ++k) {
      const double u = s.uniform();
      const double sign = s.uniform() < 0.5 ? -1.0 : 1.0;
      const int binade = static_cast<int>(s.uniform() * 2098) - 1074;
      switch (k % 4) {
        case 0:  // exp: the mixture's [-708, 0]; log: its sums [1, 21]
          args.push_back(log ? 1.0 + 20.0 * u : kExpCut * u);
          break;
        case 1:  // the whole exponent range, both signs, subnormals included
          args.push_back(sign * std::ldexp(1.0 + u, binade));
          break;
        case 2:  // exp: its overflow and underflow edges; log: near 1
          if (log)
            args.push_back(1.0 + (u - 0.5) * 1e-6);
          else
            args.push_back(sign > 0 ? 700.0 + 12.0 * u : -760.0 + 60.0 * u);
          break;
        default:  // exp: [-750, 750]; log: subnormals
          if (log)
            args.push_back(std::ldexp(1.0 + u, -1074 + (binade + 1074) % 52));
          else
            args.push_back(1500.0 * (u - 0.5));
      }
    }
    while (args.size() % 8 != 0) args.push_back(1.0);
    std::vector<double> narrow(args.size()), wide(args.size());
    for (std::size_t j = 0; j < args.size(); j += 4)
      sleef_avx2(log, args.data() + j, narrow.data() + j);
    for (std::size_t j = 0; j < args.size(); j += 8)
      sleef_avx512(log, args.data() + j, wide.data() + j);
    int differ = 0;
    for (std::size_t j = 0; j < args.size(); ++j)
      if (!same(narrow[j], wide[j]) && ++differ <= 10)
        ADD_FAILURE() << (log ? "log(" : "exp(") << args[j] << "): avx2 " << narrow[j]
                      << ", avx512f " << wide[j];
    EXPECT_EQ(differ, 0) << (log ? "log" : "exp") << " of " << args.size() << " arguments";
  }
}
#endif  // PEMC_TEST_SLEEF_WIDTHS

// Every batch size 1..17 (8-lane passes, their remainders, padding), dimensions with and without a
// compile-time specialisation, 1, 3 and 20 components (random, and the Kou presets), points of
// every kind of mixed_point in every position.
TEST(MixtureBatch, Avx512MatchesAvx2BitForBit) {
  PEMC_SKIP_WITHOUT_AVX512();
  rng::Stream s(24, rng::Domain::kTest, 1, 0);
  std::vector<std::pair<std::string, std::vector<GaussianMixture::Component>>> cases;
  for (const int d : {1, 2, 3, 4, 7})
    for (const int n_comp : {1, 3, 20})
      cases.emplace_back("d " + std::to_string(d) + " K " + std::to_string(n_comp),
                         random_components(s, d, n_comp));
  cases.emplace_back("KOU_A", kou_components(v1::MixtureTarget::KOU_A));
  cases.emplace_back("KOU_B", kou_components(v1::MixtureTarget::KOU_B));
  for (const auto& [name, comps] : cases) {
    const GaussianMixture narrow = avx2_only(comps), wide = with_avx512(comps);
    for (int m = 1; m <= 17; ++m) {
      for (int rep = 0; rep < 6; ++rep) {
        std::vector<Vector> points;
        for (int j = 0; j < m; ++j) points.push_back(mixed_point(s, wide, j + rep));
        expect_same_bits(run_batch(wide, points), run_batch(narrow, points), wide.dim(),
                         name + " m " + std::to_string(m) + " rep " + std::to_string(rep));
      }
    }
  }
}

// The special values of NonFiniteInputsAndOverflowingTermsPerPoint (NaN, infinite coordinates,
// an overflowing scaled term next to its zero weight), in every position of batches of 1..17.
TEST(MixtureBatch, Avx512MatchesAvx2ForSpecialValues) {
  PEMC_SKIP_WITHOUT_AVX512();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const auto comps = overflow_mixture().components();
  const GaussianMixture narrow = avx2_only(comps), wide = with_avx512(comps);
  const std::vector<Vector> specials = {Eigen::Vector3d(0.0, nan, 0.0),
                                        Vector::Constant(3, 1e10),
                                        Eigen::Vector3d(0.0, 0.0, -inf),
                                        Eigen::Vector3d(inf, 0.0, 0.0),
                                        Eigen::Vector3d(inf, nan, 0.0),
                                        Eigen::Vector3d(-inf, inf, 1.0),
                                        Vector::Constant(3, 1e200),
                                        Eigen::Vector3d(0.0, 0.0, 1e-160)};
  rng::Stream s(25, rng::Domain::kTest, 1, 0);
  for (int m = 1; m <= 17; ++m)
    for (int at = 0; at < m; ++at)
      for (std::size_t which = 0; which < specials.size(); ++which) {
        std::vector<Vector> points;
        for (int j = 0; j < m; ++j)
          points.push_back(j == at ? specials[which] : random_point(s, 3, 0.0, j % 2 ? 30.0 : 1.0));
        expect_same_bits(run_batch(wide, points), run_batch(narrow, points), 3,
                         "m " + std::to_string(m) + " special " + std::to_string(which) +
                             " at " + std::to_string(at));
      }
}

// The batch contract on the AVX-512 path: a point's bits are those it gets alone, in every
// position of every batch size 1..17, whatever its neighbours.
TEST(MixtureBatch, Avx512APointsBitsDoNotDependOnPositionOrBatchSize) {
  PEMC_SKIP_WITHOUT_AVX512();
  rng::Stream s(26, rng::Domain::kTest, 1, 0);
  for (const int d : {2, 7}) {
    const GaussianMixture t = with_avx512(random_components(s, d, 20));
    for (int p = 0; p < 5; ++p) {
      const Vector x = mixed_point(s, t, p);
      const BatchResult alone = run_batch(t, {x});
      for (int m = 1; m <= 17; ++m)
        for (int at = 0; at < m; ++at) {
          std::vector<Vector> points;
          for (int j = 0; j < m; ++j) points.push_back(j == at ? x : mixed_point(s, t, j));
          const BatchResult r = run_batch(t, points);
          const auto a = static_cast<std::size_t>(at);
          ASSERT_TRUE(same(r.u[a], alone.u[0]))
              << "d " << d << " point " << p << " m " << m << " at " << at;
          for (std::size_t i = 0; i < static_cast<std::size_t>(d); ++i)
            ASSERT_TRUE(same(r.g[a * d + i], alone.g[i]))
                << "d " << d << " point " << p << " m " << m << " at " << at << " i " << i;
        }
    }
  }
}

// The switch: off before construction gives the AVX2 path, and the guard turns it back on.
TEST(MixtureBatch, Avx512SwitchChoosesThePath) {
  PEMC_SKIP_WITHOUT_AVX512();
  {
    const Avx512Allowed off(false);
    EXPECT_FALSE(cpu_has_avx512f());
    EXPECT_EQ(GaussianMixture(kou_components(v1::MixtureTarget::KOU_A)).batch_width(), 4);
  }
  EXPECT_TRUE(cpu_has_avx512f());
  EXPECT_EQ(preset(v1::MixtureTarget::KOU_A)->batch_width(), 8);
}

}  // namespace
}  // namespace pemc::targets
