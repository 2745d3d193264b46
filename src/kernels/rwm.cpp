#include "kernels/rwm.hpp"
#include "kernels/plain_state.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace pemc::kernels {
namespace {

RwmOptions validated(RwmOptions o, int target_dim, int metric_dim) {
  if (!(o.proposal_scale > 0.0) || !std::isfinite(o.proposal_scale))
    throw ConfigError("rwm: proposal_scale must be finite and > 0, got " +
                      std::to_string(o.proposal_scale));
  if (target_dim != metric_dim)
    throw ConfigError("rwm: metric dimension " + std::to_string(metric_dim) +
                      " differs from the target dimension " + std::to_string(target_dim));
  return o;
}

}  // namespace

RwmKernel::RwmKernel(targets::TargetPtr target, hmc::Metric metric, RwmOptions options)
    : target_(std::move(target)),
      metric_(std::move(metric)),
      options_(validated(options, target_->dim(), metric_.dim())),
      momentum_(target_->dim()),
      step_(target_->dim()),
      x_prop_(target_->dim()),
      grad_prop_(target_->dim()) {}

RwmKernel::RwmKernel(targets::TargetPtr target, RwmOptions options)
    : RwmKernel(target, hmc::Metric::unit(target->dim()), options) {}

TransitionStats RwmKernel::transition(ChainState& state, rng::Stream& stream) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // xi = M^{-1} p with p ~ N(0, M) has covariance M^{-1} M M^{-1} = M^{-1}.
  metric_.sample_momentum(stream, momentum_);
  metric_.velocity(momentum_, step_);
  x_prop_ = state.x + options_.proposal_scale * step_;

  double u = target_->potential_and_gradient(x_prop_, grad_prop_);
  // NaN, +inf (and -inf, an improper density) or a non-finite gradient: reject the proposal.
  const bool finite = std::isfinite(u) && grad_prop_.allFinite();
  if (!finite) u = kInf;
  const double log_accept = finite ? state.potential - u : -kInf;

  TransitionStats stats;
  stats.step_size = options_.proposal_scale;
  stats.n_gradient_evals = 1;
  stats.nonfinite = !finite;
  stats.accept_stat = std::min(1.0, std::exp(log_accept));
  if (std::log(stream.uniform()) < log_accept) {
    state.x = x_prop_;
    state.grad = grad_prop_;
    state.potential = u;
    stats.accepted = true;
  }
  stats.energy = state.potential;
  return stats;
}

void RwmKernel::begin_warmup(std::int64_t n_warmup) {
  if (options_.adaptation) {
    adapter_.emplace(*options_.adaptation, n_warmup, options_.proposal_scale, metric_);
  }
}

void RwmKernel::adapt(std::int64_t warmup_iteration, const ChainState& state,
                      const TransitionStats& stats) {
  if (!adapter_) return;
  // Dual averaging works on log(step size); here the "step size" is the proposal scale.
  const auto update = adapter_->observe(warmup_iteration, state.x, stats.accept_stat);
  options_.proposal_scale = update.step_size;
  if (update.metric) metric_ = *update.metric;
}

void RwmKernel::end_warmup() {
  if (!adapter_) return;
  options_.proposal_scale = adapter_->final_step_size();
  adapter_.reset();
}

// ---- checkpoint (added methods) ----

void RwmKernel::save_state(pemc::v1::KernelState& state) const {
  save_plain_state(state, name(), options_.proposal_scale, metric_, adapter_);
}

void RwmKernel::restore_state(const pemc::v1::KernelState& state) {
  restore_plain_state(state, name(), options_.proposal_scale, metric_, adapter_);
}

}  // namespace pemc::kernels
