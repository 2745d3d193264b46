#pragma once
// The rounds of a pooled warmup (docs/guide.md#pooled-warmup). A run's chains warm up in rounds;
// after each round the coordinator pools what every chain reports (pooled_windows.hpp) and decides
// the next round, which every chain then runs:
//   init     the initial buffer (Stan's init_buffer): the step size is searched and adapted by
//            dual averaging with the configured metric while the chains leave their starts;
//   window   `window` iterations (the first: Stan's base_window) with the metric pooled so far
//            (the configured one in the first); each chain searches its step size again (Stan
//            does so after every metric change) and adapts it; its draws feed the next metric;
//   term     the terminal buffer (Stan's term_buffer) with the final metric, step size adapted;
//   sample   the final round: the run's iterations, no adaptation, at the pooled step size (each
//            chain at its own when they did not agree).
// Warmup leaves the windows once at least kMinWindows windows ran and the pooled windows' log
// density has converged (pooled_windows.hpp), and at the latest when one more window and the
// terminal buffer would exceed the configured warmup, which is the maximum.
#include <cstdint>
#include <optional>
#include <string>

#include "pemc/v1/kernels.pb.h"

namespace pemc::warmup {

// Windows before warmup may end: the first pooled metric comes from draws taken with the
// configured metric, so at least one window runs with a pooled one.
inline constexpr int kMinWindows = 2;
inline constexpr int kDefaultWindow = 50;
// Below this the buffers and kMinWindows windows are too short to estimate anything (Stan needs 20
// iterations for one window; pooled warmup needs two).
inline constexpr std::int64_t kMinPooledWarmup = 40;

enum class Phase { kInit = 0, kWindow = 1, kTerm = 2, kSample = 3 };
const char* phase_name(Phase p);

// Iterations per chain of each kind of round.
struct ScheduleSizes {
  std::int64_t max_warmup = 0;
  std::int64_t init = 0;
  std::int64_t first_window = 0;  // runs with the configured metric: as short as Stan's first
  std::int64_t window = 0;
  std::int64_t term = 0;
};

// Why a pooled warmup of `warmup` iterations cannot run (nullopt: it can).
std::optional<std::string> pooled_warmup_problem(std::int64_t warmup);

// The sizes for a run: the configured buffers and window, or, when init + kMinWindows windows +
// term exceed `warmup`, 15 % / 75 % / 10 % of it (Stan's shrinking rule, the windows sharing the
// 75 %). `warmup` must pass pooled_warmup_problem.
ScheduleSizes schedule_sizes(const v1::AdaptationConfig& adaptation, std::int64_t warmup);

// One round of the schedule.
struct RoundPlan {
  Phase phase = Phase::kInit;
  int window = 0;                   // 1-based index of a window round, 0 otherwise
  std::int64_t iterations = 0;      // warmup iterations of the round (kSample: 0)
  std::int64_t warmup_before = 0;   // warmup iterations every chain ran before this round
};

// Round 0.
RoundPlan first_round(const ScheduleSizes& sizes);
// The round after `done`; `converged` is the pooled decision after a window round (ignored
// otherwise). Never called after kSample.
RoundPlan next_round(const ScheduleSizes& sizes, const RoundPlan& done, bool converged);
// The most rounds a run can have (an upper bound for the runner's bookkeeping).
int max_rounds(const ScheduleSizes& sizes);

}  // namespace pemc::warmup
