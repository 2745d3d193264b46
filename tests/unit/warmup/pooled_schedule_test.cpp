// The rounds of a pooled warmup: sizes from the config (Stan's shrinking for short warmups), the
// order of the phases, early ends only after kMinWindows windows, and the configured warmup never
// exceeded.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "warmup/pooled_schedule.hpp"

namespace pemc::warmup {
namespace {

v1::AdaptationConfig stan_defaults() {
  v1::AdaptationConfig a;
  a.set_init_buffer(75);
  a.set_term_buffer(50);
  return a;
}

TEST(PooledSchedule, SizesFromConfig) {
  const auto s = schedule_sizes(stan_defaults(), 1000);
  EXPECT_EQ(s.max_warmup, 1000);
  EXPECT_EQ(s.init, 75);
  EXPECT_EQ(s.first_window, 25);
  EXPECT_EQ(s.window, kDefaultWindow);
  EXPECT_EQ(s.term, 50);
  auto a = stan_defaults();
  a.set_pooled_window(30);
  EXPECT_EQ(schedule_sizes(a, 1000).window, 30);
}

TEST(PooledSchedule, ShortWarmupShrinksAsStan) {
  // 75 + 25 + 50 + 50 = 200 > 100: 15 % / 75 % (two windows) / 10 %.
  const auto s = schedule_sizes(stan_defaults(), 100);
  EXPECT_EQ(s.init, 15);
  EXPECT_EQ(s.term, 10);
  EXPECT_EQ(s.first_window, 37);
  EXPECT_EQ(s.window, 37);
  EXPECT_LE(s.init + kMinWindows * s.window + s.term, 100);
  // 200 fits exactly.
  EXPECT_EQ(schedule_sizes(stan_defaults(), 200).init, 75);
}

TEST(PooledSchedule, TooShortWarmupRefused) {
  EXPECT_TRUE(pooled_warmup_problem(kMinPooledWarmup - 1));
  EXPECT_FALSE(pooled_warmup_problem(kMinPooledWarmup));
  EXPECT_THROW(schedule_sizes(stan_defaults(), 10), ConfigError);
}

// Runs the schedule with a fixed convergence answer; returns the phases in order and the
// warmup iterations before sampling.
std::pair<std::vector<Phase>, std::int64_t> walk(const ScheduleSizes& s, bool converged) {
  std::vector<Phase> phases;
  RoundPlan p = first_round(s);
  while (true) {
    phases.push_back(p.phase);
    if (p.phase == Phase::kSample) return {phases, p.warmup_before};
    p = next_round(s, p, converged);
  }
}

TEST(PooledSchedule, ConvergedChainsStopAfterMinWindows) {
  const auto s = schedule_sizes(stan_defaults(), 1000);
  const auto [phases, warmup] = walk(s, true);
  const std::vector<Phase> want{Phase::kInit, Phase::kWindow, Phase::kWindow, Phase::kTerm,
                                Phase::kSample};
  EXPECT_EQ(phases, want);
  EXPECT_EQ(warmup, 75 + 25 + 50 + 50);
}

TEST(PooledSchedule, UnconvergedChainsUseTheWholeWarmupAtMost) {
  for (const std::int64_t w : {40, 100, 225, 226, 999, 1000, 5000}) {
    const auto s = schedule_sizes(stan_defaults(), w);
    const auto [phases, warmup] = walk(s, false);
    EXPECT_LE(warmup, w) << w;
    // Windows until no further window and the terminal buffer fit.
    EXPECT_GT(warmup + s.window, w) << w;
    EXPECT_EQ(phases.front(), s.init > 0 ? Phase::kInit : Phase::kWindow);
    EXPECT_EQ(phases[phases.size() - 2], Phase::kTerm);
    EXPECT_LE(static_cast<int>(phases.size()), max_rounds(s)) << w;
    EXPECT_GE(std::count(phases.begin(), phases.end(), Phase::kWindow), kMinWindows) << w;
  }
}

TEST(PooledSchedule, NoBuffersGoStraightToWindowsAndSampling) {
  v1::AdaptationConfig a;
  a.set_base_window(25);
  a.set_init_buffer(0);
  a.set_term_buffer(0);
  const auto s = schedule_sizes(a, 1000);
  const auto [phases, warmup] = walk(s, true);
  const std::vector<Phase> want{Phase::kWindow, Phase::kWindow, Phase::kSample};
  EXPECT_EQ(phases, want);
  EXPECT_EQ(warmup, 25 + kDefaultWindow);
}

}  // namespace
}  // namespace pemc::warmup
