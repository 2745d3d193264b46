#pragma once
// Stan-style warmup: step size by dual averaging throughout; the (inverse) metric estimated from
// the draws of doubling windows between an initial and a terminal fast buffer. After each slow
// window the metric is replaced and dual averaging restarts around the current step size.
#include <cstdint>
#include <optional>

#include "adapt/dual_averaging.hpp"
#include "adapt/welford.hpp"
#include "hmc/metric.hpp"

namespace pemc::adapt {

// Stan's rules for a short warmup, shared with the config's warnings (config/validate.cpp): no
// metric estimation below kMinMetricWarmup iterations, and when the buffers and the first window
// do not fit, fast buffers of these fractions of the warmup around one slow window.
inline constexpr std::int64_t kMinMetricWarmup = 20;
inline constexpr double kShortWarmupInitFraction = 0.15;
inline constexpr double kShortWarmupTermFraction = 0.1;

struct WarmupAdapterOptions {
  DualAveragingOptions step_size;
  bool adapt_metric = false;
  int init_buffer = 75;
  int term_buffer = 50;
  int base_window = 25;
};

struct AdaptationUpdate {
  double step_size;
  std::optional<hmc::Metric> metric;  // set when a slow window just closed
};

class WarmupAdapter {
 public:
  WarmupAdapter(const WarmupAdapterOptions& options, std::int64_t n_warmup, double step_size,
                const hmc::Metric& metric);

  // Call after warmup transition number `iteration` (0-based) with the state it produced.
  AdaptationUpdate observe(std::int64_t iteration, ConstVectorRef x, double accept_stat);
  double final_step_size() const { return dual_averaging_.final_step_size(); }

  // The window layout actually used (after shrinking to fit a short warmup); for tests.
  std::int64_t init_buffer() const { return init_buffer_; }
  std::int64_t term_buffer() const { return term_buffer_; }
  std::int64_t next_window_end() const { return next_window_end_; }

  // Checkpoint: windows, dual averaging and the open window's Welford sums. The adapter restored
  // into must have been built with the same options and n_warmup (same config).
  void save_state(KernelState& s) const;
  void restore_state(const KernelState& s);

 private:
  bool in_slow_window(std::int64_t iteration) const;
  void compute_next_window();

  WarmupAdapterOptions options_;
  std::int64_t n_warmup_;
  DualAveraging dual_averaging_;
  hmc::MetricKind metric_kind_;
  std::optional<WelfordCovariance> estimator_;
  std::int64_t init_buffer_, term_buffer_, window_size_, next_window_end_;
};

}  // namespace pemc::adapt
