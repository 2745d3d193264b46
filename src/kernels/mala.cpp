#include "kernels/mala.hpp"
#include "kernels/plain_state.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace pemc::kernels {
namespace {

MalaOptions validated(MalaOptions o, int target_dim, int metric_dim) {
  if (!(o.step_size > 0.0) || !std::isfinite(o.step_size))
    throw ConfigError("mala: step_size must be finite and > 0, got " +
                      std::to_string(o.step_size));
  if (target_dim != metric_dim)
    throw ConfigError("mala: metric dimension " + std::to_string(metric_dim) +
                      " differs from the target dimension " + std::to_string(target_dim));
  return o;
}

}  // namespace

MalaKernel::MalaKernel(targets::TargetPtr target, hmc::Metric metric, MalaOptions options)
    : target_(std::move(target)),
      metric_(std::move(metric)),
      options_(validated(options, target_->dim(), metric_.dim())),
      momentum_(target_->dim()),
      reverse_momentum_(target_->dim()),
      drift_(target_->dim()),
      x_prop_(target_->dim()),
      grad_prop_(target_->dim()) {}

MalaKernel::MalaKernel(targets::TargetPtr target, MalaOptions options)
    : MalaKernel(target, hmc::Metric::unit(target->dim()), options) {}

TransitionStats MalaKernel::transition(ChainState& state, rng::Stream& stream) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double h = options_.step_size;
  const double root_h = std::sqrt(h);

  // Write the Gaussian noise as sqrt(h) A p with p ~ N(0, M), so that sqrt(h) A p ~ N(0, h A).
  // Then x' - x + (h/2) A grad U(x) = sqrt(h) A p and the forward log proposal density is
  //   log q(x'|x) = -(1/2h) (sqrt(h) A p)' A^{-1} (sqrt(h) A p) + c = -K(p) + c,  K(p) = p'Ap/2.
  // The reverse move needs x - x' + (h/2) A grad U(x') = -sqrt(h) A p_r with
  //   p_r = p - (sqrt(h)/2) (grad U(x) + grad U(x')),
  // so log q(x|x') = -K(p_r) + c with the same constant c (it depends on h and |A| only).
  // Neither density needs A^{-1}, which matters for a dense metric.
  metric_.sample_momentum(stream, momentum_);
  reverse_momentum_ = momentum_ - (0.5 * root_h) * state.grad;  // p - (sqrt h / 2) grad U(x)
  metric_.velocity(reverse_momentum_, drift_);
  x_prop_ = state.x + root_h * drift_;  // x + sqrt(h) A p - (h/2) A grad U(x)

  double u = target_->potential_and_gradient(x_prop_, grad_prop_);
  const bool finite = std::isfinite(u) && grad_prop_.allFinite();
  if (!finite) u = kInf;

  const double k_forward = metric_.kinetic(momentum_);
  double k_reverse = kInf;
  double log_accept = -kInf;
  if (finite) {
    reverse_momentum_.noalias() -= (0.5 * root_h) * grad_prop_;
    k_reverse = metric_.kinetic(reverse_momentum_);
    // log pi(x') - log pi(x) + log q(x|x') - log q(x'|x)
    log_accept = (state.potential - u) + (k_forward - k_reverse);
    if (std::isnan(log_accept)) log_accept = -kInf;
  }

  TransitionStats stats;
  stats.step_size = h;
  stats.n_leapfrog = 1;
  stats.n_gradient_evals = 1;
  stats.nonfinite = !finite;
  stats.accept_stat = std::min(1.0, std::exp(log_accept));
  if (std::log(stream.uniform()) < log_accept) {
    state.x = x_prop_;
    state.grad = grad_prop_;
    state.potential = u;
    stats.accepted = true;
    stats.energy = u + k_reverse;
  } else {
    stats.energy = state.potential + k_forward;
  }
  return stats;
}

void MalaKernel::begin_warmup(std::int64_t n_warmup) {
  if (options_.adaptation) {
    adapter_.emplace(*options_.adaptation, n_warmup, options_.step_size, metric_);
  }
}

void MalaKernel::adapt(std::int64_t warmup_iteration, const ChainState& state,
                       const TransitionStats& stats) {
  if (!adapter_) return;
  const auto update = adapter_->observe(warmup_iteration, state.x, stats.accept_stat);
  options_.step_size = update.step_size;
  if (update.metric) metric_ = *update.metric;
}

void MalaKernel::end_warmup() {
  if (!adapter_) return;
  options_.step_size = adapter_->final_step_size();
  adapter_.reset();
}

// ---- checkpoint (added methods) ----

void MalaKernel::save_state(pemc::v1::KernelState& state) const {
  save_plain_state(state, name(), options_.step_size, metric_, adapter_);
}

void MalaKernel::restore_state(const pemc::v1::KernelState& state) {
  restore_plain_state(state, name(), options_.step_size, metric_, adapter_);
}

}  // namespace pemc::kernels
