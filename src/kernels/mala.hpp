#pragma once
// Metropolis-adjusted Langevin algorithm (Roberts & Tweedie 1996), preconditioned by the inverse
// metric A = M^{-1}:
//   x' = x - (h/2) A grad U(x) + sqrt(h) xi,   xi ~ N(0, A),
// i.e. q(x'|x) = N(x'; x - (h/2) A grad U(x), h A), accepted with probability
//   min(1, exp(U(x) - U(x')) q(x|x') / q(x'|x)).
// h is the step size (the proposal variance per unit of A); it is adapted during warmup by dual
// averaging on log h towards target_accept (0.574, Roberts & Rosenthal 1998), and A by the windowed
// covariance estimate when adaptation.adapt_metric is set and the metric is not unit.
// One gradient evaluation per transition (at the proposal); n_leapfrog = 1.
#include <optional>
#include <string>

#include "adapt/warmup_adapter.hpp"
#include "hmc/metric.hpp"
#include "kernels/kernel.hpp"

namespace pemc::kernels {

inline constexpr double kMalaDefaultTargetAccept = 0.574;

struct MalaOptions {
  double step_size = 0.1;  // h > 0
  // adaptation->step_size.target_accept should be kMalaDefaultTargetAccept unless configured.
  std::optional<adapt::WarmupAdapterOptions> adaptation;  // nullopt: no adaptation
};

class MalaKernel final : public Kernel {
 public:
  // Throws ConfigError for a non-positive step size or a metric of the wrong dimension.
  MalaKernel(targets::TargetPtr target, hmc::Metric metric, MalaOptions options);
  MalaKernel(targets::TargetPtr target, MalaOptions options);  // unit metric

  std::string name() const override { return "mala"; }
  // stats: accept_stat = the MH acceptance probability, n_leapfrog = 1, n_gradient_evals = 1,
  // step_size = h, energy = U + K of the returned state and its (forward or reverse) momentum.
  TransitionStats transition(ChainState& state, rng::Stream& stream) override;

  void begin_warmup(std::int64_t n_warmup) override;
  void adapt(std::int64_t warmup_iteration, const ChainState& state,
             const TransitionStats& stats) override;
  void end_warmup() override;
  double step_size() const override { return options_.step_size; }
  const hmc::Metric& metric() const { return metric_; }

  bool can_checkpoint() const override { return true; }
  void save_state(pemc::v1::KernelState& state) const override;
  void restore_state(const pemc::v1::KernelState& state) override;

 private:
  targets::TargetPtr target_;
  hmc::Metric metric_;
  MalaOptions options_;
  std::optional<adapt::WarmupAdapter> adapter_;
  Vector momentum_, reverse_momentum_, drift_, x_prop_, grad_prop_;  // preallocated scratch
};

}  // namespace pemc::kernels
