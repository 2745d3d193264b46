#include "kernels/hmc.hpp"
#include "kernels/plain_state.hpp"

#include <algorithm>
#include <cmath>

namespace pemc::kernels {

HmcKernel::HmcKernel(targets::TargetPtr target, hmc::Metric metric, HmcOptions options)
    : target_(std::move(target)),
      metric_(std::move(metric)),
      options_(options),
      hamiltonian_(*target_, metric_),
      z_(target_->dim()) {}

TransitionStats HmcKernel::transition(ChainState& state, rng::Stream& stream) {
  const std::int64_t evals_before = hamiltonian_.n_gradient_evals();
  double eps = options_.step_size;
  if (options_.jitter_step_size) eps *= 0.9 + 0.2 * stream.uniform();
  int n_steps = options_.n_leapfrog;
  if (options_.jitter_n_leapfrog && n_steps > 1)
    n_steps = 1 + static_cast<int>(stream.below(static_cast<std::uint64_t>(2 * n_steps - 1)));

  // Only the Hamiltonian's ranges() are read and moved: the whole vector, or this member's
  // pseudo-samples when the chain's space is partitioned over a group (hmc/partition.hpp).
  const auto ranges = hamiltonian_.ranges();
  for (const auto& r : ranges) {
    z_.q.segment(r.begin, r.size) = state.x.segment(r.begin, r.size);
    z_.grad.segment(r.begin, r.size) = state.grad.segment(r.begin, r.size);
  }
  z_.potential = state.potential;
  hamiltonian_.sample_momentum(stream, z_);
  const double h0 = z_.hamiltonian();

  // Leapfrog with the half-kicks of consecutive steps fused into full kicks (the same map as
  // n_steps separate leapfrog_step calls): one velocity, one drift and one kick per gradient.
  bool finite = true;
  int taken = 0;
  auto kick = [&](double size) {
    for (const auto& r : ranges)
      z_.p.segment(r.begin, r.size).noalias() -= size * z_.grad.segment(r.begin, r.size);
  };
  kick(0.5 * eps);
  const bool unit_metric = hamiltonian_.metric().kind() == hmc::MetricKind::kUnit;
  while (taken < n_steps) {
    for (const auto& r : ranges) {
      if (unit_metric) {
        // velocity = p: skip the copy
        z_.q.segment(r.begin, r.size).noalias() += eps * z_.p.segment(r.begin, r.size);
      } else {
        hamiltonian_.metric().velocity(z_.p, z_.velocity, r.begin, r.size);
        z_.q.segment(r.begin, r.size).noalias() += eps * z_.velocity.segment(r.begin, r.size);
      }
    }
    hamiltonian_.update_potential_gradient(z_);
    ++taken;
    if (!std::isfinite(z_.potential)) {
      finite = false;
      break;
    }
    kick(taken < n_steps ? eps : 0.5 * eps);
  }
  if (finite) hamiltonian_.update_kinetic(z_);

  TransitionStats stats;
  stats.step_size = eps;
  stats.n_leapfrog = taken;
  stats.n_gradient_evals = hamiltonian_.n_gradient_evals() - evals_before;
  const double h1 = finite ? z_.hamiltonian() : std::numeric_limits<double>::infinity();
  stats.nonfinite = !finite;
  // A NaN energy error counts as a rejection (accept probability 0).
  const double log_accept = std::isnan(h1) ? -std::numeric_limits<double>::infinity() : h0 - h1;
  stats.accept_stat = std::min(1.0, std::exp(log_accept));
  stats.divergent = !finite || (h1 - h0) > 1000.0;
  if (std::log(stream.uniform()) < log_accept) {
    for (const auto& r : ranges) {
      state.x.segment(r.begin, r.size) = z_.q.segment(r.begin, r.size);
      state.grad.segment(r.begin, r.size) = z_.grad.segment(r.begin, r.size);
    }
    state.potential = z_.potential;
    stats.accepted = true;
    stats.energy = h1;
  } else {
    stats.energy = h0;
  }
  return stats;
}

void HmcKernel::begin_warmup(std::int64_t n_warmup) {
  if (options_.adaptation) {
    adapter_.emplace(*options_.adaptation, n_warmup, options_.step_size, metric_);
  }
}

void HmcKernel::adapt(std::int64_t warmup_iteration, const ChainState& state,
                      const TransitionStats& stats) {
  if (!adapter_) return;
  const auto update = adapter_->observe(warmup_iteration, state.x, stats.accept_stat);
  options_.step_size = update.step_size;
  if (update.metric) {
    metric_ = *update.metric;
    hamiltonian_.set_metric(metric_);
  }
}

void HmcKernel::end_warmup() {
  if (!adapter_) return;
  options_.step_size = adapter_->final_step_size();
  adapter_.reset();
}

// ---- checkpoint (added methods) ----

void HmcKernel::save_state(pemc::v1::KernelState& state) const {
  save_plain_state(state, name(), options_.step_size, metric_, adapter_);
}

void HmcKernel::restore_state(const pemc::v1::KernelState& state) {
  restore_plain_state(state, name(), options_.step_size, metric_, adapter_);
  hamiltonian_.set_metric(metric_);
}

}  // namespace pemc::kernels
