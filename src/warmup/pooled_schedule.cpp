#include "warmup/pooled_schedule.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace pemc::warmup {
namespace {

// Stan's fractions for a warmup too short for its buffers (adapt/warmup_adapter.hpp).
constexpr double kShortInitFraction = 0.15;
constexpr double kShortTermFraction = 0.1;

}  // namespace

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::kInit: return "initial buffer";
    case Phase::kWindow: return "window";
    case Phase::kTerm: return "terminal buffer";
    case Phase::kSample: return "sampling";
  }
  return "?";
}

std::optional<std::string> pooled_warmup_problem(std::int64_t warmup) {
  if (warmup >= kMinPooledWarmup) return std::nullopt;
  return "pooled warmup needs warmup >= " + std::to_string(kMinPooledWarmup) +
         " (an initial buffer, " + std::to_string(kMinWindows) +
         " metric windows and a terminal buffer); raise warmup or leave adaptation.pooled unset";
}

ScheduleSizes schedule_sizes(const v1::AdaptationConfig& a, std::int64_t warmup) {
  if (pooled_warmup_problem(warmup)) throw ConfigError(*pooled_warmup_problem(warmup));
  ScheduleSizes s;
  s.max_warmup = warmup;
  s.init = a.has_init_buffer() ? a.init_buffer() : 75;
  s.term = a.has_term_buffer() ? a.term_buffer() : 50;
  s.first_window = a.has_base_window() ? a.base_window() : 25;
  s.window = a.has_pooled_window() ? a.pooled_window() : kDefaultWindow;
  if (s.init + s.first_window + (kMinWindows - 1) * s.window + s.term > warmup) {
    s.init = static_cast<std::int64_t>(kShortInitFraction * static_cast<double>(warmup));
    s.term = static_cast<std::int64_t>(kShortTermFraction * static_cast<double>(warmup));
    s.window = s.first_window = (warmup - s.init - s.term) / kMinWindows;
  }
  return s;
}

RoundPlan first_round(const ScheduleSizes& s) {
  if (s.init > 0) return {Phase::kInit, 0, s.init, 0};
  return {Phase::kWindow, 1, s.first_window, 0};
}

RoundPlan next_round(const ScheduleSizes& s, const RoundPlan& done, bool converged) {
  const std::int64_t before = done.warmup_before + done.iterations;
  const RoundPlan term = s.term > 0 ? RoundPlan{Phase::kTerm, 0, s.term, before}
                                    : RoundPlan{Phase::kSample, 0, 0, before};
  switch (done.phase) {
    case Phase::kInit:
      return {Phase::kWindow, 1, s.first_window, before};
    case Phase::kWindow: {
      const bool room = before + s.window + s.term <= s.max_warmup;
      if (!room || (converged && done.window >= kMinWindows)) return term;
      return {Phase::kWindow, done.window + 1, s.window, before};
    }
    case Phase::kTerm:
      return {Phase::kSample, 0, 0, before};
    case Phase::kSample:
      break;
  }
  throw DataError("pooled warmup: no round after sampling");
}

int max_rounds(const ScheduleSizes& s) {
  const std::int64_t windows = std::max<std::int64_t>(
      kMinWindows, 1 + (s.max_warmup - s.init - s.first_window - s.term) /
                           std::max<std::int64_t>(1, s.window));
  return static_cast<int>(windows) + 3;  // init, windows, term, sample
}

}  // namespace pemc::warmup
