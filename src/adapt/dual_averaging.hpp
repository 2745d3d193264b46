#pragma once
// Dual-averaging step-size adaptation (Hoffman & Gelman 2014, Algorithm 5; as in Stan's
// stepsize_adaptation): drives the mean acceptance statistic to `target_accept`.
#include <cmath>
#include <cstdint>

#include "adapt/state_io.hpp"

namespace pemc::adapt {

struct DualAveragingOptions {
  double target_accept = 0.8;  // delta
  double gamma = 0.05;
  double t0 = 10.0;
  double kappa = 0.75;
};

class DualAveraging {
 public:
  DualAveraging(DualAveragingOptions options, double initial_step_size) : options_(options) {
    restart(initial_step_size);
  }

  // Restart around a new step size (after a metric update): mu = log(10 eps).
  void restart(double step_size) {
    restart_step_size_ = step_size;
    mu_ = std::log(10.0 * step_size);
    s_bar_ = 0.0;
    x_bar_ = 0.0;
    counter_ = 0;
  }

  // One observation of the acceptance statistic; returns the step size to use next.
  double learn(double accept_stat) {
    ++counter_;
    const double a = accept_stat > 1.0 ? 1.0 : (std::isfinite(accept_stat) ? accept_stat : 0.0);
    const double n = static_cast<double>(counter_);
    const double eta = 1.0 / (n + options_.t0);
    s_bar_ = (1.0 - eta) * s_bar_ + eta * (options_.target_accept - a);
    const double x = mu_ - s_bar_ * std::sqrt(n) / options_.gamma;
    const double x_eta = std::pow(n, -options_.kappa);
    x_bar_ = (1.0 - x_eta) * x_bar_ + x_eta * x;
    return std::exp(x);
  }

  // The averaged iterate exp(x_bar): the step size to keep after warmup. Before any observation
  // since the last restart x_bar is not an iterate (it is 0, i.e. step size 1), so the step size
  // of the restart is returned instead (e.g. a zero-length warmup keeps the initial step size).
  double final_step_size() const {
    return counter_ == 0 ? restart_step_size_ : std::exp(x_bar_);
  }
  std::int64_t counter() const { return counter_; }

  // Checkpoint: the running averages (the options come from the config).
  void save_state(KernelState& s) const {
    s.set_kind("dual_averaging");
    put_real(s, "restart_step_size", restart_step_size_);
    put_real(s, "mu", mu_);
    put_real(s, "s_bar", s_bar_);
    put_real(s, "x_bar", x_bar_);
    put_int(s, "counter", counter_);
  }
  void restore_state(const KernelState& s) {
    expect_kind(s, "dual_averaging");
    restart_step_size_ = get_real(s, "restart_step_size");
    mu_ = get_real(s, "mu");
    s_bar_ = get_real(s, "s_bar");
    x_bar_ = get_real(s, "x_bar");
    counter_ = get_int(s, "counter");
  }

 private:
  DualAveragingOptions options_;
  double restart_step_size_ = 1.0;
  double mu_ = 0.0;
  double s_bar_ = 0.0;
  double x_bar_ = 0.0;
  std::int64_t counter_ = 0;
};

}  // namespace pemc::adapt
