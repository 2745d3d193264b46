#include "extended/pseudo_extended_refresh.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace pemc::extended {

ReferenceRefreshKernel::ReferenceRefreshKernel(kernels::KernelPtr inner, targets::TargetPtr space,
                                               densities::DensityPtr reference, int n_pseudo)
    : inner_(std::move(inner)),
      space_(std::move(space)),
      reference_(std::move(reference)),
      n_(n_pseudo) {
  if (!inner_ || !space_ || !reference_)
    throw ConfigError("reference refresh kernel: no kernel, space or reference");
  d_ = reference_->dim();
  if (n_ < 1 || static_cast<std::int64_t>(n_) * d_ > space_->dim())
    throw ConfigError("reference refresh kernel: " + std::to_string(n_) + " pseudo-samples of " +
                      std::to_string(d_) + " dimensions do not fit a space of " +
                      std::to_string(space_->dim()));
  proposal_.resize(space_->dim());
}

kernels::TransitionStats ReferenceRefreshKernel::transition(kernels::ChainState& state,
                                                            rng::Stream& stream) {
  kernels::TransitionStats stats = inner_->transition(state, stream);
  bool moved = false;
  double u = state.potential;
  for (int i = 0; i < n_; ++i) {
    proposal_ = state.x;
    auto xi = proposal_.segment(static_cast<Eigen::Index>(i) * d_, d_);
    const double psi_old = reference_->potential(xi);
    reference_->sample(stream, xi);
    const double psi_new = reference_->potential(xi);
    const double u_new = space_->potential(proposal_);
    // Uniform drawn for every proposal, so the stream's use does not depend on the outcome.
    const double log_u = std::log(stream.uniform());
    const double log_ratio = u - u_new + psi_new - psi_old;
    if (!in_warmup_) ++proposed_;
    if (std::isfinite(u_new) && log_u < log_ratio) {
      state.x = proposal_;
      u = u_new;
      moved = true;
      if (!in_warmup_) ++accepted_;
    }
  }
  if (moved) {
    kernels::refresh(*space_, state);
    ++stats.n_gradient_evals;
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
