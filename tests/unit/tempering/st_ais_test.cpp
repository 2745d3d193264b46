// Simulated tempering and annealed importance sampling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "estimators/log_z_trust.hpp"
#include "estimators/weighted_moments.hpp"
#include "support/gradient_check.hpp"
#include "tempering/annealed_importance.hpp"
#include "tempering/schedule.hpp"
#include "tempering/simulated_tempering.hpp"
#include "tempering_test_support.hpp"

namespace pemc::tempering {
namespace {

using testing::hmc_factory;
using testing::ShiftedGaussian;
using testing::TwoModes;

ReferencePtr standard_reference(int d, double var = 1.0) {
  return testing::diagonal_reference(Vector::Zero(d), Vector::Constant(d, var));
}

struct Collected {
  estimators::WeightedMoments weighted;
  std::map<std::string, double> estimates;
  std::vector<double> log_weights;
};

Collected drive(kernels::Kernel& kernel, const targets::Target& space, int n_warmup, int n_iter,
                std::uint64_t seed) {
  Collected out;
  kernels::ChainState state;
  state.x.resize(space.dim());
  rng::Stream init(seed, rng::Domain::kInitialPoint, 0, 0);
  space.initial_point([&](VectorRef x) { x.setConstant(0.1); }, state.x);
  kernels::refresh(space, state);
  if (n_warmup > 0) kernel.begin_warmup(n_warmup);
  targets::WeightedView view;
  for (int t = 0; t < n_warmup + n_iter; ++t) {
    if (t == n_warmup && n_warmup > 0) kernel.end_warmup();
    rng::Stream stream(seed, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    kernel.transition(state, stream);
    if (t >= n_warmup) {
      EXPECT_TRUE(space.weighted_view(state.x, view));
      out.weighted.add(view.samples.col(0), view.log_weights[0]);
      out.log_weights.push_back(view.log_weights[0]);
    }
  }
  kernel.report_estimates(out.estimates);
  return out;
}

TEST(SimulatedTemperingSpace, PotentialGradientAndConditional) {
  auto target = std::make_shared<ShiftedGaussian>(Vector::Constant(2, 1.0), Vector::Constant(2, 0.5), 1.0);
  auto ref = standard_reference(2);
  SimulatedTemperingSpace space(target, ref, {0.0, 0.5, 1.0}, {0.0, 1.0, -2.0});
  Vector xk(3);
  xk << 0.3, -0.2, 1.0;
  // x-gradient = the tempered target's at beta_1; the level coordinate's is 0 (it is discrete).
  Vector g(3);
  space.potential_and_gradient(xk, g);
  TemperedTarget t(target, ref, 0.5);
  pemc::testing::expect_gradient_matches(t, xk.head(2));
  Vector gt(2);
  t.potential_and_gradient(xk.head(2), gt);
  EXPECT_NEAR(g[0], gt[0], 1e-14);
  EXPECT_NEAR(g[1], gt[1], 1e-14);
  EXPECT_EQ(g[2], 0.0);
  const double phi = target->potential(xk.head(2)), psi = ref->density->potential(xk.head(2));
  EXPECT_NEAR(space.potential(xk), 0.5 * phi + 0.5 * psi - 1.0, 1e-12);
  // Conditional of k (thesis eq. (2.66)) by brute force.
  std::vector<double> lc;
  space.log_conditional(phi - psi, lc);
  std::vector<double> brute{-psi + 0.0, -0.5 * phi - 0.5 * psi + 1.0, -phi - 2.0};
  const double norm = log_sum_exp(brute);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(lc[k], brute[k] - norm, 1e-12);
  xk[2] = 1.5;
  EXPECT_EQ(space.potential(xk), kInf);
  xk[2] = 3.0;
  EXPECT_EQ(space.level(xk), -1);
}

TEST(SimulatedTempering, RaoBlackwellisedLogZAndExpectations) {
  auto target = std::make_shared<ShiftedGaussian>(Vector::LinSpaced(2, 1.0, -0.5),
                                                  Vector::Constant(2, 0.5), -4.0);
  auto space = std::make_shared<SimulatedTemperingSpace>(target, standard_reference(2),
                                                         linear_ladder(12, 0.0), std::vector<double>{});
  SimulatedTemperingOptions o;
  o.n_local_steps = 2;
  o.n_kernel_bins = 4;
  SimulatedTemperingKernel st(space, hmc_factory(0.25, 8, true), o);
  auto run = drive(st, *space, 1500, 6000, 17);
  const double z = run.estimates.at("log_z"), se = run.estimates.at("log_z_se");
  ASSERT_TRUE(std::isfinite(se) && se > 0);
  EXPECT_NEAR(z, target->log_z(), 5 * se) << "se " << se;
  // The adapted weights flatten the level marginal: the top level is neither starved nor hogged.
  EXPECT_GT(run.estimates.at("top_fraction"), 0.2 / 12);
  EXPECT_LT(run.estimates.at("top_fraction"), 5.0 / 12);
  EXPECT_GT(run.estimates.at("round_trips"), 10);
  // And the weights themselves already guess log Z.
  EXPECT_NEAR(run.estimates.at("log_z_weights"), target->log_z(), 0.5);
  // Rao-Blackwellised (self-normalised) target expectations. Tolerance: 5 standard errors with
  // the Kish ESS discounted 10x for autocorrelation.
  const Vector mean = run.weighted.mean();
  const double ess = run.weighted.kish_ess() / 10;
  for (int i = 0; i < 2; ++i)
    EXPECT_NEAR(mean[i], target->mean()[i], 5 * 0.5 / std::sqrt(ess)) << i;
}

TEST(SimulatedTempering, PowerPathReportsARatio) {
  auto target = std::make_shared<TwoModes>(3.0, 0.5, 0.5);
  auto space = std::make_shared<SimulatedTemperingSpace>(target, nullptr, geometric_ladder(8, 0.05),
                                                         std::vector<double>{});
  SimulatedTemperingKernel st(space, hmc_factory(0.3, 8), SimulatedTemperingOptions{});
  auto run = drive(st, *space, 500, 500, 2);
  EXPECT_TRUE(run.estimates.count("log_z_ratio"));
  EXPECT_FALSE(run.estimates.count("log_z"));
  // Nothing regenerates without a reference: the SE comes from batch means.
  EXPECT_TRUE(run.estimates.count("log_z_batches"));
  EXPECT_FALSE(run.estimates.count("log_z_tours"));
}

// With a reference at beta_0 = 0, every transition from level 0 draws x afresh: the SE is over the
// regeneration tours, one per visit to level 0 (about n / K of them with flat weights), and comes
// with their Pareto k-hat; with local moves at level 0 instead, it is over batches.
TEST(SimulatedTempering, TheSeComesFromRegenerationToursWhereTheChainRegenerates) {
  auto target = std::make_shared<TwoModes>(2.5, 0.5, 0.5);
  auto space = std::make_shared<SimulatedTemperingSpace>(target, standard_reference(1, 4.0),
                                                         linear_ladder(8, 0.0), std::vector<double>{});
  SimulatedTemperingKernel st(space, hmc_factory(0.3, 8), SimulatedTemperingOptions{});
  auto run = drive(st, *space, 2000, 8000, 5);
  const double tours = run.estimates.at("log_z_tours");
  EXPECT_GT(tours, 8000.0 / 8 / 3);
  EXPECT_LT(tours, 8000.0 / 8 * 3);
  EXPECT_TRUE(std::isfinite(run.estimates.at("log_z_se")));
  EXPECT_TRUE(run.estimates.count("log_z_tour_pareto_k"));
  EXPECT_FALSE(run.estimates.count("log_z_batches"));
  EXPECT_NEAR(run.estimates.at("log_z"), 0.0, 5 * run.estimates.at("log_z_se"));  // normalised

  SimulatedTemperingOptions local;
  local.exact_reference_draws = false;
  auto space2 = std::make_shared<SimulatedTemperingSpace>(target, standard_reference(1, 4.0),
                                                          linear_ladder(8, 0.0), std::vector<double>{});
  SimulatedTemperingKernel st2(space2, hmc_factory(0.3, 8), local);
  auto run2 = drive(st2, *space2, 500, 1000, 5);
  EXPECT_TRUE(run2.estimates.count("log_z_batches"));
  EXPECT_FALSE(run2.estimates.count("log_z_tours"));
}

TEST(AnnealedImportance, UnbiasedLogZAndWeightedMoments) {
  auto target = std::make_shared<ShiftedGaussian>(Vector::LinSpaced(3, 0.5, -0.5),
                                                  Vector::Constant(3, 0.4), 2.0);
  AnnealedImportanceOptions o;
  o.betas = sigmoidal_ladder(60, 0.0, 4.0);
  o.n_kernel_bins = 6;
  AnnealedImportanceKernel ais(target, standard_reference(3, 2.0), hmc_factory(0.2, 5, true), o);
  AnnealedImportanceSpace space(target);
  auto run = drive(ais, space, 50, 600, 8);
  const double z = run.estimates.at("log_z"), se = run.estimates.at("log_z_se");
  EXPECT_EQ(run.estimates.at("n_runs"), 600);
  ASSERT_TRUE(std::isfinite(se) && se > 0);
  // Delta-method SE of log mean r; +0.5 se^2 covers the Jensen bias of the log.
  EXPECT_NEAR(z, target->log_z(), 5 * se + se * se);
  EXPECT_GT(run.estimates.at("ess_fraction"), 0.5);  // a smooth unimodal path: good weights
  // ... with a light tail (k-hat well below the 1/2 of a finite variance).
  EXPECT_LT(run.estimates.at("log_weight_pareto_k"), 0.5);
  const Vector mean = run.weighted.mean();
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(mean[i], target->mean()[i], 5 * 0.4 / std::sqrt(run.weighted.kish_ess())) << i;
}

TEST(AnnealedImportance, MeanWeightIsZ) {
  // AIS's defining property (Neal 2001; CT paper eq. (10)): E[r] = Z exactly, for any ladder and
  // any transitions that leave each pi_beta_n invariant. A coarse ladder (4 levels) and short HMC
  // moves make the weights far from constant, so an error in the weight order (V evaluated at
  // the wrong point of the run, a level's move at the wrong beta) shows as a biased mean.
  // Tolerance: 4 standard errors of the mean of r / Z over the runs, which the finite variance
  // checked first (k-hat < 1/2) makes meaningful.
  auto target = std::make_shared<ShiftedGaussian>(Vector::LinSpaced(2, 1.0, -1.0),
                                                  Vector::Constant(2, 0.7), 0.3);
  AnnealedImportanceOptions o;
  o.betas = linear_ladder(4, 0.0);
  o.n_kernel_bins = 2;
  AnnealedImportanceKernel ais(target, standard_reference(2, 2.25), hmc_factory(0.3, 4), o);
  AnnealedImportanceSpace space(target);
  const int n = 20000;
  auto run = drive(ais, space, 0, n, 21);
  ASSERT_LT(run.estimates.at("log_weight_pareto_k"), 0.5);
  double sum = 0, sum2 = 0;
  for (double lw : run.log_weights) {
    const double r = std::exp(lw - target->log_z());
    sum += r;
    sum2 += r * r;
  }
  const double mean = sum / n, sd = std::sqrt((sum2 / n - mean * mean) * n / (n - 1));
  EXPECT_GT(sd, 0.2);  // the weights do vary
  EXPECT_NEAR(mean, 1.0, 4 * sd / std::sqrt(static_cast<double>(n))) << "sd " << sd;
  // log_z is the log of that mean, and its delta-method SE is sd(r) / (mean(r) sqrt(n)).
  EXPECT_NEAR(run.estimates.at("log_z"), target->log_z() + std::log(mean), 1e-9);
  EXPECT_NEAR(run.estimates.at("log_z_se"), sd / mean / std::sqrt(static_cast<double>(n)), 1e-9);
}

TEST(AnnealedImportance, HeavyWeightTailIsFlagged) {
  // One step from a reference N(0, r^2) to the target N(0, s^2) (ladder {0, 1}): the weight is
  // exp(z^2 (1 - r^2 / s^2) / 2) with z standard normal, a Pareto tail of shape
  // k = 1 - r^2 / s^2 = 0.96 here (P(w > t) ~ t^(-1/k) up to a slowly varying factor): the
  // variance of r is infinite and the delta-method SE of log Z meaningless. With 40000 runs the
  // tail fit uses 600 weights, sd of k-hat about (1 + k) / sqrt(600) = 0.08, so k-hat > 0.7
  // (the flag) is more than 3 sd from the truth.
  auto target = std::make_shared<ShiftedGaussian>(Vector::Zero(1), Vector::Constant(1, 5.0), 0.0);
  AnnealedImportanceOptions o;
  o.betas = {0.0, 1.0};
  AnnealedImportanceKernel ais(target, standard_reference(1, 1.0), hmc_factory(0.5, 3), o);
  AnnealedImportanceSpace space(target);
  auto run = drive(ais, space, 0, 40000, 4);
  EXPECT_GT(run.estimates.at("log_weight_pareto_k"), 0.7);
  auto e = run.estimates;
  const auto reasons = estimators::annotate_log_z_trust(e);
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "weight_tail"), reasons.end());
  EXPECT_EQ(e.at("log_z_untrusted"), 1.0);
}

TEST(AnnealedImportance, TargetEqualToReferenceGivesExactWeights) {
  // phi = psi + c: every weight is exactly -c, whatever the moves.
  auto target = std::make_shared<ShiftedGaussian>(Vector::Zero(2), Vector::Ones(2), 0.75);
  AnnealedImportanceOptions o;
  o.betas = linear_ladder(5, 0.0);
  AnnealedImportanceKernel ais(target, standard_reference(2), hmc_factory(0.5, 3), o);
  AnnealedImportanceSpace space(target);
  auto run = drive(ais, space, 0, 50, 1);
  for (double lw : run.log_weights) EXPECT_NEAR(lw, kLog2Pi - 0.75, 1e-12);
  EXPECT_NEAR(run.estimates.at("log_z"), target->log_z(), 1e-12);
  EXPECT_NEAR(run.estimates.at("ess"), 50, 1e-9);
}

TEST(AnnealedImportance, NeedsAReferenceAndBetaZero) {
  auto target = std::make_shared<ShiftedGaussian>(Vector::Zero(2), Vector::Ones(2), 0.0);
  AnnealedImportanceOptions o;
  o.betas = linear_ladder(5, 0.0);
  EXPECT_THROW(AnnealedImportanceKernel(target, nullptr, hmc_factory(0.5, 3), o), ConfigError);
  o.betas = linear_ladder(5, 0.1);
  EXPECT_THROW(AnnealedImportanceKernel(target, standard_reference(2), hmc_factory(0.5, 3), o),
               ConfigError);
}

}  // namespace
}  // namespace pemc::tempering
