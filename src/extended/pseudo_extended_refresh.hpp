#pragma once
// Independence moves from the reference for pseudo-extended on the reference path
// (pseudo_extended_reference.hpp). When rho is a mixture over separated modes, gamma^beta
// rho^(1 - beta) keeps rho's barriers at every temperature, so HMC alone moves a pseudo-sample
// within the mode it is in, however small its beta. After each transition of the wrapped kernel
// this kernel therefore proposes, for every pseudo-sample i in turn, a fresh x_i' ~ rho (its eta_i
// and the other pseudo-samples unchanged) and accepts it with the Metropolis-Hastings probability
// of an independence proposal on that block,
//     min(1, exp(U(z) - U(z') + psi(x_i') - psi(x_i))),
// U the extended potential and psi = -log rho. Each such move leaves the extended target invariant,
// so the composition does. A pseudo-sample at small beta (its q ≈ rho) accepts almost every
// proposal and so reaches every mode of rho; at beta near 1 it accepts as often as rho matches the
// target. Cost: 2N target gradients per transition (SingleSampleMoves,
// pseudo_extended_reference.hpp: the target at the N pseudo-samples once, then at each proposal),
// counted as two gradients of the extended space; evaluating U afresh for each proposal would
// cost N^2.
//
// The wrapped kernel's statistics are reported unchanged (its accept_stat drives step-size
// adaptation), with `accepted` also true when a refresh moved the state and the extra gradient
// counted. Post-warmup proposals and acceptances are the chain's estimates
// "reference_refresh_proposed" and "reference_refresh_accept_rate".
#include <cstdint>
#include <memory>
#include <string>

#include "densities/density.hpp"
#include "extended/pseudo_extended_reference.hpp"
#include "kernels/kernel.hpp"
#include "targets/target.hpp"

namespace pemc::extended {

class ReferenceRefreshKernel final : public kernels::Kernel {
 public:
  // space: the reference-path pseudo-extended target (its rho proposes). Throws ConfigError for
  // null parts.
  ReferenceRefreshKernel(kernels::KernelPtr inner,
                         std::shared_ptr<const ReferencePathPseudoExtended> space);

  std::string name() const override { return inner_->name(); }
  kernels::TransitionStats transition(kernels::ChainState& state, rng::Stream& stream) override;
  void begin_warmup(std::int64_t n_warmup) override {
    in_warmup_ = true;
    inner_->begin_warmup(n_warmup);
  }
  void adapt(std::int64_t warmup_iteration, const kernels::ChainState& state,
             const kernels::TransitionStats& stats) override {
    inner_->adapt(warmup_iteration, state, stats);
  }
  void end_warmup() override {
    in_warmup_ = false;
    inner_->end_warmup();
  }
  std::int64_t choose_initial_step_size(const kernels::ChainState& state,
                                        rng::Stream& stream) override {
    return inner_->choose_initial_step_size(state, stream);
  }
  double step_size() const override { return inner_->step_size(); }
  void report_estimates(std::map<std::string, double>& estimates) const override;
  bool can_checkpoint() const override { return inner_->can_checkpoint(); }
  // The wrapped kernel's state plus the counters (ints "reference_refresh").
  void save_state(pemc::v1::KernelState& state) const override;
  void restore_state(const pemc::v1::KernelState& state) override;

 private:
  kernels::KernelPtr inner_;
  std::shared_ptr<const ReferencePathPseudoExtended> space_;
  SingleSampleMoves moves_;
  int n_ = 0, d_ = 0;
  bool in_warmup_ = false;
  std::int64_t proposed_ = 0, accepted_ = 0;  // after warmup
  Vector proposal_;                            // scratch: one pseudo-sample's proposal
};

}  // namespace pemc::extended
