#include "extended/repeated_transition_kernel.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace pemc::extended {

RepeatedTransitionKernel::RepeatedTransitionKernel(kernels::KernelPtr inner, int sweeps)
    : inner_(std::move(inner)), sweeps_(sweeps) {
  if (!inner_) throw ConfigError("repeated transitions: no kernel to repeat");
  if (sweeps_ < 1)
    throw ConfigError("repeated transitions: sweeps per draw must be >= 1, got " +
                      std::to_string(sweeps_));
}

kernels::TransitionStats RepeatedTransitionKernel::transition(kernels::ChainState& state,
                                                              rng::Stream& stream) {
  const int k = in_warmup_ ? 1 : sweeps_;
  kernels::TransitionStats total;
  double accept_sum = 0.0;
  for (int s = 0; s < k; ++s) {
    // Every sweep draws from the same transition stream, continuing where the previous one
    // stopped (the stream is a counter-based generator; successive draws are independent).
    const kernels::TransitionStats st = inner_->transition(state, stream);
    accept_sum += st.accept_stat;
    total.accepted = total.accepted || st.accepted;
    total.step_size = st.step_size;
    total.n_leapfrog += st.n_leapfrog;
    total.tree_depth = std::max(total.tree_depth, st.tree_depth);
    total.divergent = total.divergent || st.divergent;
    total.nonfinite = total.nonfinite || st.nonfinite;
    total.energy = st.energy;
    total.n_gradient_evals += st.n_gradient_evals;
  }
  total.accept_stat = accept_sum / k;
  return total;
}

void RepeatedTransitionKernel::begin_warmup(std::int64_t n_warmup) {
  in_warmup_ = true;
  inner_->begin_warmup(n_warmup);
}

void RepeatedTransitionKernel::end_warmup() {
  in_warmup_ = false;
  inner_->end_warmup();
}

void RepeatedTransitionKernel::report_estimates(std::map<std::string, double>& estimates) const {
  inner_->report_estimates(estimates);
  if (sweeps_ > 1) estimates["sweeps_per_draw"] = static_cast<double>(sweeps_);
}

}  // namespace pemc::extended
