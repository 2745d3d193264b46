#pragma once
// Kernel: one Markov transition that leaves a target density invariant.
// Kernels never call MPI or the logger; they report what happened in TransitionStats.
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/types.hpp"
#include "pemc/v1/checkpoint.pb.h"
#include "rng/stream.hpp"
#include "targets/target.hpp"

namespace pemc::kernels {

// The chain's current position with the potential and gradient cached there.
struct ChainState {
  Vector x;
  double potential = 0.0;
  Vector grad;
};

struct TransitionStats {
  double accept_stat = 0.0;   // Metropolis acceptance probability (HMC), mean over the tree (NUTS)
  bool accepted = false;      // the state moved
  double step_size = 0.0;
  int n_leapfrog = 0;
  int tree_depth = 0;
  bool divergent = false;
  bool nonfinite = false;     // a proposal had a non-finite potential and was rejected
  double energy = 0.0;        // Hamiltonian at the returned state
  std::int64_t n_gradient_evals = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual std::string name() const = 0;

  // One transition. state must be valid (finite potential, gradient at x) on entry and is on exit.
  virtual TransitionStats transition(ChainState& state, rng::Stream& stream) = 0;

  // Warmup adaptation hooks, called by the chain driver: begin_warmup once, adapt after every
  // warmup transition (iteration counts from 0), end_warmup once before sampling.
  virtual void begin_warmup(std::int64_t n_warmup) {}
  virtual void adapt(std::int64_t warmup_iteration, const ChainState& state,
                     const TransitionStats& stats) {}
  virtual void end_warmup() {}
  // Called by the chain driver once per chain, at the start of a fresh (not resumed) warmup,
  // before begin_warmup: a kernel configured to find its own first step size does so here, from
  // `state`, drawing from `stream` (the chain's adaptation stream). Returns the gradient
  // evaluations it spent.
  virtual std::int64_t choose_initial_step_size(const ChainState& state, rng::Stream& stream) {
    return 0;
  }

  virtual double step_size() const { return 0.0; }

  // Per-chain estimates the kernel accumulated (e.g. "log_z" of a tempering sampler), written to
  // the chain's summary at the end. Keys are documented by each kernel.
  virtual void report_estimates(std::map<std::string, double>& estimates) const {}

  // Kernels whose log Z is the log of a mean of independent weights (AIS: one per run): the
  // largest of those log weights, descending, as many as the chain's own Pareto tail fit uses,
  // so that a run can fit one tail to its chains' pooled weights (ChainSummary
  // .largest_log_weights, estimators/pooled_ais_weights.hpp). Empty for every other kernel.
  virtual std::vector<double> largest_log_weights() const { return {}; }

  // Running estimates of the target's mean and covariance (records.proto EstimatesSnapshot), for
  // kernels that estimate target expectations from weighted transitions (CT eq. (21), ST, AIS).
  // The chain driver calls track_moments() once, before warmup or restore_state, when it writes
  // snapshots, so kernels that would accumulate x x' only for them pay nothing otherwise; moments
  // tracked are part of the kernel's checkpoint state. report_moments: false when the kernel has
  // no such estimate (or no post-warmup transition yet).
  virtual void track_moments() {}
  virtual bool report_moments(Vector& mean, Matrix& covariance) const { return false; }
  // The base / reference density's mean and covariance and its log zeta (NaN when unknown), against
  // which the CT paper's Figure 2 normalises errors; false for kernels without one.
  virtual bool report_base(Vector& mean, Matrix& covariance, double& log_zeta) const {
    return false;
  }
  // How the kernel's reference (tempering) or base (continuous tempering) density was obtained,
  // e.g. "mixture over 2 modes (Laplace shares 0.5, 0.5)", for the run log; empty for kernels
  // without a fitted one.
  virtual std::string fit_description() const { return {}; }

  // Checkpoint/resume (docs/checkpointing.md): everything the next transitions depend on
  // (step size, metric, adaptation windows, estimator sums, counters). Called between transitions.
  // Restoring into a kernel built from the same config (and, when the state was saved during
  // warmup, after begin_warmup with the same n_warmup) makes it continue exactly as the saved one.
  // A kernel whose chain spans a group may use the group inside these (every member calls them).
  virtual bool can_checkpoint() const { return false; }
  virtual void save_state(pemc::v1::KernelState& state) const {
    throw ConfigError("checkpoint: the " + name() + " kernel cannot save its state");
  }
  virtual void restore_state(const pemc::v1::KernelState& state) {
    throw ConfigError("checkpoint: the " + name() + " kernel cannot restore its state");
  }
};

using KernelPtr = std::unique_ptr<Kernel>;

// Evaluates potential and gradient at state.x (one gradient evaluation); a NaN becomes +inf.
inline void refresh(const targets::Target& target, ChainState& state) {
  state.grad.resize(target.dim());
  double u = target.potential_and_gradient(state.x, state.grad);
  if (!(u < std::numeric_limits<double>::infinity()) || !state.grad.allFinite())
    u = std::numeric_limits<double>::infinity();
  state.potential = u;
}

}  // namespace pemc::kernels
