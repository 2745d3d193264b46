#pragma once
// The No-U-Turn Sampler as Stan implements it (base_nuts, Stan >= 2.26; Hoffman & Gelman 2014 with
// Betancourt 2017's refinements):
//  - the trajectory doubles in a random direction until a U-turn, a divergence or max_tree_depth;
//  - multinomial sampling of the returned point: uniform-in-subtree when two sibling subtrees merge,
//    biased progressive sampling (favouring the new subtree) at the top level;
//  - the generalised no-U-turn criterion on the summed momenta rho with velocities p# = M^{-1} p at
//    the subtree ends, plus the extra checks across merged subtrees (left rho + first momentum of
//    the right subtree, and vice versa) that catch U-turns straddling the merge;
//  - a subtree is abandoned (divergent) when H - H0 > max_energy_error or the potential is not finite;
//  - accept_stat = mean over every leapfrog state of min(1, exp(H0 - H)) (step-size adaptation).
//
// All work vectors (both ends of the trajectory, the proposals, and one scratch set per recursion
// depth) are members sized at construction: a transition never touches the heap, so the per-gradient
// overhead stays small when the gradient itself costs about a microsecond.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "adapt/warmup_adapter.hpp"
#include "hmc/hamiltonian.hpp"
#include "hmc/metric.hpp"
#include "hmc/phase_point.hpp"
#include "kernels/kernel.hpp"
#include "kernels/plain_state.hpp"  // save_state/restore_state helpers

namespace pemc::kernels {

namespace detail {
// A sum of multinomial weights exp(H0 - H), held as s * exp(m). m stays 0 while the sums fit in
// a double (always, unless some |H - H0| > 500), so merging subtrees is an addition and a
// division instead of Stan's log-sum-exp (an exp and a log1p per merge): the same probabilities,
// to rounding. A sum leaving the range is rebased (m += log s, s = 1).
struct NutsWeight {
  double m = 0.0;
  double s = 1.0;
};
}  // namespace detail

// Stan's default adapt_delta for NUTS.
inline constexpr double kNutsDefaultTargetAccept = 0.8;
inline constexpr int kNutsMaxTreeDepthLimit = 30;

struct NutsOptions {
  double step_size = 0.1;           // > 0 (initial value when adapting)
  int max_tree_depth = 10;          // in [1, kNutsMaxTreeDepthLimit]; at most 2^depth - 1 leapfrogs
  double max_energy_error = 1000.0; // divergence when H - H0 exceeds this (> 0)
  std::optional<adapt::WarmupAdapterOptions> adaptation;  // nullopt: no adaptation
};

class NutsKernel final : public Kernel {
 public:
  // Throws ConfigError for a non-positive step size or energy threshold, a tree depth outside
  // [1, 30], or a metric whose dimension differs from the target's.
  NutsKernel(targets::TargetPtr target, hmc::Metric metric, NutsOptions options);
  // The Hamiltonian points at metric_: a copy would point into the original.
  NutsKernel(const NutsKernel&) = delete;
  NutsKernel& operator=(const NutsKernel&) = delete;

  std::string name() const override { return "nuts"; }
  TransitionStats transition(ChainState& state, rng::Stream& stream) override;

  void begin_warmup(std::int64_t n_warmup) override;
  void adapt(std::int64_t warmup_iteration, const ChainState& state,
             const TransitionStats& stats) override;
  void end_warmup() override;
  double step_size() const override { return options_.step_size; }
  const hmc::Metric& metric() const { return metric_; }

  bool can_checkpoint() const override { return true; }
  void save_state(pemc::v1::KernelState& state) const override;
  void restore_state(const pemc::v1::KernelState& state) override;
  const NutsOptions& options() const { return options_; }

 private:
  // What the sampler keeps of a candidate point: enough to become the next ChainState.
  struct Candidate {
    Vector q, grad;
    double potential = 0.0, kinetic = 0.0;
    explicit Candidate(int dim = 0) : q(dim), grad(dim) {}
    void assign(const hmc::PhasePoint& z) {
      q = z.q;
      grad = z.grad;
      potential = z.potential;
      kinetic = z.kinetic;
    }
    // O(1): exchanges buffers, never allocates.
    void swap(Candidate& o) {
      q.swap(o.q);
      grad.swap(o.grad);
      std::swap(potential, o.potential);
      std::swap(kinetic, o.kinetic);
    }
  };
  // Momentum p and velocity p# = M^{-1} p at one end of a subtree.
  struct Edge {
    Vector p, p_sharp;
    explicit Edge(int dim = 0) : p(dim), p_sharp(dim) {}
  };
  // Scratch for one level of the recursion (index = the depth of the subtree being built).
  struct Level {
    Edge init_end, final_beg;
    Vector rho_init, rho_final;
    Candidate propose_final;
    explicit Level(int dim = 0)
        : init_end(dim), final_beg(dim), rho_init(dim), rho_final(dim), propose_final(dim) {}
  };

  using Weight = detail::NutsWeight;

  // Extends the trajectory from z_ by 2^depth leapfrog steps of signed size eps. On return `beg`
  // and `end` hold the subtree's first and last momenta (they may be the same object when
  // depth == 0), *rho (if given) the sum of its momenta, `propose` its multinomial sample and
  // sum_weight = sum exp(H0 - H) over its points. Returns false if the subtree diverged or
  // contains a U-turn (the caller then discards it).
  bool build_tree(int depth, double eps, rng::Stream& stream, Candidate& propose, Edge& beg,
                  Edge& end, Vector* rho, Weight& sum_weight);

  targets::TargetPtr target_;
  hmc::Metric metric_;
  NutsOptions options_;
  hmc::Hamiltonian hamiltonian_;
  std::optional<adapt::WarmupAdapter> adapter_;

  // Per-transition bookkeeping shared by the recursion.
  double h0_ = 0.0;
  int n_leapfrog_ = 0;
  double sum_metro_prob_ = 0.0;
  bool divergent_ = false;
  bool nonfinite_ = false;

  // Preallocated work space.
  hmc::PhasePoint z_, z_fwd_, z_bck_;
  Candidate sample_, propose_;
  Edge fwd_fwd_, fwd_bck_, bck_fwd_, bck_bck_;
  Vector rho_, rho_fwd_, rho_bck_;
  std::vector<Level> levels_;
};

}  // namespace pemc::kernels
