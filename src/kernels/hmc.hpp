#pragma once
// Hamiltonian Monte Carlo with a fixed number of leapfrog steps (Neal 2011; thesis Algorithm 6),
// optionally jittered step size and path length, unit/diagonal/dense metric, optional warmup
// adaptation of step size (dual averaging) and metric (Stan-style windows).
#include <optional>

#include "adapt/warmup_adapter.hpp"
#include "hmc/hamiltonian.hpp"
#include "hmc/leapfrog.hpp"
#include "hmc/metric.hpp"
#include "kernels/kernel.hpp"

namespace pemc::kernels {

struct HmcOptions {
  double step_size = 0.1;
  int n_leapfrog = 10;
  bool jitter_step_size = false;  // eps ~ U[0.9, 1.1] * step_size
  bool jitter_n_leapfrog = false; // L ~ U{1, ..., 2 n_leapfrog - 1} (mean n_leapfrog)
  std::optional<adapt::WarmupAdapterOptions> adaptation;  // nullopt: no adaptation
  // Find the first step size at the start of warmup (hmc/step_size_search.hpp), starting from
  // step_size, instead of using step_size as it is.
  bool search_step_size = false;
};

class HmcKernel final : public Kernel {
 public:
  HmcKernel(targets::TargetPtr target, hmc::Metric metric, HmcOptions options);
  // The Hamiltonian points at metric_: a copy would point into the original.
  HmcKernel(const HmcKernel&) = delete;
  HmcKernel& operator=(const HmcKernel&) = delete;

  std::string name() const override { return "hmc"; }
  TransitionStats transition(ChainState& state, rng::Stream& stream) override;

  void begin_warmup(std::int64_t n_warmup) override;
  void adapt(std::int64_t warmup_iteration, const ChainState& state,
             const TransitionStats& stats) override;
  void end_warmup() override;
  std::int64_t choose_initial_step_size(const ChainState& state, rng::Stream& stream) override;
  double step_size() const override { return options_.step_size; }
  const hmc::Metric& metric() const { return metric_; }

  bool can_checkpoint() const override { return true; }
  void save_state(pemc::v1::KernelState& state) const override;
  void restore_state(const pemc::v1::KernelState& state) override;

 private:
  // The whole trajectory with a unit metric for a target of compile-time dimension N (1-4), from
  // the chain state to the final kinetic energy: see hmc.cpp.
  template <int N>
  bool trajectory_fixed(const ChainState& state, rng::Stream& stream, double eps, int n_steps,
                        int& taken, double& h0);
  // The same for any dimension, metric and partition (this member's ranges only); `fused`: unit
  // metric on the whole vector, so each full kick and the drift after it go in one pass. Returns
  // false at the first non-finite potential (the kinetic energy is then not updated).
  bool trajectory(const ChainState& state, rng::Stream& stream, double eps, int n_steps,
                  bool fused, int& taken, double& h0);
  // The Metropolis step on the trajectory's end z_ (energy H0 at its start): moves state there
  // when accepted; fills the stats' acceptance, energy, divergence and non-finiteness.
  void accept_or_reject(ChainState& state, rng::Stream& stream, bool finite, double h0,
                        TransitionStats& stats);

  targets::TargetPtr target_;
  hmc::Metric metric_;
  HmcOptions options_;
  hmc::Hamiltonian hamiltonian_;
  hmc::PhasePoint z_;
  std::optional<adapt::WarmupAdapter> adapter_;
};

}  // namespace pemc::kernels
