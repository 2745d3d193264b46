#pragma once
// Warmup adaptation (AdaptationConfig) of the HMC, NUTS, RWM and MALA kernels: its defaults, its
// rules, the options the kernels take, and the step-size rules that depend on it.
#include <cstdint>
#include <optional>
#include <string>

#include "adapt/warmup_adapter.hpp"
#include "config/problems.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::config {

// Where the search for a first step size starts when a config leaves step_size unset (Stan's
// default step size).
inline constexpr double kStepSizeSearchStart = 1.0;

// Where an HMC/NUTS kernel runs. A top-level sampler adapts by default; a kernel inside a
// composite sampler does not: its warmup runs per temperature level or on a space whose
// conditional changes with the sampler's own variables, so its configs say what to adapt.
enum class Placement { kTopLevel, kLocal };

// Fills the dual-averaging and window defaults (Stan's) and the kernel's target acceptance rate.
void fill_adaptation(v1::AdaptationConfig& a, double target_accept);

// A top-level kernel adapts its step size unless told otherwise, and its metric when
// `adapt_metric` (NUTS; HMC's default unit metric has nothing to adapt).
void fill_top_level_adaptation(v1::AdaptationConfig& a, bool adapt_metric);

// Pooled warmup is the default of a top-level sampler (its adaptation `a` in `run`) when the run
// has 2 or more chains (seeds x chains_per_seed), adapts its step size and a metric (`metric`:
// the kernel's, METRIC_UNSPECIFIED resolved by the caller) and its warmup fits the pooled rounds;
// a config that sets `pooled` keeps its choice. Call after fill_top_level_adaptation.
void fill_pooled_default(v1::AdaptationConfig& a, const v1::RunConfig& run,
                         v1::MetricKind metric);

void check_adaptation(const v1::AdaptationConfig& a, const std::string& pre, Problems& p);

// step_size is required, except where the first step size can be searched for: a top-level
// sampler (`top_level_warmup` is its warmup length) that adapts during a warmup.
void check_step_size(bool has, double step_size, const v1::AdaptationConfig& a,
                     const std::string& pre, std::optional<std::int64_t> top_level_warmup,
                     Problems& p);

// Pooled warmup (adaptation.pooled, src/warmup/): only a top-level sampler or pseudo-extended's
// kernel (`run` its config; nullptr for another composite sampler's kernel) with adaptation on, a metric to pool (`metric`: the kernel's
// configured kind, METRIC_UNSPECIFIED resolved by the caller) and a warmup long enough for its
// rounds.
void check_pooled_warmup(const v1::AdaptationConfig& a, const std::string& pre,
                         const v1::RunConfig* run, v1::MetricKind metric, Problems& p);

// The warmup adapter's options, or nullopt when adaptation is off. `default_target` is the
// kernel's target acceptance rate when the config leaves it unset.
std::optional<adapt::WarmupAdapterOptions> make_adaptation(const v1::AdaptationConfig& a,
                                                           double default_target);

// A top-level HMC/NUTS sampler's adaptation over a warmup too short for Stan's windows: what the
// warmup adapter (adapt/warmup_adapter.cpp) does instead. Nothing when the windows fit.
std::optional<Problem> short_warmup_warning(const v1::AdaptationConfig& a, bool metric_adaptable,
                                            std::int64_t warmup, const std::string& pre);

}  // namespace pemc::config
