#include "adapt/warmup_adapter.hpp"

namespace pemc::adapt {

WarmupAdapter::WarmupAdapter(const WarmupAdapterOptions& options, std::int64_t n_warmup,
                             double step_size, const hmc::Metric& metric)
    : options_(options),
      n_warmup_(n_warmup),
      dual_averaging_(options.step_size, step_size),
      metric_kind_(metric.kind()),
      init_buffer_(options.init_buffer),
      term_buffer_(options.term_buffer),
      window_size_(options.base_window) {
  // Stan: no metric estimation for fewer than 20 warmup iterations (windows of a few draws give
  // a useless, possibly near-singular covariance); step-size adaptation still runs.
  const bool metric_adaptable = options_.adapt_metric &&
                                metric_kind_ != hmc::MetricKind::kUnit &&
                                n_warmup_ >= kMinMetricWarmup;
  if (metric_adaptable) {
    // Stan: when the buffers do not fit, use 15% / 75% / 10% of the warmup.
    if (init_buffer_ + window_size_ + term_buffer_ > n_warmup_) {
      init_buffer_ = static_cast<std::int64_t>(kShortWarmupInitFraction * n_warmup_);
      term_buffer_ = static_cast<std::int64_t>(kShortWarmupTermFraction * n_warmup_);
      window_size_ = n_warmup_ - init_buffer_ - term_buffer_;
    }
    if (window_size_ >= 2) {
      estimator_.emplace(metric.dim(), metric_kind_ == hmc::MetricKind::kDense);
    }
  }
  next_window_end_ = init_buffer_ + window_size_ - 1;
}

bool WarmupAdapter::in_slow_window(std::int64_t iteration) const {
  return iteration >= init_buffer_ && iteration < n_warmup_ - term_buffer_;
}

void WarmupAdapter::compute_next_window() {
  const std::int64_t last = n_warmup_ - term_buffer_ - 1;
  if (next_window_end_ == last) return;
  window_size_ *= 2;
  next_window_end_ += window_size_;
  // Stretch the window to the terminal buffer rather than leave a short final one.
  if (next_window_end_ != last && next_window_end_ + 2 * window_size_ >= last + 1)
    next_window_end_ = last;
  if (next_window_end_ > last) next_window_end_ = last;
}

AdaptationUpdate WarmupAdapter::observe(std::int64_t iteration, ConstVectorRef x,
                                        double accept_stat) {
  AdaptationUpdate update{dual_averaging_.learn(accept_stat), std::nullopt};
  if (!estimator_ || !in_slow_window(iteration)) return update;

  estimator_->add(x);
  if (iteration != next_window_end_) return update;

  // Regularise towards a small multiple of the identity, as Stan does (n/(n+5), 1e-3 * 5/(n+5)).
  const double n = static_cast<double>(estimator_->count());
  const double shrink = n / (n + 5.0);
  const double ridge = 1e-3 * 5.0 / (n + 5.0);
  if (metric_kind_ == hmc::MetricKind::kDense) {
    Matrix cov = shrink * estimator_->covariance();
    cov = 0.5 * (cov + cov.transpose()).eval();  // Welford's update is symmetric only up to rounding
    cov.diagonal().array() += ridge;
    update.metric = hmc::Metric::dense(cov);
  } else {
    Vector var = shrink * estimator_->variance();
    var.array() += ridge;
    update.metric = hmc::Metric::diagonal(var);
  }
  estimator_->reset();
  compute_next_window();
  dual_averaging_.restart(update.step_size);
  return update;
}

void WarmupAdapter::save_state(KernelState& s) const {
  s.set_kind("warmup_adapter");
  put_int(s, "n_warmup", n_warmup_);
  put_int(s, "init_buffer", init_buffer_);
  put_int(s, "term_buffer", term_buffer_);
  put_int(s, "window_size", window_size_);
  put_int(s, "next_window_end", next_window_end_);
  dual_averaging_.save_state(put_child(s, "dual_averaging"));
  if (estimator_) estimator_->save_state(put_child(s, "estimator"));
}

void WarmupAdapter::restore_state(const KernelState& s) {
  expect_kind(s, "warmup_adapter");
  if (get_int(s, "n_warmup") != n_warmup_)
    state_error(s, "n_warmup", "saved with " + std::to_string(get_int(s, "n_warmup")) +
                                   " warmup iterations, this run has " + std::to_string(n_warmup_));
  if (has_child(s, "estimator") != estimator_.has_value())
    state_error(s, "estimator", "metric adaptation differs from the saved state");
  init_buffer_ = get_int(s, "init_buffer");
  term_buffer_ = get_int(s, "term_buffer");
  window_size_ = get_int(s, "window_size");
  next_window_end_ = get_int(s, "next_window_end");
  dual_averaging_.restore_state(get_child(s, "dual_averaging"));
  if (estimator_) estimator_->restore_state(get_child(s, "estimator"));
}

}  // namespace pemc::adapt
