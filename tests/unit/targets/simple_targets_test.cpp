// CorrelatedGaussian, Banana, Flower, Funnel, BoxedTarget: gradients against finite differences,
// exact truths against brute-force integration of exp(-potential), non-finite inputs, config
// errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <vector>
#include <string>

#include "core/error.hpp"
#include "pemc/v1/config.pb.h"
#include "rng/stream.hpp"
#include "support/gradient_check.hpp"
#include "targets/banana.hpp"
#include "targets/boxed.hpp"
#include "targets/correlated_gaussian.hpp"
#include "targets/flower.hpp"
#include "targets/funnel.hpp"
#include "targets/gaussian.hpp"

namespace pemc::targets {
namespace {

using pemc::testing::expect_gradient_matches;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInfty = std::numeric_limits<double>::infinity();
constexpr double kPi = std::numbers::pi;

template <class Fn>
void expect_config_error(Fn&& fn, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "expected ConfigError containing '" << fragment << "'";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// Every target: NaN anywhere gives a non-finite potential (both entry points), no crash.
void expect_nan_input_rejected(const Target& t) {
  Vector g(t.dim());
  for (int i = 0; i < t.dim(); ++i) {
    Vector x = Vector::Ones(t.dim());
    x[i] = kNaN;
    EXPECT_FALSE(std::isfinite(t.potential(x))) << t.name() << " coordinate " << i;
    EXPECT_FALSE(std::isfinite(t.potential_and_gradient(x, g))) << t.name() << " coordinate " << i;
  }
}

// Midpoint-rule integrals of exp(-potential) times {1, x1, x2, x1^2, x2^2, x1 x2} on a 2-D grid.
struct GridResult {
  double z = 0, m1 = 0, m2 = 0, s1 = 0, s2 = 0, c12 = 0;
};
GridResult integrate_grid(const Target& t, double lo1, double hi1, double h1, double lo2,
                          double hi2, double h2) {
  GridResult r;
  Eigen::Vector2d x;
  const int n1 = static_cast<int>(std::lround((hi1 - lo1) / h1));
  const int n2 = static_cast<int>(std::lround((hi2 - lo2) / h2));
  for (int i = 0; i < n1; ++i) {
    x[0] = lo1 + (i + 0.5) * h1;
    for (int j = 0; j < n2; ++j) {
      x[1] = lo2 + (j + 0.5) * h2;
      const double u = t.potential(x);
      if (!std::isfinite(u)) continue;
      const double p = std::exp(-u) * h1 * h2;
      r.z += p;
      r.m1 += p * x[0];
      r.m2 += p * x[1];
      r.s1 += p * x[0] * x[0];
      r.s2 += p * x[1] * x[1];
      r.c12 += p * x[0] * x[1];
    }
  }
  return r;
}

void expect_truth_matches_grid(const Truth& t, const GridResult& g, double rel_tol) {
  ASSERT_TRUE(t.log_z && t.mean && t.second_moment && t.cross_moment);
  EXPECT_NEAR(*t.log_z, std::log(g.z), rel_tol);
  const double scale = std::sqrt(std::max((*t.second_moment)[0], (*t.second_moment)[1]));
  EXPECT_NEAR((*t.mean)[0], g.m1 / g.z, rel_tol * scale);
  EXPECT_NEAR((*t.mean)[1], g.m2 / g.z, rel_tol * scale);
  EXPECT_NEAR((*t.second_moment)[0], g.s1 / g.z, rel_tol * (*t.second_moment)[0]);
  EXPECT_NEAR((*t.second_moment)[1], g.s2 / g.z, rel_tol * (*t.second_moment)[1]);
  EXPECT_NEAR((*t.cross_moment)(0, 0), (*t.second_moment)[0], 1e-15 * (*t.second_moment)[0]);
  EXPECT_NEAR((*t.cross_moment)(1, 1), (*t.second_moment)[1], 1e-15 * (*t.second_moment)[1]);
  EXPECT_NEAR((*t.cross_moment)(0, 1), g.c12 / g.z, rel_tol * scale * scale);
  EXPECT_EQ((*t.cross_moment)(0, 1), (*t.cross_moment)(1, 0));
}

// ---------------------------------------------------------------------------------------------
// CorrelatedGaussian
// ---------------------------------------------------------------------------------------------

TEST(CorrelatedGaussian, AgreesWithTheDenseGaussian) {
  rng::Stream s(21, rng::Domain::kTest, 1, 0);
  for (int d : {1, 2, 3, 7}) {
    for (double rho : {0.0, 0.7, -0.4, 0.99}) {
      const CorrelatedGaussian t(d, rho);
      const Gaussian dense(Vector::Zero(d), t.covariance());
      EXPECT_EQ(t.name(), "correlated_gaussian");
      for (int k = 0; k < 10; ++k) {
        Vector x(d);
        s.fill_normal(x);
        x *= 2.0;
        Vector g(d), gd(d);
        const double u = t.potential_and_gradient(x, g);
        const double ud = dense.potential_and_gradient(x, gd);
        EXPECT_NEAR(u, ud, 1e-9 * std::max(1.0, std::fabs(ud)));
        EXPECT_NEAR(t.potential(x), u, 1e-14 * std::max(1.0, std::fabs(u)));
        for (int i = 0; i < d; ++i)
          EXPECT_NEAR(g[i], gd[i], 1e-9 * std::max(1.0, gd.cwiseAbs().maxCoeff()));
        expect_gradient_matches(t, x);
      }
      const Truth tt = t.truth(), td = dense.truth();
      EXPECT_NEAR(*tt.log_z, *td.log_z, 1e-10);
      EXPECT_TRUE(tt.mean->isZero(0.0));
      EXPECT_TRUE(tt.second_moment->isApprox(*td.second_moment, 1e-14));
      EXPECT_TRUE(tt.cross_moment->isApprox(*td.cross_moment, 1e-14));
      EXPECT_NEAR(t.covariance()(0, d - 1), std::pow(rho, d - 1), 1e-15);
    }
  }
}

TEST(CorrelatedGaussian, LargeDimensionIsLinearAndSkipsTheDenseCrossMoment) {
  const CorrelatedGaussian t(100000, 0.9);
  Vector x = Vector::Ones(100000);
  Vector g(100000);
  // All-ones: x0^2/2 + (d-1) (1-rho)^2 / (2 (1-rho^2)).
  const double expected = 0.5 + 99999 * 0.01 / (2 * 0.19);
  EXPECT_NEAR(t.potential_and_gradient(x, g), expected, 1e-9 * expected);
  EXPECT_FALSE(t.truth().cross_moment.has_value());
  EXPECT_TRUE(t.truth().second_moment.has_value());
  expect_nan_input_rejected(CorrelatedGaussian(4, 0.5));
}

TEST(CorrelatedGaussian, ConfigValidation) {
  v1::CorrelatedGaussianTarget cfg;
  cfg.set_dim(3);
  cfg.set_rho(0.5);
  EXPECT_EQ(make_correlated_gaussian(cfg)->dim(), 3);
  cfg.set_rho(1.0);
  expect_config_error([&] { make_correlated_gaussian(cfg); }, "target.correlated_gaussian.rho");
  cfg.set_rho(0.5);
  cfg.set_dim(0);
  expect_config_error([&] { make_correlated_gaussian(cfg); }, "target.correlated_gaussian.dim");
  EXPECT_THROW(CorrelatedGaussian(2, kNaN), ConfigError);
}

// ---------------------------------------------------------------------------------------------
// Banana
// ---------------------------------------------------------------------------------------------

// Target::potential_and_gradient_batch's default: one single call per point, bit for bit, point j
// at column j; shapes checked.
TEST(TargetBatch, DefaultIsOneCallPerPoint) {
  const Banana t(0.1, 100.0);
  rng::Stream s(31, rng::Domain::kTest, 1, 0);
  const int m = 5;
  std::vector<double> x(2 * m), u(m), g(2 * m);
  for (double& v : x) v = 5.0 * s.normal();
  t.potential_and_gradient_batch(x, u, g);
  for (int j = 0; j < m; ++j) {
    Vector gj(2);
    const double uj = t.potential_and_gradient(Eigen::Map<const Vector>(x.data() + 2 * j, 2), gj);
    EXPECT_EQ(u[static_cast<std::size_t>(j)], uj);
    EXPECT_EQ(g[static_cast<std::size_t>(2 * j)], gj[0]);
    EXPECT_EQ(g[static_cast<std::size_t>(2 * j + 1)], gj[1]);
  }
  std::vector<double> short_g(2 * m - 1);
  EXPECT_THROW(t.potential_and_gradient_batch(x, u, short_g), std::invalid_argument);
}

TEST(Banana, GradientMatchesFiniteDifferences) {
  rng::Stream s(31, rng::Domain::kTest, 1, 0);
  for (const auto& [b, v] : {std::pair{0.1, 100.0}, std::pair{0.5, 2.0}, std::pair{-0.3, 1.0}}) {
    const Banana t(b, v);
    for (int k = 0; k < 100; ++k) {
      const double x1 = std::sqrt(v) * 2.5 * s.normal();
      const double x2 = b * (x1 * x1 - v) + 3.0 * s.normal();
      expect_gradient_matches(t, Eigen::Vector2d(x1, x2));
    }
  }
}

TEST(Banana, DefaultTruthMatchesClosedForm) {
  v1::BananaTarget cfg;
  const auto t = make_banana(cfg);
  EXPECT_EQ(t->b(), 0.1);
  EXPECT_EQ(t->v(), 100.0);
  const Truth tr = t->truth();
  EXPECT_EQ((*tr.second_moment)[0], 100.0);
  EXPECT_NEAR((*tr.second_moment)[1], 201.0, 1e-12);  // 1 + 2 b^2 v^2
  EXPECT_NEAR(*tr.log_z, std::log(2 * kPi * 10.0), 1e-15);
}

// For each x1 the integrand is a unit Gaussian in x2, so the midpoint rule with h2 = 0.1 is exact
// to rounding in x2, and the x1-marginal is N(0, v) sampled at h1 << sqrt(v): the tensor grid is
// accurate to ~1e-12; the box holds all but ~1e-15 of the mass.
TEST(Banana, TruthMatchesGridIntegration) {
  for (const auto& [b, v] : {std::pair{0.1, 100.0}, std::pair{0.5, 2.0}}) {
    const Banana t(b, v);
    const double r1 = 9.0 * std::sqrt(v);
    const double lo2 = -b * v - 10.0 - std::fabs(b) * v, hi2 = std::fabs(b) * (r1 * r1) + 10.0;
    const GridResult g = integrate_grid(t, -r1, r1, std::sqrt(v) / 40, lo2 - 1, hi2 + 1, 0.1);
    expect_truth_matches_grid(t.truth(), g, 1e-9);
  }
}

TEST(Banana, ConfigAndNonFinite) {
  v1::BananaTarget cfg;
  cfg.set_b(0.2);
  cfg.set_v(4.0);
  EXPECT_EQ(make_banana(cfg)->b(), 0.2);
  cfg.set_v(0.0);
  expect_config_error([&] { make_banana(cfg); }, "target.banana.v");
  expect_nan_input_rejected(Banana());
  Vector g(2);
  EXPECT_EQ(Banana().potential_and_gradient(Eigen::Vector2d(kInfty, 0.0), g), kInfty);
}

// ---------------------------------------------------------------------------------------------
// Flower
// ---------------------------------------------------------------------------------------------

TEST(Flower, GradientMatchesFiniteDifferences) {
  rng::Stream s(41, rng::Domain::kTest, 1, 0);
  for (const FlowerOptions& o :
       {FlowerOptions{}, FlowerOptions{2.0, 3.0, 1, 0.7}, FlowerOptions{5.0, -2.0, 3, 0.5},
        FlowerOptions{4.0, 0.0, 0, 1.0}}) {
    const Flower t(o);
    for (int k = 0; k < 200; ++k) {
      const double rho = 0.5 + 25.0 * s.uniform();
      const double th = 2 * kPi * s.uniform();
      expect_gradient_matches(t, Eigen::Vector2d(rho * std::cos(th), rho * std::sin(th)));
    }
    // on the axes (atan2 branch cut at theta = pi)
    expect_gradient_matches(t, Eigen::Vector2d(-7.0, 0.0));
    expect_gradient_matches(t, Eigen::Vector2d(0.0, -3.0));
  }
}

TEST(Flower, OriginIsARejectionAndNearOriginIsFinite) {
  const Flower t;
  Vector g(2);
  EXPECT_EQ(t.potential(Eigen::Vector2d(0.0, 0.0)), kInfty);
  EXPECT_EQ(t.potential_and_gradient(Eigen::Vector2d(0.0, 0.0), g), kInfty);
  EXPECT_EQ(t.potential_and_gradient(Eigen::Vector2d(1e-200, -1e-200), g), kInfty);
  for (double r : {1e-140, 1e-12, 1e-3}) {
    const Eigen::Vector2d x(r * 0.6, r * 0.8);
    const double u = t.potential_and_gradient(x, g);
    EXPECT_TRUE(std::isfinite(u)) << r;
    EXPECT_TRUE(g.allFinite()) << r;
    EXPECT_EQ(u, t.potential(x));
  }
  expect_nan_input_rejected(t);
  EXPECT_EQ(t.potential(Eigen::Vector2d(kInfty, 1.0)), kInfty);
}

// Default flower: brute-force midpoint grid in Cartesian coordinates. The integrand is smooth
// except at the origin, where its value is <= exp(-8), so the grid error is far below 1e-8.
TEST(Flower, DefaultTruthMatchesCartesianGrid) {
  const Flower t;
  const Truth tr = t.truth();
  ASSERT_TRUE(tr.mean && tr.second_moment && tr.cross_moment && tr.log_z);
  // Six-fold symmetry: mean 0, isotropic second moments, no correlation.
  EXPECT_NEAR((*tr.mean)[0], 0.0, 1e-12);
  EXPECT_NEAR((*tr.mean)[1], 0.0, 1e-12);
  EXPECT_NEAR((*tr.second_moment)[0], (*tr.second_moment)[1], 1e-10);
  const GridResult g = integrate_grid(t, -24, 24, 0.02, -24, 24, 0.02);
  expect_truth_matches_grid(tr, g, 1e-8);
}

// A non-symmetric flower (one petal, amplitude > radius so c(theta) < 0 on part of the circle):
// brute-force midpoint grid in polar coordinates through potential() (no closed-form radial
// integrals). The rho-grid error is O(h^2) from the rho = 0 end: ~ h^2/24 relative, < 1e-7.
TEST(Flower, AsymmetricTruthMatchesPolarGrid) {
  const Flower t(FlowerOptions{2.0, 3.0, 1, 0.7});
  const Truth tr = t.truth();
  ASSERT_TRUE(tr.mean && tr.second_moment && tr.cross_moment && tr.log_z);
  const double hr = 1e-3, rmax = 2.0 + 3.0 + 10 * 0.7;
  const int nt = 512;
  const double ht = 2 * kPi / nt;
  GridResult g;
  for (double r = hr / 2; r < rmax; r += hr) {
    for (int j = 0; j < nt; ++j) {
      const double th = (j + 0.5) * ht;
      const Eigen::Vector2d x(r * std::cos(th), r * std::sin(th));
      const double p = std::exp(-t.potential(x)) * r * hr * ht;
      g.z += p;
      g.m1 += p * x[0];
      g.m2 += p * x[1];
      g.s1 += p * x[0] * x[0];
      g.s2 += p * x[1] * x[1];
      g.c12 += p * x[0] * x[1];
    }
  }
  expect_truth_matches_grid(tr, g, 1e-6);
  EXPECT_GT((*tr.mean)[0], 0.5);  // the single petal points along +x1
  EXPECT_NEAR((*tr.mean)[1], 0.0, 1e-12);
}

TEST(Flower, ConfigDefaultsAndErrors) {
  v1::FlowerTarget cfg;
  const auto t = make_flower(cfg);
  EXPECT_EQ(t->options().radius, 10.0);
  EXPECT_EQ(t->options().amplitude, 6.0);
  EXPECT_EQ(t->options().petals, 6);
  EXPECT_EQ(t->options().sd, 1.0);
  EXPECT_EQ(t->name(), "flower");
  const auto x0 = t->default_initial_point();
  ASSERT_TRUE(x0);
  EXPECT_NEAR(t->potential(*x0), 0.0, 1e-12);  // the petal tip is on the ridge
  cfg.set_sd(0.0);
  expect_config_error([&] { make_flower(cfg); }, "target.flower.sd");
  cfg.clear_sd();
  cfg.set_petals(-1);
  expect_config_error([&] { make_flower(cfg); }, "target.flower.petals");
  cfg.clear_petals();
  cfg.set_radius(-1.0);
  expect_config_error([&] { make_flower(cfg); }, "target.flower.radius");
}

// ---------------------------------------------------------------------------------------------
// Funnel
// ---------------------------------------------------------------------------------------------

TEST(Funnel, GradientMatchesFiniteDifferences) {
  rng::Stream s(51, rng::Domain::kTest, 1, 0);
  for (int d : {2, 5}) {
    const Funnel t(d, 3.0);
    for (int k = 0; k < 200; ++k) {
      Vector x(d);
      x[0] = 4.0 * s.normal();
      for (int i = 1; i < d; ++i) x[i] = 2.0 * std::exp(0.5 * x[0]) * s.normal();
      expect_gradient_matches(t, x);
    }
  }
}

// d = 2 by quadrature through potential(): x = e^{v/2} z turns the inner integral into one over a
// unit-scale z (midpoint exact to rounding for Gaussians at h = 0.05), the outer one over
// v ~ N(0, 9) at h = 0.02.
TEST(Funnel, TruthMatchesQuadrature) {
  const Funnel t(2, 3.0);
  double z = 0, ev = 0, ev2 = 0, ex = 0, ex2 = 0, evx = 0;
  const double hv = 0.02, hz = 0.05;
  for (double v = -36 + hv / 2; v < 36; v += hv) {
    const double jac = std::exp(0.5 * v);
    for (double u = -14 + hz / 2; u < 14; u += hz) {
      const double x = jac * u;
      const double p = std::exp(-t.potential(Eigen::Vector2d(v, x))) * jac * hz * hv;
      z += p;
      ev += p * v;
      ev2 += p * v * v;
      ex += p * x;
      ex2 += p * x * x;
      evx += p * v * x;
    }
  }
  const Truth tr = t.truth();
  EXPECT_NEAR(*tr.log_z, std::log(z), 1e-10);
  EXPECT_NEAR(*tr.log_z, std::log(2 * kPi) + std::log(3.0), 1e-15);
  EXPECT_NEAR((*tr.mean)[0], ev / z, 1e-10);
  EXPECT_NEAR((*tr.second_moment)[0], ev2 / z, 1e-9);
  EXPECT_NEAR((*tr.mean)[1], ex / z, 1e-8);
  EXPECT_NEAR((*tr.second_moment)[1], ex2 / z, 1e-9 * ex2 / z);
  EXPECT_NEAR((*tr.second_moment)[1], std::exp(4.5), 1e-12 * std::exp(4.5));
  EXPECT_NEAR((*tr.cross_moment)(0, 1), evx / z, 1e-8);
}

TEST(Funnel, ExtremeNeckAndMouthNeverNaN) {
  const Funnel t(3, 3.0);
  Vector g(3);
  // v far below -709: e^{-v} overflows. With x = 0 the potential is still the finite v^2/18 + v.
  double u = t.potential_and_gradient(Eigen::Vector3d(-800.0, 0.0, 0.0), g);
  EXPECT_NEAR(u, 800.0 * 800.0 / 18.0 - 800.0, 1e-9);
  EXPECT_TRUE(g.allFinite());
  EXPECT_EQ(u, t.potential(Eigen::Vector3d(-800.0, 0.0, 0.0)));
  // With x != 0 the density underflows to 0: +inf (a rejection), not NaN.
  EXPECT_EQ(t.potential_and_gradient(Eigen::Vector3d(-800.0, 1.0, 0.0), g), kInfty);
  EXPECT_EQ(t.potential(Eigen::Vector3d(-800.0, 0.0, 1e-10)), kInfty);
  // Wide mouth: finite.
  u = t.potential_and_gradient(Eigen::Vector3d(800.0, 1e10, -1e10), g);
  EXPECT_TRUE(std::isfinite(u));
  EXPECT_TRUE(g.allFinite());
  expect_nan_input_rejected(t);
}

TEST(Funnel, ConfigDefaultsAndErrors) {
  v1::FunnelTarget cfg;
  cfg.set_dim(10);
  const auto t = make_funnel(cfg);
  EXPECT_EQ(t->dim(), 10);
  EXPECT_EQ(t->v_scale(), 3.0);
  EXPECT_NEAR((*t->truth().second_moment)[9], std::exp(4.5), 1e-12);
  cfg.set_dim(1);
  expect_config_error([&] { make_funnel(cfg); }, "target.funnel.dim");
  cfg.set_dim(2);
  cfg.set_v_scale(-1.0);
  expect_config_error([&] { make_funnel(cfg); }, "target.funnel.v_scale");
}

// ---------------------------------------------------------------------------------------------
// BoxedTarget
// ---------------------------------------------------------------------------------------------

TEST(Boxed, InsideEqualsInnerOutsideRejects) {
  auto inner = std::make_shared<Banana>();
  const BoxedTarget t(inner, -5.0, 5.0);
  EXPECT_EQ(t.dim(), 2);
  EXPECT_EQ(t.name(), "boxed_banana");
  Vector g(2), gi(2);
  for (const Eigen::Vector2d& x : {Eigen::Vector2d(0.0, 0.0), Eigen::Vector2d(4.9, -4.9),
                                   Eigen::Vector2d(5.0, -5.0)}) {  // boundary included
    EXPECT_EQ(t.potential_and_gradient(x, g), inner->potential_and_gradient(x, gi));
    EXPECT_EQ(g, gi);
    EXPECT_EQ(t.potential(x), inner->potential(x));
    expect_gradient_matches(t, x == Eigen::Vector2d(5.0, -5.0) ? Eigen::Vector2d(4.0, -4.0) : x);
  }
  for (const Eigen::Vector2d& x : {Eigen::Vector2d(5.0000001, 0.0), Eigen::Vector2d(0.0, -6.0),
                                   Eigen::Vector2d(kNaN, 0.0), Eigen::Vector2d(0.0, kInfty)}) {
    EXPECT_EQ(t.potential(x), kInfty);
    EXPECT_EQ(t.potential_and_gradient(x, g), kInfty);
  }
  EXPECT_FALSE(t.truth().mean.has_value());
  EXPECT_FALSE(t.truth().log_z.has_value());
}

TEST(Boxed, ApplyBoxFromConfig) {
  auto inner = std::make_shared<Flower>();
  v1::TargetConfig cfg;
  EXPECT_EQ(apply_box(inner, cfg).get(), inner.get());  // no box: unchanged
  cfg.set_box_lower(0.0);
  auto lower_only = apply_box(inner, cfg);
  EXPECT_NE(lower_only.get(), inner.get());
  EXPECT_EQ(lower_only->potential(Eigen::Vector2d(-1.0, 3.0)), kInfty);
  EXPECT_TRUE(std::isfinite(lower_only->potential(Eigen::Vector2d(1e6, 3.0))));
  // The flower's default start (16, 0) is inside [0, inf)^2, so it is kept.
  ASSERT_TRUE(lower_only->default_initial_point());
  cfg.set_box_upper(10.0);
  auto both = apply_box(inner, cfg);
  EXPECT_FALSE(both->default_initial_point());  // (16, 0) is outside [0, 10]^2
  cfg.set_box_upper(-1.0);
  expect_config_error([&] { apply_box(inner, cfg); }, "target.box_lower/box_upper");
  cfg.set_box_upper(kNaN);
  expect_config_error([&] { apply_box(inner, cfg); }, "target.box_upper");
  EXPECT_THROW(BoxedTarget(inner, 1.0, 1.0), ConfigError);
  EXPECT_THROW(BoxedTarget(nullptr, 0.0, 1.0), ConfigError);
}

}  // namespace
}  // namespace pemc::targets
