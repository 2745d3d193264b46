// Stabilised parallel tempering (parallel_tempering.hpp; Surjanovic et al. 2022): a power-path leg
// beside the reference leg, joined at the target level.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "core/error.hpp"
#include "estimators/log_z_trust.hpp"
#include "tempering/parallel_tempering.hpp"
#include "tempering/schedule.hpp"
#include "tempering_test_support.hpp"

namespace pemc::tempering {
namespace {

using testing::hmc_factory;
using testing::LockstepGroup;
using testing::LockstepHub;
using testing::ShiftedGaussian;
using testing::TwoModes;

using testing::DrivenRun;
using testing::drive;

// Batch-means mean and standard error of f over the draws (25 batches).
std::pair<double, double> batch_mean(const std::vector<double>& xs, double (*f)(double)) {
  const int nb = 25;
  const std::size_t per = xs.size() / nb;
  std::vector<double> m(nb, 0.0);
  for (int b = 0; b < nb; ++b) {
    for (std::size_t i = 0; i < per; ++i) m[b] += f(xs[b * per + i]);
    m[b] /= static_cast<double>(per);
  }
  double mean = 0, ss = 0;
  for (double v : m) mean += v / nb;
  for (double v : m) ss += (v - mean) * (v - mean);
  return {mean, std::sqrt(ss / (nb - 1) / nb)};
}

double left(double x) { return x < 0 ? 1.0 : 0.0; }

// A reference that sits on the left mode only (sd 0.5 at -4): the reference leg alone leads to
// that mode; its lowest level barely reaches the right one.
ReferencePtr one_mode_reference() {
  return testing::diagonal_reference(Vector::Constant(1, -4.0), Vector::Constant(1, 0.25));
}

ParallelTemperingOptions options(bool stabilised) {
  ParallelTemperingOptions o;
  o.betas = linear_ladder(6, 0.0);
  if (stabilised) o.fixed_betas = geometric_ladder(6, 0.01);
  return o;
}

TEST(StabilisedParallelTempering, TheFixedLegFindsTheModeTheReferenceMisses) {
  // Modes at -4 and +4 (sd 0.5, weights 0.3 and 0.7), 16 sd apart.
  auto target = std::make_shared<TwoModes>(4.0, 0.5, 0.3);
  ParallelTemperingKernel one_leg(target, one_mode_reference(), hmc_factory(0.3, 10), options(false));
  const auto trapped = drive(one_leg, *target, Vector::Constant(1, -4.0), 0, 5000, 3);
  const auto [trapped_left, trapped_se] = batch_mean(trapped.first_coordinate(), left);
  EXPECT_GT(trapped_left, 0.95);  // the reference leg alone never finds the right mode

  ParallelTemperingKernel pt(target, one_mode_reference(), hmc_factory(0.3, 10), options(true));
  EXPECT_EQ(pt.n_replicas(), 11);
  EXPECT_EQ(pt.n_reference_levels(), 6);
  EXPECT_EQ(pt.cold_level(), 5);
  const auto run = drive(pt, *target, Vector::Constant(1, -4.0), 0, 20000, 3);
  const auto [frac, se] = batch_mean(run.first_coordinate(), left);
  EXPECT_NEAR(frac, 0.3, 4.5 * se);
  const auto [m2, se2] = batch_mean(run.first_coordinate(), [](double x) { return x * x; });
  EXPECT_NEAR(m2, 16.25, 4.5 * se2);
  EXPECT_GT(run.estimates.at("round_trips"), 50);
  EXPECT_EQ(run.estimates.at("n_reference_levels"), 6);
  // log Z from the reference leg (normalised reference, beta_0 = 0; the target is normalised, so
  // log Z = 0). The right mode has mass along the reference leg only near beta = 1, where the
  // fixed leg brings it: the reverse stepping stone (weighting the beta = 1 draws) sees it and is
  // right; the forward one weights draws that never reach it, says log 0.3 with no spread, and
  // their mean is wrong. The trust rules must say so (directions_disagree).
  ASSERT_TRUE(run.estimates.count("log_z_reverse"));
  EXPECT_NEAR(run.estimates.at("log_z_reverse"), 0.0, 4.5 * run.estimates.at("log_z_reverse_se"));
  EXPECT_NEAR(run.estimates.at("log_z_forward"), std::log(0.3), 0.05);
  auto e = run.estimates;
  const auto reasons = estimators::annotate_log_z_trust(e);
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "directions_disagree"), reasons.end());
}

TEST(StabilisedParallelTempering, LadderOfTheLineAndItsLegs) {
  auto target = std::make_shared<ShiftedGaussian>(Vector::Zero(1), Vector::Ones(1), 0.0);
  auto o = options(true);
  ParallelTemperingKernel pt(target, one_mode_reference(), hmc_factory(0.3, 5), o);
  const auto& b = pt.betas();
  ASSERT_EQ(b.size(), 11u);
  EXPECT_EQ(b[0], 0.0);
  EXPECT_EQ(b[5], 1.0);
  EXPECT_NEAR(b[6], o.fixed_betas[4], 0.0);   // the power leg descends from the target
  EXPECT_NEAR(b[10], 0.01, 1e-15);
  EXPECT_TRUE(pt.on_fixed_leg(6));
  EXPECT_FALSE(pt.on_fixed_leg(5));
}

TEST(StabilisedParallelTempering, AdaptationKeepsBothLegsAndIsLayoutFree) {
  // Warmup re-spaces and resizes each leg; the draws are the same on 1, 2 and 3 members.
  auto target = std::make_shared<TwoModes>(3.0, 0.5, 0.4);
  auto opts = [] {
    auto o = options(true);
    o.adapt_schedule = true;
    o.choose_replicas = true;
    o.min_replicas = 3;
    o.n_local_steps = 2;
    return o;
  };
  auto run_group = [&](int n_members) {
    auto hub = std::make_shared<LockstepHub>(n_members);
    std::vector<DrivenRun> runs(n_members);
    std::vector<std::thread> threads;
    for (int m = 0; m < n_members; ++m)
      threads.emplace_back([&, m] {
        ParallelTemperingKernel pt(target, one_mode_reference(), hmc_factory(0.3, 5, true), opts(),
                                   std::make_shared<LockstepGroup>(hub, m));
        runs[m] = drive(pt, *target, Vector::Constant(1, 1.0), 400, 300, 17);
      });
    for (auto& t : threads) t.join();
    return runs;
  };
  const auto one = run_group(1)[0];
  EXPECT_GE(one.estimates.at("n_reference_levels"), 3);
  EXPECT_GT(one.estimates.at("n_replicas"), one.estimates.at("n_reference_levels"));
  for (int n : {2, 3}) {
    const std::vector<DrivenRun> members = run_group(n);
    for (int m = 0; m < n; ++m) {
      const DrivenRun& member = members[static_cast<std::size_t>(m)];
      const auto xs = member.first_coordinate(), one_xs = one.first_coordinate();
      ASSERT_EQ(xs.size(), one_xs.size());
      const int differing_bytes = std::memcmp(xs.data(), one_xs.data(), sizeof(double) * xs.size());
      EXPECT_EQ(differing_bytes, 0) << n << " members, member " << m;
      EXPECT_EQ(member.estimates.at("n_replicas"), one.estimates.at("n_replicas"));
    }
  }
}

TEST(StabilisedParallelTempering, CheckpointRestoresBothLegs) {
  auto target = std::make_shared<TwoModes>(3.0, 0.5, 0.4);
  auto o = options(true);
  o.adapt_schedule = true;
  o.choose_replicas = true;
  ParallelTemperingKernel pt(target, one_mode_reference(), hmc_factory(0.3, 5, true), o);
  const auto full = drive(pt, *target, Vector::Constant(1, 1.0), 200, 200, 23);
  // The same run stopped after warmup + 50 and continued from its saved state.
  ParallelTemperingKernel first(target, one_mode_reference(), hmc_factory(0.3, 5, true), o);
  kernels::ChainState state;
  state.x = Vector::Constant(1, 1.0);
  kernels::refresh(*target, state);
  first.begin_warmup(200);
  std::vector<double> xs;
  for (int t = 0; t < 250; ++t) {
    if (t == 200) first.end_warmup();
    rng::Stream stream(23, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    first.transition(state, stream);
    if (t >= 200) xs.push_back(state.x[0]);
  }
  pemc::v1::KernelState saved;
  first.save_state(saved);
  ParallelTemperingKernel second(target, one_mode_reference(), hmc_factory(0.3, 5, true), o);
  second.restore_state(saved);
  EXPECT_EQ(second.n_reference_levels(), first.n_reference_levels());
  for (int t = 250; t < 400; ++t) {
    rng::Stream stream(23, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    second.transition(state, stream);
    xs.push_back(state.x[0]);
  }
  ASSERT_EQ(xs.size(), full.first_coordinate().size());
  EXPECT_EQ(std::memcmp(xs.data(), full.first_coordinate().data(), sizeof(double) * xs.size()), 0);
}

TEST(StabilisedParallelTempering, NeedsAReferenceAndAPowerLadder) {
  auto target = std::make_shared<ShiftedGaussian>(Vector::Zero(1), Vector::Ones(1), 0.0);
  auto o = options(true);
  EXPECT_THROW(ParallelTemperingKernel(target, nullptr, hmc_factory(0.3, 5), o), ConfigError);
  o.fixed_betas = {0.0, 0.5, 1.0};
  EXPECT_THROW(ParallelTemperingKernel(target, one_mode_reference(), hmc_factory(0.3, 5), o),
               ConfigError);
  o.fixed_betas = {0.1, 0.5};
  EXPECT_THROW(ParallelTemperingKernel(target, one_mode_reference(), hmc_factory(0.3, 5), o),
               ConfigError);
}

}  // namespace
}  // namespace pemc::tempering
