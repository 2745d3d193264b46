#include "tempering/parallel_tempering.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "core/error.hpp"
#include "tempering/schedule.hpp"
#include "tempering_test_support.hpp"

namespace pemc::tempering {
namespace {

using testing::hmc_factory;
using testing::LockstepGroup;
using testing::LockstepHub;
using testing::ShiftedGaussian;
using testing::TwoModes;

using RunResult = testing::DrivenRun;
using testing::drive;

// Batch-means mean and standard error of f over the draws (20 batches).
std::pair<double, double> batch_mean(const std::vector<Vector>& draws,
                                     const std::function<double(const Vector&)>& f) {
  const int nb = 20;
  const std::size_t per = draws.size() / nb;
  std::vector<double> m(nb, 0.0);
  for (int b = 0; b < nb; ++b) {
    for (std::size_t i = 0; i < per; ++i) m[b] += f(draws[b * per + i]);
    m[b] /= static_cast<double>(per);
  }
  double mean = 0;
  for (double v : m) mean += v / nb;
  double ss = 0;
  for (double v : m) ss += (v - mean) * (v - mean);
  return {mean, std::sqrt(ss / (nb - 1) / nb)};
}

ReferencePtr standard_reference(int d) {
  return testing::diagonal_reference(Vector::Zero(d), Vector::Ones(d));
}

TEST(ParallelTempering, SteppingStoneLogZAndColdMomentsOnAGaussian) {
  auto target = std::make_shared<ShiftedGaussian>(Vector::LinSpaced(2, 1.0, -1.0),
                                                  Vector::Constant(2, 0.5), 3.0);
  ParallelTemperingOptions o;
  o.betas = linear_ladder(8, 0.0);
  o.n_local_steps = 2;
  ParallelTemperingKernel pt(target, standard_reference(2), hmc_factory(0.25, 8), o);
  const auto run = drive(pt, *target, Vector::Zero(2), 0, 4000, 11);
  const auto z = pt.log_z();
  ASSERT_TRUE(std::isfinite(z.forward_se) && z.forward_se > 0);
  EXPECT_NEAR(z.forward, target->log_z(), 5 * z.forward_se);
  EXPECT_NEAR(z.reverse, target->log_z(), 5 * z.reverse_se);
  EXPECT_NEAR(run.estimates.at("log_z"), target->log_z(), 5 * run.estimates.at("log_z_se"));
  for (int i = 0; i < 2; ++i) {
    const auto [m, se] = batch_mean(run.draws, [i](const Vector& x) { return x[i]; });
    EXPECT_NEAR(m, target->mean()[i], 5 * se) << "coordinate " << i;
    const auto [m2, se2] = batch_mean(run.draws, [&, i](const Vector& x) {
      return std::pow(x[i] - target->mean()[i], 2);
    });
    EXPECT_NEAR(m2, 0.25, 5 * se2) << "variance " << i;
  }
  EXPECT_EQ(run.estimates.at("n_replicas"), 8);
  EXPECT_EQ(run.estimates.at("rounds"), 4000);
  EXPECT_GT(run.estimates.at("round_trips"), 0);
}

TEST(ParallelTempering, PowerPathMixesBetweenSeparatedModes) {
  // Modes 8 sd apart: plain HMC at beta = 1 would stay in its starting mode.
  auto target = std::make_shared<TwoModes>(4.0, 0.5, 0.3);
  ParallelTemperingOptions o;
  o.betas = geometric_ladder(8, 0.01);
  ParallelTemperingKernel pt(target, nullptr, hmc_factory(0.3, 10), o);
  const auto run = drive(pt, *target, Vector::Constant(1, 4.0), 0, 6000, 5);
  const auto [frac, se] = batch_mean(run.draws, [](const Vector& x) { return x[0] < 0 ? 1.0 : 0.0; });
  EXPECT_NEAR(frac, 0.3, 5 * se + 0.01);
  EXPECT_GT(frac, 0.1);  // it did visit the other mode
  const auto [m2, se2] = batch_mean(run.draws, [](const Vector& x) { return x[0] * x[0]; });
  EXPECT_NEAR(m2, target->second_moment(), 5 * se2);
  EXPECT_TRUE(run.estimates.count("log_z_ratio"));  // power path: only a ratio
  EXPECT_FALSE(run.estimates.count("log_z"));
}

TEST(ParallelTempering, NonReversibleBeatsReversibleRoundTrips) {
  // Target = reference: V is constant, every swap is accepted, and only the swap scheme matters.
  auto target = std::make_shared<ShiftedGaussian>(Vector::Zero(2), Vector::Ones(2), 0.0);
  auto run_scheme = [&](SwapScheme scheme) {
    ParallelTemperingOptions o;
    o.betas = linear_ladder(16, 0.0);
    o.scheme = scheme;
    ParallelTemperingKernel pt(target, standard_reference(2), hmc_factory(0.5, 3), o);
    return drive(pt, *target, Vector::Zero(2), 0, 3000, 9).estimates;
  };
  const auto deo = run_scheme(SwapScheme::kDeterministicEvenOdd);
  const auto seo = run_scheme(SwapScheme::kStochasticEvenOdd);
  EXPECT_NEAR(deo.at("barrier"), 0.0, 1e-12);
  EXPECT_NEAR(deo.at("swap_accept_3"), 1.0, 1e-12);
  // DEO with free swaps: every replica sweeps the ladder in K rounds, a round trip per 2K rounds
  // each, so about K / (2K) = 0.5 round trips per round; SEO is diffusive (O(1/K) per round).
  EXPECT_GT(deo.at("round_trip_rate"), 0.4);
  EXPECT_GT(deo.at("round_trip_rate"), 4 * seo.at("round_trip_rate"));
  EXPECT_NEAR(deo.at("log_z"), target->log_z(), 1e-9);  // exact: V is constant
}

TEST(ParallelTempering, ScheduleAdaptationEqualisesRejection) {
  // A narrow target under a wide reference: a linear ladder puts almost all the rejection in
  // the lowest pairs.
  auto target = std::make_shared<ShiftedGaussian>(Vector::Zero(5), Vector::Constant(5, 0.1), 0.0);
  auto spread = [](const std::vector<double>& a) {
    const auto [lo, hi] = std::minmax_element(a.begin(), a.end());
    return *hi - *lo;
  };
  ParallelTemperingOptions o;
  o.betas = linear_ladder(8, 0.0);
  o.adapt_schedule = false;
  ParallelTemperingKernel fixed(target, standard_reference(5), hmc_factory(0.05, 10, true), o);
  drive(fixed, *target, Vector::Zero(5), 500, 1500, 3);
  o.adapt_schedule = true;
  ParallelTemperingKernel adapted(target, standard_reference(5), hmc_factory(0.05, 10, true), o);
  const auto run = drive(adapted, *target, Vector::Zero(5), 2000, 1500, 3);
  const double fixed_spread = spread(fixed.swap_accept());
  const double adapted_spread = spread(adapted.swap_accept());
  EXPECT_GT(fixed_spread, 0.5);
  EXPECT_LT(adapted_spread, 0.15);
  // The warmup's barrier estimate agrees with the post-warmup one (same path, same Lambda).
  EXPECT_NEAR(adapted.barrier_warmup(), adapted.barrier(), 0.15 * adapted.barrier());
  // (The fixed ladder's sum of rejections is smaller: rejection saturates on coarse gaps, so
  // sum r_i underestimates Lambda there.)
  EXPECT_LT(fixed.barrier(), adapted.barrier());
  // Adapted betas crowd towards 0, where the densities change fastest.
  EXPECT_LT(adapted.betas()[4], 0.2);
}

TEST(ParallelTempering, ChoosesReplicasFromTheBarrier) {
  auto target = std::make_shared<ShiftedGaussian>(Vector::Zero(5), Vector::Constant(5, 0.1), 0.0);
  ParallelTemperingOptions o;
  o.betas = linear_ladder(4, 0.0);
  o.adapt_schedule = true;
  o.choose_replicas = true;
  ParallelTemperingKernel pt(target, standard_reference(5), hmc_factory(0.05, 10, true), o);
  const auto run = drive(pt, *target, Vector::Zero(5), 2000, 2000, 4);
  const double lambda = pt.barrier();
  const int k = pt.n_replicas();
  EXPECT_NE(k, 4);
  EXPECT_NEAR(k, 2 * lambda + 1, std::max(2.0, 0.25 * k)) << "Lambda " << lambda;
  EXPECT_EQ(run.estimates.at("n_replicas"), k);
  ASSERT_TRUE(run.estimates.count("swap_accept_" + std::to_string(k - 2)));
  const auto z = pt.log_z();
  EXPECT_NEAR(0.5 * (z.forward + z.reverse), target->log_z(), 5 * z.mean_se + 0.02);
}

// The same chain on 1, 2 and 3 in-process "ranks" gives bit-identical draws and estimates,
// through warmup (step size and schedule adaptation, a resize) and sampling.
TEST(ParallelTempering, DrawsAreIdenticalForAnyGroupSize) {
  auto target = std::make_shared<TwoModes>(3.0, 0.5, 0.4);
  for (const bool with_reference : {false, true}) {
    SCOPED_TRACE(with_reference ? "reference path (exact draws at beta 0)" : "power path");
    const ReferencePtr reference =
        with_reference ? testing::diagonal_reference(Vector::Zero(1), Vector::Constant(1, 9.0))
                       : nullptr;
    auto options = [&] {
      ParallelTemperingOptions o;
      o.betas = with_reference ? linear_ladder(5, 0.0) : geometric_ladder(5, 0.02);
      o.n_local_steps = 2;
      o.adapt_schedule = true;
      o.choose_replicas = true;
      o.min_replicas = 3;
      return o;
    };
    auto run_group = [&](int n_members) {
      auto hub = std::make_shared<LockstepHub>(n_members);
      std::vector<RunResult> runs(n_members);
      std::vector<std::thread> threads;
      for (int m = 0; m < n_members; ++m) {
        threads.emplace_back([&, m] {
          ParallelTemperingKernel pt(target, reference, hmc_factory(0.3, 5, true), options(),
                                     std::make_shared<LockstepGroup>(hub, m));
          runs[m] = drive(pt, *target, Vector::Constant(1, 1.0), 300, 300, 21);
        });
      }
      for (auto& t : threads) t.join();
      return runs;
    };
    const auto one = run_group(1)[0];
    for (int n : {2, 3}) {
      const auto runs = run_group(n);
      for (int m = 0; m < n; ++m) {
        ASSERT_EQ(runs[m].draws.size(), one.draws.size());
        for (std::size_t i = 0; i < one.draws.size(); ++i)
          ASSERT_EQ(std::memcmp(runs[m].draws[i].data(), one.draws[i].data(), sizeof(double)), 0)
              << n << " members, member " << m << ", draw " << i;
        for (const auto& [key, value] : one.estimates) {
          if (key.find("wall_seconds") != std::string::npos) continue;
          const double other = runs[m].estimates.at(key);
          if (std::isnan(value)) {
            EXPECT_TRUE(std::isnan(other)) << key;
          } else {
            EXPECT_EQ(other, value) << key << " with " << n << " members";
          }
        }
        for (std::size_t i = 0; i < one.stats.size(); ++i)
          ASSERT_EQ(runs[m].stats[i].n_gradient_evals, one.stats[i].n_gradient_evals);
      }
    }
  }
}

TEST(ParallelTempering, RejectsInvalidSetups) {
  auto target = std::make_shared<ShiftedGaussian>(Vector::Zero(2), Vector::Ones(2), 0.0);
  ParallelTemperingOptions o;
  o.betas = linear_ladder(4, 0.0);
  EXPECT_THROW(ParallelTemperingKernel(target, nullptr, hmc_factory(0.1, 5), o), ConfigError);
  o.betas = {0.0, 0.7, 0.5, 1.0};
  EXPECT_THROW(ParallelTemperingKernel(target, standard_reference(2), hmc_factory(0.1, 5), o),
               ConfigError);
  o.betas = linear_ladder(4, 0.0);
  EXPECT_THROW(ParallelTemperingKernel(target, standard_reference(3), hmc_factory(0.1, 5), o),
               ConfigError);
  o.n_local_steps = 0;
  EXPECT_THROW(ParallelTemperingKernel(target, standard_reference(2), hmc_factory(0.1, 5), o),
               ConfigError);
}

}  // namespace
}  // namespace pemc::tempering
