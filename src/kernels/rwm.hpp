#pragma once
// Gaussian random-walk Metropolis: x' = x + scale * xi, xi ~ N(0, M^{-1}), accepted with probability
// min(1, exp(U(x) - U(x'))) (the proposal is symmetric). M^{-1} is the inverse metric, i.e. the
// shape of the proposal covariance (unit: isotropic); scale is adapted during warmup by dual
// averaging on log(scale) towards target_accept (0.234, Roberts, Gelman & Gilks 1997), and the
// shape by the same windowed covariance estimate as HMC when adaptation.adapt_metric is set and
// the metric is not unit.
//
// Gradient accounting (a deliberate choice): RWM does not need gradients, but the Kernel contract
// says ChainState.grad is the gradient at x on exit, so that kernels can be composed or swapped
// (tempering, replica exchange, a runner that mixes samplers) without a stale gradient. Each
// proposal is therefore evaluated with potential_and_gradient and counted as one gradient
// evaluation (n_gradient_evals = 1 per transition). This is also the honest cost for
// "ESS per gradient evaluation" comparisons: RWM pays one target evaluation per iteration.
#include <optional>
#include <string>

#include "adapt/warmup_adapter.hpp"
#include "hmc/metric.hpp"
#include "kernels/kernel.hpp"

namespace pemc::kernels {

inline constexpr double kRwmDefaultTargetAccept = 0.234;

struct RwmOptions {
  double proposal_scale = 1.0;  // > 0
  // adaptation->step_size.target_accept should be kRwmDefaultTargetAccept unless configured.
  std::optional<adapt::WarmupAdapterOptions> adaptation;  // nullopt: no adaptation
};

class RwmKernel final : public Kernel {
 public:
  // Throws ConfigError for a non-positive scale or a metric of the wrong dimension.
  RwmKernel(targets::TargetPtr target, hmc::Metric metric, RwmOptions options);
  RwmKernel(targets::TargetPtr target, RwmOptions options);  // unit metric

  std::string name() const override { return "rwm"; }
  // stats: accept_stat = min(1, exp(U(x) - U(x'))), n_leapfrog = 0, n_gradient_evals = 1,
  // step_size = the proposal scale, energy = U at the returned state.
  TransitionStats transition(ChainState& state, rng::Stream& stream) override;

  void begin_warmup(std::int64_t n_warmup) override;
  void adapt(std::int64_t warmup_iteration, const ChainState& state,
             const TransitionStats& stats) override;
  void end_warmup() override;
  double step_size() const override { return options_.proposal_scale; }
  const hmc::Metric& metric() const { return metric_; }

  bool can_checkpoint() const override { return true; }
  void save_state(pemc::v1::KernelState& state) const override;
  void restore_state(const pemc::v1::KernelState& state) override;

 private:
  targets::TargetPtr target_;
  hmc::Metric metric_;
  RwmOptions options_;
  std::optional<adapt::WarmupAdapter> adapter_;
  Vector momentum_, step_, x_prop_, grad_prop_;  // preallocated scratch
};

}  // namespace pemc::kernels
