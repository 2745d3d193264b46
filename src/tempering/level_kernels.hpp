#pragma once
// Local kernels for a ladder with many levels (ST, AIS: hundreds to thousands of betas).
//
// One kernel per level would leave each with too few transitions to adapt its step size, so the
// levels are grouped into n_bins contiguous bins; each bin has one kernel on its own
// TemperedTarget whose beta is set to the level's before every use. With n_bins = n_levels this is
// one kernel per level. During warmup every transition of a bin's kernel feeds that kernel's
// adaptation (its own iteration counter).
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/kernel.hpp"
#include "rng/stream.hpp"
#include "tempering/parallel_tempering.hpp"  // LocalKernelFactory
#include "adapt/state_io.hpp"
#include "tempering/tempered_target.hpp"

namespace pemc::tempering {

class LevelKernels {
 public:
  LevelKernels(targets::TargetPtr target, ReferencePtr reference, const LocalKernelFactory& factory,
               int n_levels, int n_bins);

  int n_bins() const { return static_cast<int>(kernels_.size()); }
  int bin_of(int level) const;

  struct Summary {
    double sum_accept = 0.0;
    int n_leapfrog = 0;
    bool divergent = false;
    bool nonfinite = false;
    bool moved = false;
    std::int64_t n_gradient_evals = 0;  // the kernel's, plus the PathPoint refresh if any
  };
  // n_steps transitions of the level's kernel at inverse temperature beta, starting from and
  // updating p. During warmup (begin_warmup called, end_warmup not yet) each transition also
  // adapts the kernel.
  Summary run(int level, double beta, PathPoint& p, int n_steps, rng::Stream& stream);

  // n_transitions_per_bin: an upper bound on the transitions any one bin will see in warmup.
  void begin_warmup(std::int64_t n_transitions_per_bin);
  void end_warmup();
  double step_size(int level) const { return kernels_[bin_of(level)]->step_size(); }

  // Checkpoint: every bin's kernel and adaptation counter. Restore after begin_warmup when the
  // state was saved in warmup (the kernels' adapters must exist).
  bool can_checkpoint() const;
  void save_state(pemc::v1::KernelState& s) const;
  void restore_state(const pemc::v1::KernelState& s);

 private:
  int n_levels_;
  std::vector<std::shared_ptr<TemperedTarget>> targets_;
  std::vector<kernels::KernelPtr> kernels_;
  std::vector<std::int64_t> counters_;
  bool warmup_ = false;
  kernels::ChainState work_;
};


// Checkpoint helpers for a PathPoint (x, phi, psi and both gradients).
inline void put_path_point(pemc::v1::KernelState& s, const std::string& key, const PathPoint& p) {
  auto& c = adapt::put_child(s, key);
  c.set_kind("path_point");
  adapt::put_vector(c, "x", p.x);
  adapt::put_vector(c, "grad_phi", p.grad_phi);
  adapt::put_vector(c, "grad_psi", p.grad_psi);
  adapt::put_real(c, "phi", p.phi);
  adapt::put_real(c, "psi", p.psi);
}
inline void get_path_point(const pemc::v1::KernelState& s, const std::string& key, PathPoint& p) {
  const auto& c = adapt::get_child(s, key);
  adapt::get_vector(c, "x", p.x);
  adapt::get_vector(c, "grad_phi", p.grad_phi, p.x.size());
  adapt::get_vector(c, "grad_psi", p.grad_psi, p.x.size());
  p.phi = adapt::get_real(c, "phi");
  p.psi = adapt::get_real(c, "psi");
}

}  // namespace pemc::tempering
