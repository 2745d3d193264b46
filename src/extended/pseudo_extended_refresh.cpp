#include "extended/pseudo_extended_refresh.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace pemc::extended {

namespace {

std::shared_ptr<const ReferencePathPseudoExtended> checked(
    std::shared_ptr<const ReferencePathPseudoExtended> space) {
  if (!space) throw ConfigError("reference refresh kernel: no space");
  return space;
}

}  // namespace

ReferenceRefreshKernel::ReferenceRefreshKernel(
    kernels::KernelPtr inner, std::shared_ptr<const ReferencePathPseudoExtended> space)
    : inner_(std::move(inner)), space_(checked(std::move(space))), moves_(space_) {
  if (!inner_) throw ConfigError("reference refresh kernel: no kernel");
  n_ = space_->inner().n_pseudo();
  d_ = space_->original_dim();
  proposal_.resize(d_);
}

kernels::TransitionStats ReferenceRefreshKernel::transition(kernels::ChainState& state,
                                                            rng::Stream& stream) {
  kernels::TransitionStats stats = inner_->transition(state, stream);
  const auto& rho = space_->reference();
  moves_.begin(state.x);
  bool moved = false;
  double u = state.potential;
  for (int i = 0; i < n_; ++i) {
    const double psi_old = moves_.psi(i);
    rho.sample(stream, proposal_);
    const double u_new = moves_.potential_replacing(i, proposal_);
    const double psi_new = moves_.psi_tried();
    // Uniform drawn for every proposal, so the stream's use does not depend on the outcome.
    const double log_u = std::log(stream.uniform());
    const double log_ratio = u - u_new + psi_new - psi_old;
    if (!in_warmup_) ++proposed_;
    if (std::isfinite(u_new) && log_u < log_ratio) {
      moves_.keep();
      u = u_new;
      moved = true;
      if (!in_warmup_) ++accepted_;
    }
  }
  // The target at the N pseudo-samples, then at the N proposals: two gradients of the space.
  stats.n_gradient_evals += 2;
  if (moved) {
    state.x = moves_.state();
    state.potential = moves_.potential_and_gradient(state.grad);
    stats.accepted = true;
  }
  return stats;
}

void ReferenceRefreshKernel::report_estimates(std::map<std::string, double>& estimates) const {
  inner_->report_estimates(estimates);
  estimates["reference_refresh_proposed"] = static_cast<double>(proposed_);
  if (proposed_ > 0)
    estimates["reference_refresh_accept_rate"] =
        static_cast<double>(accepted_) / static_cast<double>(proposed_);
}

void ReferenceRefreshKernel::save_state(pemc::v1::KernelState& state) const {
  inner_->save_state(state);
  auto& counts = (*state.mutable_ints())["reference_refresh"];
  counts.clear_values();
  counts.add_values(proposed_);
  counts.add_values(accepted_);
}

void ReferenceRefreshKernel::restore_state(const pemc::v1::KernelState& state) {
  inner_->restore_state(state);
  const auto it = state.ints().find("reference_refresh");
  if (it == state.ints().end() || it->second.values_size() != 2)
    throw ConfigError("checkpoint: the kernel state has no reference refresh counts");
  proposed_ = it->second.values(0);
  accepted_ = it->second.values(1);
}

}  // namespace pemc::extended
