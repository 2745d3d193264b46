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
// Cost per transition. On cheap targets the work besides the gradients decides the speed: the 2-D
// Kou mixture takes ~2.7 gradients of ~150 ns per transition, so every 40 ns per transition is 10%
// of the overhead ratio. Hence:
//  - the integrator runs on the two trajectory ends in place; everything that depends on the
//    (coin-flip) direction is indexed by it rather than branched on;
//  - a subtree's last momentum is read from the point just computed ("tip"): only first momenta
//    and the left halves' last momenta are stored;
//  - candidate samples live in a small pool and are exchanged by index, selected arithmetically:
//    the multinomial choices are coin flips, and GCC compiles `c ? a : b` to jumps;
//  - for dimensions 1-4 the stored momenta, sums and candidates are fixed-size vectors (about
//    1300 fewer instructions per transition at d = 2 than dynamic ones), and with a unit or
//    diagonal metric (unpartitioned) so are the momentum draw, the leapfrog and the no-U-turn
//    dot products (hmc::leapfrog_step_fixed, Hamiltonian::sample_momentum_fixed: the same
//    arithmetic, bit for bit; ~300 fewer instructions per transition at d = 2 with a unit
//    metric, ~1100 with a diagonal one);
//  - the draws are packed so that a tree of depth <= 3 needs no Philox block besides the
//    momentum's: the multinomial choices compare 16-bit prefixes of their uniforms, completed
//    from the stream only when the prefix leaves the answer open (detail::NutsDraws);
//  - the leaf's weight exp(H0 - H) uses core/scalar_exp (fused, table-driven): its latency sits on
//    the path from one leaf to the next selection, so a shorter exp shortens the transition;
//  - everything is sized at construction: a transition never touches the heap.
// What is left is latency at the transition boundary (the tree's exit is a mispredicted branch,
// and the selection and the next momentum draw are dependent chains that meet at the next
// leapfrog), spread over many short pieces of code. docs/performance.md has the current overhead
// figures, and tests/bench/nuts_floor.hpp the leanest exact NUTS we could write.
// The choices are Stan's "uniform < p", exact, in Stan's order (one per subtree merge, one at the
// top level when the new subtree is lighter); the directions are bits of one word. Given the
// same draws the kernel builds the same trees as a transliteration of Stan (nuts_reference_test).
#include <array>
#include <cstdint>
#include <memory>
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
#include "rng/stream.hpp"

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
// Preallocated work space for vectors of compile-time size N (Eigen::Dynamic: any size).
template <int N>
struct NutsWork;

// The random draws of one transition after the momentum: the direction of each doubling, and the
// multinomial choices, each "u < p" for a fresh uniform u (one per subtree merge, one per doubling
// at the top level when the new subtree is the lighter), in Stan's order. The uniforms are those
// of rng::Stream::uniform() (the centres of 2^52 equal cells of (0, 1)), but a choice needs all 52
// bits only when p falls inside the 2^-16-wide cell of its first 16 bits (probability <= 2^-16):
// so the first 16 bits come packed and the other 36 from the stream only then. The comparison
// stays exact. Packed so that a tree of up to 7 choices (depth <= 3) needs no Philox block besides
// the momentum's (at d = 2: two normals and these two words; with one 52-bit uniform per word,
// 44 % of the 2-D Kou mixture's transitions needed a second block, ~165 instructions):
//  - the first word's low 12 bits are the directions of doublings 0-11 (1 = forward), its bits
//    12-59 the first three choices' 16-bit prefixes (bits 12-27 the first);
//  - the second word holds the next four prefixes (bits 0-15 the fourth);
//  - later choices use whole uniforms from the stream, and the direction of a doubling past the
//    12th (a tree of > 4095 steps) a uniform > 1/2; a prefix's missing 36 bits are the top 36 of
//    the stream's next word, taken when needed.
// Disjoint bits of Philox words are independent, and which word supplies what depends only on
// earlier draws, so every draw is exact and independent of the others.
class NutsDraws {
 public:
  static constexpr int kDirectionBits = 12;
  static constexpr int kPrefixBits = 16;
  static constexpr int kPrefixesInFirstWord = (64 - kDirectionBits) / kPrefixBits;  // 3
  static constexpr int kPackedChoices = kPrefixesInFirstWord + 64 / kPrefixBits;     // 7

  explicit NutsDraws(rng::Stream& stream) : stream_(stream) {
    const std::uint64_t first = stream.bits();
    const std::uint64_t second = stream.bits();
    directions_ = first;
    low_ = first >> kDirectionBits;  // prefixes 0-2 from bit 0
    high_ = second;                  // prefixes 3-6 from bit 0
  }
  bool forward(int doubling) {
    if (doubling < kDirectionBits) return (directions_ >> doubling) & 1u;
    return stream_.uniform() > 0.5;
  }
  // u < p for a fresh uniform u: true with probability p (p in [0, 1]; false for NaN p).
  bool below(double p) {
    if (next_ < kPackedChoices) {
      const std::uint64_t prefix = prefix_at(next_++);
      return prefix_below(prefix, p);
    }
    return stream_.uniform() < p;
  }
  // Stan's top-level choice: true with probability min(1, ratio), drawing a uniform only when
  // !(ratio > 1). Nothing branches on that coin flip (rng::Stream::uniform_if).
  bool accept(double ratio) {
    const bool draw = !(ratio > 1.0);
    if (next_ < kPackedChoices) {
      const std::uint64_t prefix = prefix_at(next_);
      next_ += static_cast<int>(draw);
      return prefix_below(prefix, ratio);  // ratio > 1 lies above every cell: true, no fetch
    }
    return stream_.uniform_if(draw) < ratio;  // u = 0 when not drawn
  }

 private:
  std::uint64_t prefix_at(int k) const {
    // Choices 0-2 from low_, 3-6 from high_ (k is known by position in the tree: predictable).
    const bool first_word = k < kPrefixesInFirstWord;
    const int shift = (first_word ? k : k - kPrefixesInFirstWord) * kPrefixBits;
    return ((first_word ? low_ : high_) >> shift) & ((std::uint64_t{1} << kPrefixBits) - 1);
  }
  // u < p where u's top 16 bits are `prefix`: the cell's centres run from prefix * 2^-16 + 2^-53
  // to (prefix + 1) * 2^-16 - 2^-53 (both exact); only p between them needs the other 36 bits.
  bool prefix_below(std::uint64_t prefix, double p) {
    const double base = static_cast<double>(prefix) * 0x1.0p-16;
    const bool lowest_below = base + 0x1.0p-53 < p;
    const bool highest_below = base + (0x1.0p-16 - 0x1.0p-53) < p;
    if (lowest_below != highest_below) [[unlikely]]
      return completed_below(prefix, p);
    return lowest_below;
  }
  // u = to_uniform of a word whose top bits are the prefix and whose next 36 are the top 36 of
  // the stream's next word (to_uniform reads the top 52 bits).
  [[gnu::noinline]] bool completed_below(std::uint64_t prefix, double p) {
    const std::uint64_t word = (prefix << (64 - kPrefixBits)) | (stream_.bits() >> kPrefixBits);
    return rng::Stream::to_uniform(word) < p;
  }

  rng::Stream& stream_;
  std::uint64_t directions_;
  std::uint64_t low_, high_;
  int next_ = 0;
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
  // Find the first step size at the start of warmup (hmc/step_size_search.hpp), starting from
  // step_size, instead of using step_size as it is.
  bool search_step_size = false;
};

class NutsKernel final : public Kernel {
 public:
  // Throws ConfigError for a non-positive step size or energy threshold, a tree depth outside
  // [1, 30], or a metric whose dimension differs from the target's.
  NutsKernel(targets::TargetPtr target, hmc::Metric metric, NutsOptions options);
  ~NutsKernel() override;
  // The Hamiltonian points at metric_: a copy would point into the original.
  NutsKernel(const NutsKernel&) = delete;
  NutsKernel& operator=(const NutsKernel&) = delete;

  std::string name() const override { return "nuts"; }
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
  const NutsOptions& options() const { return options_; }

 private:
  using Weight = detail::NutsWeight;

  // The transition, on the work space of the matching vector size.
  template <int N>
  TransitionStats run(detail::NutsWork<N>& w, ChainState& state, rng::Stream& stream);
  // Both ends at state with a fresh momentum, the per-transition counters reset; returns the
  // pool slot of the current sample (the initial point).
  template <int N>
  int start_trajectory(detail::NutsWork<N>& w, const ChainState& state, rng::Stream& stream);
  // The no-U-turn criterion over the whole trajectory after a doubling (w.rho its summed
  // momenta) and, from the second doubling on, across the join of its two parts.
  template <int N>
  bool no_u_turn_across_parts(const detail::NutsWork<N>& w, int depth) const;
  // The stats, and state moved to the sample if the sampler moved; releases the sample's slot.
  template <int N>
  TransitionStats finish_transition(detail::NutsWork<N>& w, ChainState& state, int sample,
                                    bool moved, int depth);
  // Extends the trajectory from z (in place) by 2^depth leapfrog steps of signed size eps. On
  // return `beg` holds the subtree's first momentum and velocity (its last ones are z's), `rho`
  // the sum of its momenta, `propose` the pool slot of its multinomial sample and sum_weight =
  // sum exp(H0 - H) over its points. Returns false if the subtree diverged or contains a U-turn
  // (the caller then discards it; no pool slot is then held for it).
  template <int N, class Edge, class Vec>
  bool build_tree(detail::NutsWork<N>& w, hmc::PhasePoint& z, int depth, double eps,
                  detail::NutsDraws& draws, Edge& beg, Vec& rho, int& propose,
                  Weight& sum_weight);
  // One leapfrog step of z: accounting, divergence, and the point's weight; stores the point as
  // a candidate in a fresh pool slot. Returns false on divergence.
  template <int N>
  bool leaf(detail::NutsWork<N>& w, hmc::PhasePoint& z, double eps, int& slot,
            Weight& weight);

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
  // Fixed-size work with a unit or diagonal metric on an unpartitioned space: the momentum draw
  // and the leapfrog run on fixed-size vectors (hmc::leapfrog_step_fixed), bit for bit the same.
  bool fixed_leapfrog_ = false;

  // The trajectory's two ends, backward and forward (full phase points: the integrator continues
  // from them), indexed by detail::kBackward / kForward.
  std::array<hmc::PhasePoint, 2> ends_;
  // Exactly one of these exists: fixed-size work space for dimensions 1-4, else dynamic.
  std::unique_ptr<detail::NutsWork<1>> work1_;
  std::unique_ptr<detail::NutsWork<2>> work2_;
  std::unique_ptr<detail::NutsWork<3>> work3_;
  std::unique_ptr<detail::NutsWork<4>> work4_;
  std::unique_ptr<detail::NutsWork<Eigen::Dynamic>> work_;
};

}  // namespace pemc::kernels
