#pragma once
// Several transitions of a kernel per recorded draw (continuous tempering's `sweeps_per_draw`,
// tempering.proto). After warmup every call to transition() runs the wrapped kernel k times; the
// wrapped kernel sees each of them as an ordinary transition, so a continuous-tempering kernel's
// Rao-Blackwellised sums (RbTracker) take every internal sweep's state (each is a state of the
// Markov chain, so the sums stay valid MCMC averages), while the chain driver records only every
// k-th state. During warmup a call is a single transition, so step-size/metric adaptation sees
// every sweep at its own warmup iteration, as without the wrapper.
//
// Stats of a k-sweep transition: n_gradient_evals, n_leapfrog summed; accept_stat the mean;
// accepted if any sweep moved; divergent / nonfinite if any sweep was; tree_depth the largest;
// step_size and energy from the last sweep.
#include <cstdint>
#include <string>

#include "kernels/kernel.hpp"

namespace pemc::extended {

class RepeatedTransitionKernel final : public kernels::Kernel {
 public:
  // Throws ConfigError when inner is null or sweeps < 1.
  RepeatedTransitionKernel(kernels::KernelPtr inner, int sweeps);

  std::string name() const override { return inner_->name(); }
  kernels::TransitionStats transition(kernels::ChainState& state, rng::Stream& stream) override;
  void begin_warmup(std::int64_t n_warmup) override;
  void adapt(std::int64_t warmup_iteration, const kernels::ChainState& state,
             const kernels::TransitionStats& stats) override {
    inner_->adapt(warmup_iteration, state, stats);
  }
  void end_warmup() override;
  double step_size() const override { return inner_->step_size(); }
  void report_estimates(std::map<std::string, double>& estimates) const override;
  void track_moments() override { inner_->track_moments(); }
  bool report_moments(Vector& mean, Matrix& covariance) const override {
    return inner_->report_moments(mean, covariance);
  }
  bool report_base(Vector& mean, Matrix& covariance, double& log_zeta) const override {
    return inner_->report_base(mean, covariance, log_zeta);
  }
  std::string fit_description() const override { return inner_->fit_description(); }

  // No state of its own (the warmup flag follows begin_warmup/end_warmup, which the checkpoint
  // contract replays): checkpoints are the wrapped kernel's.
  bool can_checkpoint() const override { return inner_->can_checkpoint(); }
  void save_state(pemc::v1::KernelState& state) const override { inner_->save_state(state); }
  void restore_state(const pemc::v1::KernelState& state) override { inner_->restore_state(state); }

  int sweeps() const { return sweeps_; }
  const kernels::Kernel& inner() const { return *inner_; }

 private:
  kernels::KernelPtr inner_;
  int sweeps_;
  bool in_warmup_ = false;
};

}  // namespace pemc::extended
