// The pseudo-extended target (eq. 2, 7, 8 of Nemeth et al. 2019): values against a direct
// evaluation of eq. (8), gradients against finite differences (also at extreme beta and where one
// pseudo-sample dominates the log-sum-exp), rejection, weights (Theorem 2.1, checked exactly by
// quadrature), initial points.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "estimators/weight_degeneracy_source.hpp"
#include "extended/pseudo_extended_target.hpp"
#include "rng/stream.hpp"
#include "support/gradient_check.hpp"
#include "support/weighted_quadrature.hpp"
#include "targets/boxed.hpp"
#include "targets/gaussian.hpp"
#include "targets/mixture.hpp"

namespace pemc::extended {
namespace {

using targets::GaussianMixture;

std::shared_ptr<GaussianMixture> kou_a() {
  std::vector<GaussianMixture::Component> comps;
  for (const Vector& mu : targets::kou_means())
    comps.push_back({1.0 / 20.0, mu, Vector::Constant(2, 0.01)});
  return std::make_shared<GaussianMixture>(comps);
}

std::shared_ptr<GaussianMixture> bimodal_1d() {
  std::vector<GaussianMixture::Component> comps;
  comps.push_back({0.5, Vector::Constant(1, -1.0), Vector::Constant(1, 0.1)});
  comps.push_back({0.5, Vector::Constant(1, 1.0), Vector::Constant(1, 0.02)});
  return std::make_shared<GaussianMixture>(comps);
}

// Eq. (8) evaluated literally, in long double: the sum of ratios gamma pi / (gamma^beta g), the
// product of gamma^beta g, the logit Jacobian; no log-sum-exp tricks.
double direct_potential(const targets::Target& base, const PseudoExtendedOptions& o,
                        const Vector& z) {
  const int n = o.n_pseudo, d = base.dim();
  long double sum = 0.0L, log_prod = 0.0L;
  for (int i = 0; i < n; ++i) {
    const long double log_gamma = -base.potential(z.segment(i * d, d));
    long double beta, log_jac = 0.0L;
    if (o.fixed_beta) {
      beta = *o.fixed_beta;
    } else {
      const long double eta = z[n * d + i];
      const long double s = 1.0L / (1.0L + std::exp(-eta));
      beta = o.beta_lower + (o.beta_upper - o.beta_lower) * s;
      log_jac =
          std::log((long double)(o.beta_upper - o.beta_lower)) + std::log(s) + std::log(1.0L - s);
    }
    auto log_beta_density = [&](const BetaShape& sh) {
      if (o.fixed_beta) return 0.0L;
      return (sh.a - 1.0L) * std::log(beta) + (sh.b - 1.0L) * std::log(1.0L - beta);
    };
    const long double log_pi = log_beta_density(o.beta_target);
    const long double log_g = log_beta_density(o.beta_instrumental);
    sum += std::exp(log_gamma + log_pi - (beta * log_gamma + log_g));
    log_prod += beta * log_gamma + log_g + log_jac;
  }
  return static_cast<double>(-(std::log(sum / n) + log_prod));
}

Vector random_state(const PseudoExtendedTarget& t, std::uint64_t seed, double x_lo, double x_hi,
                    double eta_scale) {
  rng::Stream s(seed, rng::Domain::kTest, 0, 0);
  Vector z(t.dim());
  const int nd = t.n_pseudo() * t.original_dim();
  for (int j = 0; j < nd; ++j) z[j] = x_lo + (x_hi - x_lo) * s.uniform();
  for (int j = nd; j < t.dim(); ++j) z[j] = eta_scale * s.normal();
  return z;
}

TEST(PseudoExtendedTarget, DimensionsAndNames) {
  PseudoExtendedOptions o;
  o.n_pseudo = 5;
  PseudoExtendedTarget sampled(kou_a(), o);
  EXPECT_EQ(sampled.dim(), 5 * 2 + 5);
  EXPECT_EQ(sampled.original_dim(), 2);
  EXPECT_TRUE(sampled.beta_sampled());
  o.fixed_beta = 0.3;
  PseudoExtendedTarget fixed(kou_a(), o);
  EXPECT_EQ(fixed.dim(), 10);
  EXPECT_FALSE(fixed.beta_sampled());
}

TEST(PseudoExtendedTarget, PotentialEqualsDirectEvaluationOfEq8) {
  auto base = kou_a();
  for (int variant = 0; variant < 4; ++variant) {
    PseudoExtendedOptions o;
    o.n_pseudo = 4;
    if (variant == 1) o.fixed_beta = 0.37;
    if (variant == 2) {
      o.beta_lower = 0.1;
      o.beta_upper = 0.9;
    }
    if (variant == 3) {
      o.beta_target = {2.5, 1.5};
      o.beta_instrumental = {0.7, 3.0};
    }
    PseudoExtendedTarget t(base, o);
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      // Points near the modes keep gamma^(1-beta) representable in the direct evaluation.
      const Vector z = random_state(t, seed + 10 * variant, 2.0, 8.0, 1.5);
      const double u = t.potential(z);
      const double direct = direct_potential(*base, o, z);
      ASSERT_TRUE(std::isfinite(direct));
      EXPECT_NEAR(u, direct, 1e-9 * std::max(1.0, std::fabs(direct)))
          << "variant " << variant << " seed " << seed;
      Vector g(t.dim());
      EXPECT_EQ(t.potential_and_gradient(z, g), u);  // same value, bit for bit
    }
  }
}

TEST(PseudoExtendedTarget, OnePseudoSampleWithFixedBetaIsTheTarget) {
  auto base = kou_a();
  PseudoExtendedOptions o;
  o.n_pseudo = 1;
  o.fixed_beta = 0.42;
  PseudoExtendedTarget t(base, o);
  const Vector x = Eigen::Vector2d(4.3, 5.1);
  Vector g(2), gb(2);
  const double u = t.potential_and_gradient(x, g);
  const double ub = base->potential_and_gradient(x, gb);
  EXPECT_NEAR(u, ub, 1e-12 * std::fabs(ub));
  EXPECT_NEAR((g - gb).cwiseAbs().maxCoeff(), 0.0, 1e-12 * gb.cwiseAbs().maxCoeff());
}

TEST(PseudoExtendedTarget, GradientMatchesFiniteDifferencesAtRandomPoints) {
  auto base = kou_a();
  for (int variant = 0; variant < 5; ++variant) {
    PseudoExtendedOptions o;
    o.n_pseudo = 3;
    if (variant == 1) o.fixed_beta = 0.2;
    if (variant == 2) o.beta_lower = 0.0;
    if (variant == 3) {
      o.beta_lower = 0.1;
      o.beta_upper = 0.9;
      o.beta_target = {2.0, 3.0};
      o.beta_instrumental = {0.5, 1.5};
    }
    if (variant == 4) o.beta_instrumental = {6.0, 1.0};  // the default g for d = 10
    PseudoExtendedTarget t(base, o);
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE("variant " + std::to_string(variant) + " seed " + std::to_string(seed));
      pemc::testing::expect_gradient_matches(t, random_state(t, seed, 0.0, 10.0, 2.0), 1e-6);
    }
  }
}

TEST(PseudoExtendedTarget, GradientMatchesAtExtremeBeta) {
  auto base = kou_a();
  for (double lower : {0.0, 0.001, 0.1}) {
    PseudoExtendedOptions o;
    o.n_pseudo = 3;
    o.beta_lower = lower;
    o.beta_upper = lower == 0.1 ? 0.9 : 1.0;
    PseudoExtendedTarget t(base, o);
    Vector z = random_state(t, 7, 1.0, 9.0, 0.0);
    // beta at (within 1e-11 of) both bounds and in the middle.
    z[6] = -25.0;
    z[7] = 25.0;
    z[8] = 0.0;
    SCOPED_TRACE("lower " + std::to_string(lower));
    pemc::testing::expect_gradient_matches(t, z, 1e-6);
    EXPECT_NEAR(t.beta(z, 0), lower, 1e-10);
    EXPECT_NEAR(t.beta(z, 1), o.beta_upper, 1e-10);
  }
  // Fixed beta at both ends of [0, 1].
  for (double b : {0.0, 1.0}) {
    PseudoExtendedOptions o;
    o.n_pseudo = 3;
    o.fixed_beta = b;
    PseudoExtendedTarget t(base, o);
    pemc::testing::expect_gradient_matches(t, random_state(t, 9, 1.0, 9.0, 0.0), 1e-6);
  }
}

TEST(PseudoExtendedTarget, GradientMatchesWhenOnePseudoSampleDominates) {
  auto base = kou_a();
  PseudoExtendedOptions o;
  o.n_pseudo = 4;
  PseudoExtendedTarget t(base, o);
  Vector z(t.dim());
  // x_1 on a mode; the others hundreds of standard deviations from every mode, so a_1 exceeds
  // the other a_i by thousands and the softmax weight of pseudo-sample 1 is 1 to machine precision.
  z << 2.18, 5.76, -3.0, 14.0, 12.0, -2.5, 6.0, 12.5,  // x_1 .. x_4
      0.3, -0.4, 1.2, -2.0;                            // eta_1 .. eta_4
  pemc::testing::expect_gradient_matches(t, z, 1e-6);
  // The dominated samples' x-gradients are scaled by beta_i alone (w_i = 0).
  Vector g(t.dim()), gb(2);
  t.potential_and_gradient(z, g);
  base->potential_and_gradient(z.segment(2, 2), gb);
  const double beta2 = t.beta(z, 1);
  EXPECT_NEAR(g[2], beta2 * gb[0], 1e-12 * std::fabs(beta2 * gb[0]));
}

// One member with sampled beta takes potential_and_gradient's fast path (serial_sampled);
// potential() takes the general path (item records, assemble). Both must give the same potential
// bits, in the bulk, at extreme eta (exp(-|eta|) = 0 and near 1) and where one pseudo-sample
// dominates, with flat priors and with Beta ones (the default g for d >= 3). (Its gradient
// bits against the general path's on a group of 2 and 4 members: tests/mpi/pe_blocks_test.sh.)
TEST(PseudoExtendedTarget, FastPathPotentialHasTheGeneralPathsBits) {
  for (const int n : {1, 2, 5, 9})
  for (const bool flat : {true, false}) {
    PseudoExtendedOptions o;
    o.n_pseudo = n;
    // g = Beta(6, 1) (the default for d = 10); pi stays flat: a pi(beta) that vanishes at a bound
    // gives a_i = -inf there, which potential() accepts and the gradient (0 * inf) rejects, on
    // either path.
    if (!flat) o.beta_instrumental = {6.0, 1.0};
    PseudoExtendedTarget t(kou_a(), o);
    Vector g(t.dim());
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      Vector z = random_state(t, seed, 0.0, 10.0, seed % 4 == 0 ? 800.0 : 3.0);
      if (seed % 5 == 0) z[2 * n] = 0.0;  // beta at the midpoint
      if (seed % 7 == 0) z.head(2) = targets::kou_means()[3];  // pseudo-sample 0 at a mode
      const double u = t.potential(z);
      const double ug = t.potential_and_gradient(z, g);
      EXPECT_EQ(std::bit_cast<std::uint64_t>(u), std::bit_cast<std::uint64_t>(ug))
          << "N = " << n << (flat ? "" : " (Beta g)") << ", seed " << seed << ": " << u
          << " vs " << ug;
      EXPECT_TRUE(g.allFinite()) << "N = " << n << ", seed " << seed;
    }
  }
}

TEST(PseudoExtendedTarget, NonFiniteTargetAtAnyPseudoSampleRejects) {
  auto boxed = std::make_shared<targets::BoxedTarget>(kou_a(), 0.0, 10.0);
  PseudoExtendedOptions o;
  o.n_pseudo = 3;
  PseudoExtendedTarget t(boxed, o);
  Vector z = random_state(t, 3, 1.0, 9.0, 1.0);
  Vector g(t.dim());
  ASSERT_TRUE(std::isfinite(t.potential_and_gradient(z, g)));
  z[3] = -0.5;  // pseudo-sample 2 leaves the box
  EXPECT_EQ(t.potential(z), kInf);
  EXPECT_EQ(t.potential_and_gradient(z, g), kInf);
  EXPECT_TRUE(g.array().isNaN().all());
  z[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(t.potential(z), kInf);
}

TEST(PseudoExtendedTarget, WeightedViewReportsSamplesWeightsAndBetas) {
  auto base = kou_a();
  PseudoExtendedOptions o;
  o.n_pseudo = 3;
  o.beta_target = {2.0, 1.0};
  PseudoExtendedTarget t(base, o);
  const Vector z = random_state(t, 11, 2.0, 8.0, 1.0);
  targets::WeightedView v;
  ASSERT_TRUE(t.weighted_view(z, v));
  ASSERT_EQ(v.samples.rows(), 2);
  ASSERT_EQ(v.samples.cols(), 3);
  ASSERT_EQ(v.log_weights.size(), 3);
  ASSERT_EQ(v.extra.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(v.samples.col(i), z.segment(2 * i, 2));
    const double beta = t.beta(z, i);
    EXPECT_EQ(v.extra[i], beta);
    // log gamma(x) pi(beta) / q(x, beta) = (1 - beta) log gamma(x) + log pi(beta) - log g(beta).
    const double expected = -(1.0 - beta) * base->potential(z.segment(2 * i, 2)) + std::log(beta);
    EXPECT_NEAR(v.log_weights[i], expected, 1e-10 * std::fabs(expected));
  }
}

// The chain driver finds weight-degeneracy tracking through this interface alone: a tracker for
// N >= 2 that takes the weighted view's log weights and (sampled beta only) its betas.
TEST(PseudoExtendedTarget, IsAWeightDegeneracySource) {
  EXPECT_EQ(dynamic_cast<const estimators::WeightDegeneracySource*>(kou_a().get()), nullptr);
  PseudoExtendedOptions o;
  o.n_pseudo = 3;
  const auto sampled = std::make_shared<PseudoExtendedTarget>(kou_a(), o);
  const targets::TargetPtr space = sampled;
  const auto* source = dynamic_cast<const estimators::WeightDegeneracySource*>(space.get());
  ASSERT_NE(source, nullptr);
  auto tracker = source->make_degeneracy_tracker();
  ASSERT_TRUE(tracker.has_value());
  EXPECT_TRUE(source->degeneracy_tracks_betas());
  targets::WeightedView v;
  ASSERT_TRUE(sampled->weighted_view(random_state(*sampled, 5, 2.0, 8.0, 1.0), v));
  tracker->add(std::span<const double>(v.log_weights.data(), 3), std::span<const double>(v.extra));
  EXPECT_EQ(tracker->n_draws(), 1);
  EXPECT_EQ(tracker->stats().n_pseudo, 3);
  EXPECT_FALSE(std::isnan(tracker->stats().beta_at_lower_fraction));  // betas were counted

  o.fixed_beta = 0.3;
  const PseudoExtendedTarget fixed(kou_a(), o);
  EXPECT_TRUE(fixed.make_degeneracy_tracker().has_value());
  EXPECT_FALSE(fixed.degeneracy_tracks_betas());
  o.n_pseudo = 1;
  EXPECT_FALSE(PseudoExtendedTarget(kou_a(), o).make_degeneracy_tracker().has_value());
}

TEST(PseudoExtendedTarget, InitialPointDrawsEachPseudoSampleAndStartsBetaInTheMiddle) {
  PseudoExtendedOptions o;
  o.n_pseudo = 3;
  o.beta_lower = 0.1;
  o.beta_upper = 0.9;
  PseudoExtendedTarget t(kou_a(), o);
  Vector z(t.dim());
  int calls = 0;
  t.initial_point(
      [&](VectorRef x) {
        ASSERT_EQ(x.size(), 2);
        x.setConstant(static_cast<double>(++calls));
      },
      z);
  EXPECT_EQ(calls, 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(z.segment(2 * i, 2), Vector::Constant(2, i + 1.0));
    EXPECT_DOUBLE_EQ(t.beta(z, i), 0.5);
  }
  o.beta_init = 0.25;
  PseudoExtendedTarget t2(kou_a(), o);
  t2.initial_point([](VectorRef x) { x.setZero(); }, z);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(t2.beta(z, i), 0.25, 1e-15);
}

TEST(PseudoExtendedTarget, RejectsBadOptions) {
  auto base = kou_a();
  auto make = [&](PseudoExtendedOptions o) { PseudoExtendedTarget t(base, o); };
  PseudoExtendedOptions o;
  o.n_pseudo = 0;
  EXPECT_THROW(make(o), ConfigError);
  o = {};
  o.beta_lower = 0.5;
  o.beta_upper = 0.5;
  EXPECT_THROW(make(o), ConfigError);
  o = {};
  o.beta_upper = 1.5;
  EXPECT_THROW(make(o), ConfigError);
  o = {};
  o.fixed_beta = -0.1;
  EXPECT_THROW(make(o), ConfigError);
  o = {};
  o.beta_init = 1.0;
  EXPECT_THROW(make(o), ConfigError);
  o = {};
  o.beta_instrumental = {0.0, 1.0};
  EXPECT_THROW(make(o), ConfigError);
  EXPECT_THROW(PseudoExtendedTarget(nullptr, PseudoExtendedOptions{}), ConfigError);
}

TEST(PseudoExtendedTheorem21, FixedBetaWeightsRecoverTargetMoments) {
  // 0.5 N(-1, 0.1) + 0.5 N(1, 0.02): E[x] = 0, E[x^2] = 1 + 0.06 = 1.06.
  PseudoExtendedOptions o;
  o.n_pseudo = 2;
  o.fixed_beta = 0.3;
  PseudoExtendedTarget t(bimodal_1d(), o);
  const auto x = testing::grid(-6.0, 6.0, 601);
  const auto m = testing::weighted_moments_by_quadrature(t, {x, x});
  EXPECT_NEAR(m.m1, 0.0, 1e-9);
  EXPECT_NEAR(m.m2, 1.06, 1e-9);
}

TEST(PseudoExtendedTheorem21, SampledBetaWithPriorsRecoversTargetMoments) {
  // Sampled beta on (0.2, 1) with non-flat pi(beta) and g(beta): the extended density includes
  // the logit Jacobian, so the marginal of (x_i, beta_i) is right only if every term is.
  PseudoExtendedOptions o;
  o.n_pseudo = 2;
  o.beta_lower = 0.2;
  o.beta_upper = 1.0;
  o.beta_target = {2.0, 1.5};
  o.beta_instrumental = {1.5, 2.0};
  PseudoExtendedTarget t(bimodal_1d(), o);
  const auto x = testing::grid(-5.0, 5.0, 81);
  const auto eta = testing::grid(-16.0, 16.0, 33);
  const auto m = testing::weighted_moments_by_quadrature(t, {x, x, eta, eta});
  EXPECT_NEAR(m.m1, 0.0, 1e-6);
  EXPECT_NEAR(m.m2, 1.06, 1e-6);
}

}  // namespace
}  // namespace pemc::extended
