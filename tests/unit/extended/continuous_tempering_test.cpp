// Tests of joint and Gibbs continuous tempering (src/extended/continuous_tempering.hpp):
//  - the extended potentials against eq. (14)/(16) and finite differences, at extreme u too;
//  - the weighted view (extras layout, no extra target evaluation when the state is known);
//  - exact gradient-evaluation counts (a counting target vs TransitionStats);
//  - short chains on the paper's 1-D bimodal target (Section 7.1) and on a Gaussian with log zeta
//    off by 1.5: log Z by eq. (20), the mode masses and the base moments by eqs. (21)/(22), within
//    4 batch-means standard errors of the truth;
//  - the config entry point.
#include "extended/continuous_tempering.hpp"
#include "ct_test_support.hpp"
#include "support/counting_target.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "densities/gaussian.hpp"
#include "estimators/log_ratio_batch_means.hpp"
#include "estimators/rb_tempering.hpp"
#include "extended/continuous_tempering_math.hpp"
#include "kernels/hmc.hpp"
#include "pemc/v1/tempering.pb.h"
#include "support/gradient_check.hpp"
#include "targets/gaussian.hpp"
#include "targets/mixture.hpp"

namespace pemc::extended {
namespace {

using pemc::testing::CountingTarget;

std::shared_ptr<targets::GaussianMixture> bimodal() {
  using C = targets::GaussianMixture::Component;
  return std::make_shared<targets::GaussianMixture>(std::vector<C>{
      C{0.5, Vector::Constant(1, -1.0), Vector::Constant(1, 0.1)},
      C{0.5, Vector::Constant(1, 1.0), Vector::Constant(1, 0.02)}});
}

BaseDensity base_1d(double mean, double var, double log_zeta) {
  return {std::make_shared<const densities::Gaussian>(densities::Gaussian::from_covariance(
              Vector::Constant(1, mean), Matrix::Constant(1, 1, var))),
          log_zeta, "test"};
}

TemperingParts parts_3d(double log_zeta = 0.7) {
  Matrix cov(3, 3);
  cov << 1.0, 0.3, 0.0, 0.3, 2.0, -0.4, 0.0, -0.4, 0.5;
  auto target = std::make_shared<targets::Gaussian>(Vector::LinSpaced(3, -1.0, 1.0), cov);
  auto base = std::make_shared<const densities::Gaussian>(
      densities::Gaussian::from_covariance(Vector::Constant(3, 0.2), 1.5 * Matrix::Identity(3, 3)));
  return {target, base, log_zeta};
}

using pemc::testing::hmc_factory;

// ---- potentials ---------------------------------------------------------------------------------

TEST(JointTempering, PotentialIsEquation14) {
  const auto parts = parts_3d();
  const double c = 1.7;
  const JointTemperingTarget joint(parts, c, 0.5);
  EXPECT_EQ(joint.dim(), 4);
  EXPECT_EQ(joint.original_dim(), 3);
  for (double u : {-40.0, -3.0, 0.0, 0.4, 5.0, 40.0}) {
    Vector z(4);
    z << 0.3, -0.2, 1.1, u;
    const Vector x = z.head(3);
    const double phi = parts.target->potential(x), psi = parts.base->potential(x);
    const double beta = 1.0 / (1.0 + std::exp(-u / c)), one_minus = 1.0 / (1.0 + std::exp(u / c));
    // beta'(u) = beta (1 - beta) / c.
    const double expected = beta * (phi + parts.log_zeta) + one_minus * psi -
                            std::log(beta * one_minus / c);
    EXPECT_NEAR(joint.potential(z), expected, 1e-12 * std::max(1.0, std::fabs(expected))) << u;
    EXPECT_NEAR(joint.beta_of(u), beta, 1e-15);
  }
}

TEST(JointTempering, GradientMatchesFiniteDifferences) {
  const JointTemperingTarget joint(parts_3d(), 0.8, 0.5);
  for (double u : {-6.0, -1.0, 0.0, 0.3, 2.5, 7.0}) {
    Vector z(4);
    z << -0.4, 0.9, 0.2, u;
    testing::expect_gradient_matches(joint, z, 1e-6);
  }
}

TEST(JointTempering, ExtremeControlValuesStayFinite) {
  const JointTemperingTarget joint(parts_3d(), 1.0, 0.5);
  for (double u : {-800.0, 800.0}) {
    Vector z(4), g(4);
    z << 0.1, 0.2, 0.3, u;
    const double v = joint.potential_and_gradient(z, g);
    EXPECT_TRUE(std::isfinite(v)) << u;
    EXPECT_TRUE(g.allFinite()) << u;
    EXPECT_NEAR(g[3], u > 0 ? 1.0 : -1.0, 1e-12);  // the confining -log beta' term's slope
  }
}

TEST(JointTempering, PerfectBaseGivesAFlatTemperatureMarginal) {
  // phi = psi - log Z and log zeta = log Z make Delta = 0: U(x, u) = psi(x) - log beta'(u), so
  // beta is uniform and independent of x (eq. (16)).
  const auto g = std::make_shared<targets::Gaussian>(Vector::Constant(2, 0.5), 2.0 * Matrix::Identity(2, 2));
  auto base = std::make_shared<const densities::Gaussian>(
      densities::Gaussian::from_covariance(Vector::Constant(2, 0.5), 2.0 * Matrix::Identity(2, 2)));
  const double log_z = *g->truth().log_z;
  const JointTemperingTarget joint({g, base, log_z}, 1.0, 0.5);
  for (double u : {-3.0, 0.0, 2.0}) {
    Vector z(3);
    z << 1.0, -0.3, u;
    const double beta = logistic(u);
    EXPECT_NEAR(joint.potential(z), base->potential(z.head(2)) - std::log(beta * (1 - beta)), 1e-12);
    targets::WeightedView view;
    ASSERT_TRUE(joint.weighted_view(z, view));
    EXPECT_NEAR(view.extra[kExtraDelta], 0.0, 1e-12);
    EXPECT_NEAR(view.extra[kExtraLogW0], 0.0, 1e-12);
    EXPECT_NEAR(view.extra[kExtraLogW1], 0.0, 1e-12);
  }
}

TEST(GibbsTempering, SpacePotentialIsEquation16) {
  const auto parts = parts_3d();
  const GibbsTemperingSpace space(parts, 0.5);
  Vector z(4);
  z << 0.3, -0.2, 1.1, 0.25;
  const Vector x = z.head(3);
  const double phi = parts.target->potential(x), psi = parts.base->potential(x);
  EXPECT_NEAR(space.potential(z), 0.25 * (phi + parts.log_zeta) + 0.75 * psi, 1e-12);
  Vector g(4);
  space.potential_and_gradient(z, g);
  EXPECT_NEAR(g[3], phi + parts.log_zeta - psi, 1e-12);  // d/d beta = Delta(x)
  testing::expect_gradient_matches(space, z, 1e-6);
  z[3] = 1.0 + 1e-12;
  EXPECT_EQ(space.potential(z), kInf);
  z[3] = -1e-12;
  EXPECT_EQ(space.potential(z), kInf);
  z[3] = 0.0;
  EXPECT_TRUE(std::isfinite(space.potential(z)));
}

TEST(GibbsTempering, TemperedTargetRecordsItsEvaluations) {
  const auto parts = parts_3d();
  TemperedTarget t(parts);
  t.set_beta(0.3);
  Vector x(3), g(3);
  x << 0.1, 0.2, -0.5;
  testing::expect_gradient_matches(t, x, 1e-6);
  t.start_recording();
  t.potential_and_gradient(x, g);
  Vector y = x;
  y[0] += 1.0;
  t.potential_and_gradient(y, g);
  const auto* e = t.find(x);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->phi, parts.target->potential(x));
  EXPECT_EQ(e->psi, parts.base->potential(x));
  ASSERT_NE(t.find(y), nullptr);
  t.start_recording();
  EXPECT_EQ(t.find(x), nullptr);
}

// ---- weighted view -----------------------------------------------------------------------------

TEST(WeightedView, ExtrasFollowTheDocumentedLayout) {
  const auto parts = parts_3d(1.3);
  const JointTemperingTarget joint(parts, 2.0, 0.5);
  Vector z(4);
  z << 0.5, 0.1, -0.7, -1.2;
  targets::WeightedView v;
  ASSERT_TRUE(joint.weighted_view(z, v));
  const Vector x = z.head(3);
  const double delta = parts.target->potential(x) + 1.3 - parts.base->potential(x);
  ASSERT_EQ(v.samples.rows(), 3);
  ASSERT_EQ(v.samples.cols(), 1);
  EXPECT_EQ(v.samples.col(0), x);
  ASSERT_EQ(v.log_weights.size(), 1);
  ASSERT_EQ(v.extra.size(), static_cast<std::size_t>(kExtraSize));
  EXPECT_NEAR(v.extra[kExtraDelta], delta, 1e-12);
  EXPECT_EQ(v.extra[kExtraLogW0], rb_log_w0(v.extra[kExtraDelta]));
  EXPECT_EQ(v.extra[kExtraLogW1], rb_log_w1(v.extra[kExtraDelta]));
  EXPECT_EQ(v.log_weights[0], v.extra[kExtraLogW1]);
  EXPECT_NEAR(v.extra[kExtraBeta], logistic(-1.2 / 2.0), 1e-15);
  EXPECT_EQ(v.extra[kExtraLogZeta], 1.3);

  const GibbsTemperingSpace space(parts, 0.5);
  z[3] = 0.8;
  ASSERT_TRUE(space.weighted_view(z, v));
  EXPECT_EQ(v.extra[kExtraBeta], 0.8);
  EXPECT_NEAR(v.extra[kExtraDelta], delta, 1e-12);
}

TEST(WeightedView, ReusesTheLastEvaluations) {
  auto base_parts = parts_3d();
  auto counting = std::make_shared<CountingTarget>(base_parts.target);
  const JointTemperingTarget joint({counting, base_parts.base, base_parts.log_zeta}, 1.0, 0.5);
  Vector z(4), g(4);
  z << 0.5, 0.1, -0.7, 0.3;
  joint.potential_and_gradient(z, g);
  targets::WeightedView v;
  joint.weighted_view(z, v);  // the latest evaluation
  EXPECT_EQ(counting->n_potential, 0);
  Vector other = z;
  other[0] = 2.0;
  joint.potential_and_gradient(other, g);
  joint.potential_and_gradient(other * 0.5, g);
  joint.weighted_view(z, v);  // the latest view (a rejected transition)
  EXPECT_EQ(counting->n_potential, 0);
  other[1] = -3.0;
  joint.weighted_view(other, v);  // never seen: evaluated once
  EXPECT_EQ(counting->n_potential, 1);
}

// ---- chains ------------------------------------------------------------------------------------

struct ChainRecord {
  std::vector<Vector> x;
  std::vector<double> log_w0, log_w1, beta;
  std::int64_t n_gradient_evals = 0;
  double mean_accept = 0.0;
};

// The chain driver's loop (src/runner/chain_driver.cpp), with warmup not recorded.
ChainRecord run(const ExtendedSampler& s, std::uint64_t seed, int n_warmup, int n_iter,
                double init = 0.0) {
  kernels::ChainState state;
  state.x.resize(s.space->dim());
  s.space->initial_point([&](VectorRef b) { b.setConstant(init); }, state.x);
  kernels::refresh(*s.space, state);
  ChainRecord r;
  r.n_gradient_evals = 1;
  targets::WeightedView view;
  if (n_warmup > 0) s.kernel->begin_warmup(n_warmup);
  for (int t = 0; t < n_warmup + n_iter; ++t) {
    if (t == n_warmup && n_warmup > 0) s.kernel->end_warmup();
    rng::Stream stream(seed, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    const auto stats = s.kernel->transition(state, stream);
    r.n_gradient_evals += stats.n_gradient_evals;
    if (t < n_warmup) {
      s.kernel->adapt(t, state, stats);
      continue;
    }
    r.mean_accept += stats.accept_stat / n_iter;
    s.space->weighted_view(state.x, view);
    r.x.push_back(view.samples.col(0));
    r.log_w0.push_back(view.extra[kExtraLogW0]);
    r.log_w1.push_back(view.extra[kExtraLogW1]);
    r.beta.push_back(view.extra[kExtraBeta]);
  }
  return r;
}

struct Estimate {
  double value, se;
};

// Batch means (20 batches) of a per-batch statistic computed from accumulators.
template <typename F>
Estimate batch_estimate(const ChainRecord& r, F&& stat) {
  const int n_batches = 20;
  const std::size_t n = r.x.size(), per = n / n_batches;
  estimators::TemperingRbAccumulator all;
  std::vector<double> values;
  for (int b = 0; b < n_batches; ++b) {
    estimators::TemperingRbAccumulator acc;
    for (std::size_t i = b * per; i < (b + 1) * per; ++i) acc.add(r.x[i], r.log_w0[i], r.log_w1[i]);
    values.push_back(stat(acc));
    all.merge(acc);
  }
  double mean = 0.0, var = 0.0;
  for (double v : values) mean += v / n_batches;
  for (double v : values) var += (v - mean) * (v - mean) / (n_batches - 1);
  return {stat(all), std::sqrt(var / n_batches)};
}

// Weighted P(x > 0) under w1 (eq. (21) with f = 1{x > 0}).
double right_mode_mass(const ChainRecord& r, std::size_t lo, std::size_t hi) {
  std::vector<double> all, right;
  for (std::size_t i = lo; i < hi; ++i) {
    all.push_back(r.log_w1[i]);
    right.push_back(r.x[i][0] > 0 ? r.log_w1[i] : -kInf);
  }
  return std::exp(log_sum_exp(right) - log_sum_exp(all));
}

void check_bimodal(const ChainRecord& r, const char* what) {
  const auto log_z = batch_estimate(r, [](const auto& a) { return a.log_z(0.0); });
  EXPECT_NEAR(log_z.value, 0.0, 4.0 * log_z.se) << what << ": log Z, se " << log_z.se;
  EXPECT_LT(log_z.se, 0.05) << what;
  // Mode masses (0.5 each).
  std::vector<double> masses;
  const std::size_t per = r.x.size() / 20;
  for (int b = 0; b < 20; ++b) masses.push_back(right_mode_mass(r, b * per, (b + 1) * per));
  double m = 0, v = 0;
  for (double x : masses) m += x / 20;
  for (double x : masses) v += (x - m) * (x - m) / 19;
  const double mass = right_mode_mass(r, 0, r.x.size());
  EXPECT_NEAR(mass, 0.5, 4.0 * std::sqrt(v / 20)) << what << ": right mode mass";
  // Target mean 0 (eq. (21)) and base mean/variance 0 / 1.06 (eq. (22)).
  const auto mean = batch_estimate(r, [](const auto& a) { return a.mean()[0]; });
  EXPECT_NEAR(mean.value, 0.0, 4.0 * mean.se) << what;
  const auto base_var = batch_estimate(r, [](const auto& a) { return a.base_covariance()(0, 0); });
  EXPECT_NEAR(base_var.value, 1.06, 4.0 * base_var.se) << what;
  // Both ends of the temperature range are visited.
  int hot = 0, cold = 0;
  for (double b : r.beta) {
    hot += b < 0.1;
    cold += b > 0.9;
  }
  EXPECT_GT(hot, 500) << what;
  EXPECT_GT(cold, 500) << what;
}

TEST(ContinuousTemperingChains, JointFindsBothModesOfTheBimodalTarget) {
  ContinuousTemperingOptions o;
  o.variant = TemperingVariant::kJoint;
  const auto s = make_continuous_tempering(bimodal(), base_1d(0.0, 1.06, 0.0), o, hmc_factory(0.15, 20));
  const auto r = run(s, 42, 500, 20000, -1.0);
  EXPECT_GT(r.mean_accept, 0.6);
  check_bimodal(r, "joint");
}

TEST(ContinuousTemperingChains, GibbsFindsBothModesOfTheBimodalTarget) {
  ContinuousTemperingOptions o;
  o.variant = TemperingVariant::kGibbs;
  const auto s = make_continuous_tempering(bimodal(), base_1d(0.0, 1.06, 0.0), o, hmc_factory(0.15, 20));
  const auto r = run(s, 43, 500, 20000, -1.0);
  EXPECT_GT(r.mean_accept, 0.6);
  check_bimodal(r, "gibbs");
}

// E[beta] under eq. (16) for phi = (x - 1)^2 / (2 s), psi = -log N(x; 0, 1): the partition function
// z(beta) = ∫ exp(-beta phi - (1 - beta) psi) dx is Gaussian, p(beta) ∝ z(beta) / zeta^beta (eq. (19)).
double exact_mean_beta(double s, double log_zeta) {
  auto log_p = [&](double beta) {
    const double a = beta / s + 1.0 - beta, b = beta / s;
    return 0.5 * std::log(2.0 * M_PI / a) + 0.5 * (b * b / a - beta / s) -
           (1.0 - beta) * 0.5 * kLog2Pi - beta * log_zeta;
  };
  const int n = 20000;  // Simpson on [0, 1]
  double z = 0.0, m = 0.0;
  for (int i = 0; i <= n; ++i) {
    const double beta = static_cast<double>(i) / n;
    const double w = (i == 0 || i == n) ? 1.0 : (i % 2 ? 4.0 : 2.0);
    const double p = std::exp(log_p(beta));
    z += w * p;
    m += w * p * beta;
  }
  return m / z;
}

TEST(ContinuousTemperingChains, RecoverLogZWhenLogZetaIsOff) {
  // Target N(1, 0.5^2) without its normaliser: log Z = 0.5 log(2 pi 0.25). log zeta = log Z + 1.5,
  // so p(beta) leans towards 0 and Delta is far from 0: this checks the beta | x draws (through
  // E[beta], eq. (19)) as well as eqs. (20)-(21).
  const auto g = std::make_shared<targets::Gaussian>(Vector::Constant(1, 1.0), Matrix::Constant(1, 1, 0.25));
  const double log_z = *g->truth().log_z;
  const double log_zeta = log_z + 1.5;
  const double mean_beta = exact_mean_beta(0.25, log_zeta);
  for (auto variant : {TemperingVariant::kJoint, TemperingVariant::kGibbs}) {
    const char* what = variant == TemperingVariant::kJoint ? "joint" : "gibbs";
    ContinuousTemperingOptions o;
    o.variant = variant;
    const auto s = make_continuous_tempering(g, base_1d(0.0, 1.0, log_zeta), o, hmc_factory(0.2, 10));
    const auto r = run(s, 7, 200, 20000);
    const auto est = batch_estimate(r, [](const auto& a) { return a.log_z(0.0); });
    EXPECT_NEAR(est.value + log_zeta, log_z, 4.0 * est.se) << what;
    const auto mean = batch_estimate(r, [](const auto& a) { return a.mean()[0]; });
    EXPECT_NEAR(mean.value, 1.0, 4.0 * mean.se) << what;
    // E[beta]: batch means of the recorded beta.
    std::vector<double> batches(20, 0.0);
    const std::size_t per = r.beta.size() / 20;
    for (std::size_t i = 0; i < 20 * per; ++i) batches[i / per] += r.beta[i] / per;
    double m = 0.0, v = 0.0;
    for (double b : batches) m += b / 20;
    for (double b : batches) v += (b - m) * (b - m) / 19;
    EXPECT_NEAR(m, mean_beta, 4.0 * std::sqrt(v / 20)) << what << ": E[beta]";
  }
}

TEST(ContinuousTemperingChains, GradientEvaluationsAreCountedExactly) {
  for (auto variant : {TemperingVariant::kJoint, TemperingVariant::kGibbs}) {
    auto counting = std::make_shared<CountingTarget>(bimodal());
    ContinuousTemperingOptions o;
    o.variant = variant;
    const auto s = make_continuous_tempering(counting, base_1d(0.0, 1.06, 0.0), o,
                                             hmc_factory(0.1, 7, /*jitter=*/true));
    const auto r = run(s, 3, 50, 300);
    EXPECT_EQ(r.n_gradient_evals, counting->n_gradient) << static_cast<int>(variant);
  }
}

TEST(ContinuousTemperingChains, KernelsReportTheirRbEstimates) {
  for (auto variant : {TemperingVariant::kJoint, TemperingVariant::kGibbs}) {
    ContinuousTemperingOptions o;
    o.variant = variant;
    const auto s = make_continuous_tempering(bimodal(), base_1d(0.0, 1.06, 0.3), o, hmc_factory(0.2, 5));
    const auto r = run(s, 5, 100, 2000);  // warmup transitions are not tracked
    estimators::TemperingRbAccumulator acc;
    double sum_beta = 0.0;
    for (std::size_t i = 0; i < r.x.size(); ++i) {
      acc.add(r.x[i], r.log_w0[i], r.log_w1[i]);
      sum_beta += r.beta[i];
    }
    std::map<std::string, double> est;
    s.kernel->report_estimates(est);
    EXPECT_EQ(est.at("rb_draws"), 2000.0);
    EXPECT_EQ(est.at("log_zeta"), 0.3);
    EXPECT_DOUBLE_EQ(est.at("log_z"), acc.log_z(0.3));
    EXPECT_DOUBLE_EQ(est.at("ess_w1"), acc.ess_w1());
    EXPECT_DOUBLE_EQ(est.at("mean_beta"), sum_beta / 2000.0);
    // log_z_se: the batch-means delta-method SE over the same post-warmup weights (issue 31).
    estimators::LogRatioBatchMeans batches;
    for (std::size_t i = 0; i < r.x.size(); ++i) batches.add(r.log_w1[i], r.log_w0[i]);
    ASSERT_TRUE(est.count("log_z_se"));
    EXPECT_DOUBLE_EQ(est.at("log_z_se"), batches.log_ratio_se());
    EXPECT_GT(est.at("log_z_se"), 0.0);
  }
}

// The tracker's batches are part of the checkpoint: a kernel restored from a saved state reports
// the same log_z_se after the same further transitions; a state without them (an older version's)
// restores and leaves the SE out.
TEST(ContinuousTemperingChains, LogZSeSurvivesACheckpoint) {
  ContinuousTemperingOptions o;
  o.variant = TemperingVariant::kGibbs;
  o.n_batches = 4;
  auto a = make_continuous_tempering(bimodal(), base_1d(0.0, 1.06, 0.3), o, hmc_factory(0.2, 5));
  (void)run(a, 5, 0, 300);
  v1::KernelState saved;
  a.kernel->save_state(saved);
  auto b = make_continuous_tempering(bimodal(), base_1d(0.0, 1.06, 0.3), o, hmc_factory(0.2, 5));
  b.kernel->restore_state(saved);
  std::map<std::string, double> ea, eb;
  a.kernel->report_estimates(ea);
  b.kernel->report_estimates(eb);
  ASSERT_TRUE(ea.count("log_z_se"));
  EXPECT_EQ(ea.at("log_z_se"), eb.at("log_z_se"));
  auto old = saved;
  old.mutable_children()->at("tracker").mutable_reals()->erase("log_z_batches");
  auto c = make_continuous_tempering(bimodal(), base_1d(0.0, 1.06, 0.3), o, hmc_factory(0.2, 5));
  c.kernel->restore_state(old);
  std::map<std::string, double> ec;
  c.kernel->report_estimates(ec);
  EXPECT_EQ(ec.at("log_z"), ea.at("log_z"));
  EXPECT_EQ(ec.count("log_z_se"), 0u);
}

TEST(ContinuousTemperingChains, SameSeedSameChain) {
  ContinuousTemperingOptions o;
  o.variant = TemperingVariant::kGibbs;
  const auto a = run(make_continuous_tempering(bimodal(), base_1d(0, 1.06, 0), o, hmc_factory(0.15, 5)), 9, 0, 200);
  const auto b = run(make_continuous_tempering(bimodal(), base_1d(0, 1.06, 0), o, hmc_factory(0.15, 5)), 9, 0, 200);
  ASSERT_EQ(a.x.size(), b.x.size());
  for (std::size_t i = 0; i < a.x.size(); ++i) {
    EXPECT_EQ(a.x[i], b.x[i]);
    EXPECT_EQ(a.beta[i], b.beta[i]);
  }
}

// ---- config ------------------------------------------------------------------------------------

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

v1::ContinuousTemperingConfig bimodal_config() {
  v1::ContinuousTemperingConfig c;
  c.mutable_hmc()->set_step_size(0.1);
  c.mutable_hmc()->set_n_leapfrog(5);
  auto* g = c.mutable_base()->mutable_gaussian();
  g->add_mean(0.0);
  g->add_variance(1.06);
  g->set_log_zeta(0.0);
  return c;
}

TEST(ContinuousTemperingConfig, BuildsBothVariants) {
  auto c = bimodal_config();
  const auto joint = make_continuous_tempering(c, bimodal(), hmc_factory(0.1, 5));
  EXPECT_EQ(joint.space->dim(), 2);
  EXPECT_EQ(joint.space->original_dim(), 1);
  EXPECT_EQ(joint.kernel->name(), "ct_joint/hmc");
  c.set_variant(v1::ContinuousTemperingConfig::GIBBS);
  const auto gibbs = make_continuous_tempering(c, bimodal(), hmc_factory(0.1, 5));
  EXPECT_EQ(gibbs.space->dim(), 2);
  EXPECT_EQ(gibbs.kernel->name(), "ct_gibbs/hmc");
  // The control scale: sigmoid_scale * sqrt(control_mass).
  c.set_variant(v1::ContinuousTemperingConfig::JOINT);
  c.set_sigmoid_scale(2.0);
  c.set_control_mass(4.0);
  const auto scaled = make_continuous_tempering(c, bimodal(), hmc_factory(0.1, 5));
  EXPECT_EQ(dynamic_cast<const JointTemperingTarget&>(*scaled.space).control_scale(), 4.0);
}

TEST(ContinuousTemperingConfig, ErrorsNameTheField) {
  auto c = bimodal_config();
  c.clear_hmc();
  EXPECT_NE(error_of([&] { make_continuous_tempering(c, bimodal(), hmc_factory(0.1, 5)); })
                .find("sampler.continuous_tempering: no kernel"),
            std::string::npos);
  c = bimodal_config();
  c.clear_base();
  EXPECT_NE(error_of([&] { make_continuous_tempering(c, bimodal(), hmc_factory(0.1, 5)); })
                .find("sampler.continuous_tempering.base"),
            std::string::npos);
  c = bimodal_config();
  c.set_initial_beta(1.0);
  EXPECT_NE(error_of([&] { make_continuous_tempering(c, bimodal(), hmc_factory(0.1, 5)); })
                .find("initial_beta"),
            std::string::npos);
  c.set_variant(v1::ContinuousTemperingConfig::GIBBS);
  EXPECT_NO_THROW(make_continuous_tempering(c, bimodal(), hmc_factory(0.1, 5)));
  c.set_sigmoid_scale(-1.0);
  EXPECT_NE(error_of([&] { make_continuous_tempering(c, bimodal(), hmc_factory(0.1, 5)); })
                .find("sampler.continuous_tempering.sigmoid_scale"),
            std::string::npos);
  c = bimodal_config();
  c.mutable_base()->mutable_gaussian()->add_mean(1.0);
  EXPECT_NE(error_of([&] { make_continuous_tempering(c, bimodal(), hmc_factory(0.1, 5)); })
                .find("sampler.continuous_tempering.base.gaussian.mean"),
            std::string::npos);
}

}  // namespace
}  // namespace pemc::extended
