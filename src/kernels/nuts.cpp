#include "kernels/nuts.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "core/scalar_exp.hpp"
#include "hmc/leapfrog.hpp"
#include "hmc/step_size_search.hpp"

namespace pemc::kernels {
namespace {

// Generalised no-U-turn criterion (Betancourt 2017, eq. 4.2 with velocities): the trajectory may
// keep growing while both end velocities still point along the summed momentum rho. Through the
// Hamiltonian: its dot products are collective when the space is partitioned over a group.
// Fixed-size vectors on an unpartitioned space: the Hamiltonian's arithmetic inline (a call per
// criterion costs more than two 2-D dot products; NUTS checks ~3 criteria per merge).
template <class Minus, class Plus, class Rho>
inline bool no_u_turn(const hmc::Hamiltonian& h, const Eigen::MatrixBase<Minus>& p_sharp_minus,
                      const Eigen::MatrixBase<Plus>& p_sharp_plus,
                      const Eigen::MatrixBase<Rho>& rho) {
  if constexpr (Rho::SizeAtCompileTime != Eigen::Dynamic) {
    if (!h.partitioned())
      return (p_sharp_plus.dot(rho) > 0.0) & (p_sharp_minus.dot(rho) > 0.0);
  }
  return h.no_u_turn(p_sharp_minus, p_sharp_plus, rho);
}

// Weights s e^m with s in [kWeightMin, kWeightMax] need no rebasing: sums of up to 2^30 such
// terms stay finite, and ratios of two of them are normal numbers.
constexpr double kWeightMax = 1e250;
constexpr double kWeightMin = 1e-250;
// |log weight| below this: exp() is a normal number comfortably inside [kWeightMin, kWeightMax].
constexpr double kLinearLogWeight = 500.0;

}  // namespace

// The weight of one point, exp(log_w), with e = exp(log_w) already computed by the caller.
inline detail::NutsWeight leaf_weight(double log_w, double e) {
  if (log_w > -kLinearLogWeight && log_w < kLinearLogWeight) return {0.0, e};
  return {log_w, 1.0};
}

// a + b; *share_b (if given) = b / (a + b). The general case: different scales, or a sum
// leaving the linear range (some |H - H0| > kLinearLogWeight). Out of line: it is rare.
[[gnu::noinline]] inline detail::NutsWeight add_weights_rescaled(const detail::NutsWeight& a,
                                                                 const detail::NutsWeight& b,
                                                                 double* share_b) {
  detail::NutsWeight out;
  double sa = a.s, sb = b.s;
  out.m = a.m > b.m ? a.m : b.m;
  sa *= std::exp(a.m - out.m);
  sb *= std::exp(b.m - out.m);
  out.s = sa + sb;
  if (share_b) *share_b = sb / out.s;
  if (!(out.s <= kWeightMax && out.s >= kWeightMin)) {
    out.m += std::log(out.s);
    out.s = 1.0;
  }
  return out;
}

inline detail::NutsWeight add_weights(const detail::NutsWeight& a, const detail::NutsWeight& b,
                                      double* share_b) {
  const double s = a.s + b.s;
  if (a.m != b.m || !(s <= kWeightMax && s >= kWeightMin))
    return add_weights_rescaled(a, b, share_b);
  if (share_b) *share_b = b.s / s;
  return {a.m, s};
}

// b / a.
inline double weight_ratio(const detail::NutsWeight& b, const detail::NutsWeight& a) {
  const double r = b.s / a.s;
  return b.m == a.m ? r : r * std::exp(b.m - a.m);
}

namespace {

// v as a vector of compile-time size N (a no-op view for N = Dynamic): copies between the
// phase points' dynamic vectors then compile to a few moves for small N.
template <int N>
auto sized(Vector& v) {
  if constexpr (N == Eigen::Dynamic)
    return Eigen::Map<Vector>(v.data(), v.size());
  else
    return Eigen::Map<Eigen::Matrix<double, N, 1>>(v.data());
}
template <int N>
auto sized(const Vector& v) {
  if constexpr (N == Eigen::Dynamic)
    return Eigen::Map<const Vector>(v.data(), v.size());
  else
    return Eigen::Map<const Eigen::Matrix<double, N, 1>>(v.data());
}

}  // namespace

namespace detail {

// Indices of the trajectory's two sides.
constexpr int kBackward = 0;
constexpr int kForward = 1;

template <int N>
struct NutsWork {
  using Vec = Eigen::Matrix<double, N, 1>;
  // Momentum p and velocity p# = M^{-1} p at one end of a subtree.
  struct Edge {
    Vec p, p_sharp;
    explicit Edge(int dim) : p(Vec::Zero(dim)), p_sharp(Vec::Zero(dim)) {}
  };
  // What the sampler keeps of a candidate point: enough to become the next ChainState.
  struct Candidate {
    Vec q, grad;
    double potential = 0.0, kinetic = 0.0;
    explicit Candidate(int dim) : q(Vec::Zero(dim)), grad(Vec::Zero(dim)) {}
  };
  // Scratch for one level of the recursion (index = the depth of the subtree being built): the
  // left half's last edge, the right half's first edge, and each half's summed momenta.
  struct Level {
    Edge init_end, final_beg;
    Vec rho_init, rho_final;
    explicit Level(int dim)
        : init_end(dim), final_beg(dim), rho_init(Vec::Zero(dim)), rho_final(Vec::Zero(dim)) {}
  };

  static constexpr bool kFixed = N != Eigen::Dynamic;

  NutsWork(int dim, int max_tree_depth)
      : tip(kFixed ? dim : 0), outer{Edge(dim), Edge(dim)}, inner{Edge(dim), Edge(dim)},
        rho(Vec::Zero(dim)), part_rho{Vec::Zero(dim), Vec::Zero(dim)} {
    levels.reserve(static_cast<std::size_t>(max_tree_depth));
    for (int i = 0; i < max_tree_depth; ++i) levels.emplace_back(dim);
    // Live candidates: the current sample, one pending left-half sample per recursion level
    // (at most max_tree_depth - 1) and the point just computed.
    const int n_slots = max_tree_depth + 2;
    candidates.reserve(static_cast<std::size_t>(n_slots));
    for (int i = 0; i < n_slots; ++i) candidates.emplace_back(dim);
    free_slots.resize(static_cast<std::size_t>(n_slots));
  }

  // Slot bookkeeping: a stack of free indices into `candidates`. Every path through a transition
  // releases what it acquired; reset_slots() only repairs the pool after an exception escaped a
  // transition (e.g. from a user's target).
  bool all_slots_free() const { return n_free == static_cast<int>(free_slots.size()); }
  void reset_slots() {
    n_free = static_cast<int>(free_slots.size());
    for (int i = 0; i < n_free; ++i) free_slots[static_cast<std::size_t>(i)] = i;
  }
  int acquire() { return free_slots[static_cast<std::size_t>(--n_free)]; }
  void release(int slot) { free_slots[static_cast<std::size_t>(n_free++)] = slot; }

  // The point the integrator has just computed, as the tree code reads it: with fixed-size
  // vectors a copy taken once per leaf (later reads are then fixed-size), with dynamic ones z.
  void note_tip(const hmc::PhasePoint& z) {
    if constexpr (kFixed) {
      tip.p = z.p;
      tip.p_sharp = z.velocity;
    }
  }
  const Vec& tip_p(const hmc::PhasePoint& z) const {
    if constexpr (kFixed) return tip.p; else return z.p;
  }
  const Vec& tip_sharp(const hmc::PhasePoint& z) const {
    if constexpr (kFixed) return tip.p_sharp; else return z.velocity;
  }
  void edge_at_tip(Edge& e, const hmc::PhasePoint& z) const {
    e.p = tip_p(z);
    e.p_sharp = tip_sharp(z);
  }
  void store_candidate(int slot, const hmc::PhasePoint& z) {
    Candidate& c = candidates[static_cast<std::size_t>(slot)];
    c.q = z.q;
    c.grad = z.grad;
    c.potential = z.potential;
    c.kinetic = z.kinetic;
  }

  Edge tip;  // fixed sizes only
  // The trajectory as two parts, backward (index kBackward) and forward (kForward) of where the
  // last doubling joined them: each part's outer edge (Stan's p_bck_bck, p_fwd_fwd), its inner
  // edge at the join (p_bck_fwd, p_fwd_bck) and its summed momenta; rho sums the whole.
  std::array<Edge, 2> outer, inner;
  Vec rho;
  std::array<Vec, 2> part_rho;
  std::vector<Level> levels;
  std::vector<Candidate> candidates;
  std::vector<int> free_slots;
  int n_free = 0;
};

}  // namespace detail

namespace {

NutsOptions validated(NutsOptions o, int target_dim, int metric_dim) {
  if (!(o.step_size > 0.0) || !std::isfinite(o.step_size))
    throw ConfigError("nuts: step_size must be finite and > 0, got " + std::to_string(o.step_size));
  if (o.max_tree_depth < 1 || o.max_tree_depth > kNutsMaxTreeDepthLimit)
    throw ConfigError("nuts: max_tree_depth must be in [1, " +
                      std::to_string(kNutsMaxTreeDepthLimit) + "], got " +
                      std::to_string(o.max_tree_depth));
  if (!(o.max_energy_error > 0.0))
    throw ConfigError("nuts: max_energy_error must be > 0, got " +
                      std::to_string(o.max_energy_error));
  if (target_dim != metric_dim)
    throw ConfigError("nuts: metric dimension " + std::to_string(metric_dim) +
                      " differs from the target dimension " + std::to_string(target_dim));
  return o;
}

// pick ? a : b without a branch. The picks below are coin flips on random draws; GCC compiles the
// plain conditional (and release(c ? x : y)) to jumps, mispredicted about half the time. The
// empty asm hides the mask's origin so the selection stays arithmetic.
inline int select_slot(bool pick, int a, int b) {
  int mask = -static_cast<int>(pick);
#if defined(__GNUC__)
  asm("" : "+r"(mask));
#endif
  return b ^ ((a ^ b) & mask);
}

// Uniform-in-subtree multinomial sampling when two sibling subtrees merge: keep the second
// half's sample with probability w_final / (w_init + w_final) (one uniform, as Stan draws it).
// The choice selects a slot index (a conditional move); the other slot returns to the pool.
template <int N>
int merge_samples(detail::NutsWork<N>& w, int slot_init, int slot_final,
                  const detail::NutsWeight& w_init, const detail::NutsWeight& w_final,
                  detail::NutsWeight& merged, detail::NutsDraws& draws) {
  double share_final;
  merged = add_weights(w_init, w_final, &share_final);
  const bool take = draws.below(share_final);
  w.release(select_slot(take, slot_init, slot_final));
  return select_slot(take, slot_final, slot_init);
}

}  // namespace

NutsKernel::NutsKernel(targets::TargetPtr target, hmc::Metric metric, NutsOptions options)
    : target_(std::move(target)),
      metric_(std::move(metric)),
      options_(validated(options, target_->dim(), metric_.dim())),
      hamiltonian_(*target_, metric_),
      ends_{hmc::PhasePoint(target_->dim()), hmc::PhasePoint(target_->dim())} {
  const int d = target_->dim();
  const int depth = options_.max_tree_depth;
  switch (d) {
    case 1: work1_ = std::make_unique<detail::NutsWork<1>>(d, depth); break;
    case 2: work2_ = std::make_unique<detail::NutsWork<2>>(d, depth); break;
    case 3: work3_ = std::make_unique<detail::NutsWork<3>>(d, depth); break;
    case 4: work4_ = std::make_unique<detail::NutsWork<4>>(d, depth); break;
    default: work_ = std::make_unique<detail::NutsWork<Eigen::Dynamic>>(d, depth); break;
  }
}

NutsKernel::~NutsKernel() = default;

template <int N>
bool NutsKernel::leaf(detail::NutsWork<N>& w, hmc::PhasePoint& z, double eps, int& slot,
                      Weight& weight) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  bool finite;
  if constexpr (detail::NutsWork<N>::kFixed)
    finite = fixed_leapfrog_ ? hmc::leapfrog_step_fixed<N>(z, eps, hamiltonian_)
                             : hmc::leapfrog_step(z, eps, hamiltonian_);
  else
    finite = hmc::leapfrog_step(z, eps, hamiltonian_);
  ++n_leapfrog_;
  double h = finite ? z.hamiltonian() : kInf;
  if (std::isnan(h)) h = kInf;
  if (!finite) nonfinite_ = true;

  const double log_w = h0_ - h;
  // One exp serves both the acceptance statistic and the multinomial weight; min(1, e) is
  // Stan's (log_w > 0 ? 1 : e) without a branch (e = 0 when h = inf). scalar_exp: about 20
  // instructions fewer than libm's exp.
  const double e = scalar_exp(log_w);
  sum_metro_prob_ += std::min(1.0, e);
  if (h - h0_ > options_.max_energy_error) {  // inf - h0 = inf included
    divergent_ = true;
    return false;
  }
  weight = leaf_weight(log_w, e);
  slot = w.acquire();
  w.store_candidate(slot, z);
  w.note_tip(z);
  return true;
}

template <int N, class Edge, class Vec>
bool NutsKernel::build_tree(detail::NutsWork<N>& w, hmc::PhasePoint& z, int depth, double eps,
                            detail::NutsDraws& draws, Edge& beg, Vec& rho, int& propose,
                            Weight& sum_weight) {
  if (depth == 0) {  // a single point (only the top level asks for one)
    if (!leaf(w, z, eps, propose, sum_weight)) return false;
    w.edge_at_tip(beg, z);
    rho = w.tip_p(z);
    return true;
  }
  if (depth == 1) {
    // Two points: each half's summed momentum is its only momentum, and the checks across the
    // merge coincide with the subtree's own check (same ends, same sum).
    int first, second;
    Weight w_first, w_second;
    if (!leaf(w, z, eps, first, w_first)) return false;
    w.edge_at_tip(beg, z);
    if (!leaf(w, z, eps, second, w_second)) {
      w.release(first);
      return false;
    }
    propose = merge_samples(w, first, second, w_first, w_second, sum_weight, draws);
    rho = beg.p + w.tip_p(z);
    if (no_u_turn(hamiltonian_, beg.p_sharp, w.tip_sharp(z), rho)) return true;
    w.release(propose);  // the caller discards the subtree, and with it its sample
    return false;
  }

  auto& s = w.levels[static_cast<std::size_t>(depth)];
  // First half: starts where the caller's subtree starts (so it fills the caller's `beg`).
  int propose_init, propose_final;
  Weight sum_weight_init, sum_weight_final;
  if (!build_tree(w, z, depth - 1, eps, draws, beg, s.rho_init, propose_init, sum_weight_init))
    return false;
  w.edge_at_tip(s.init_end, z);
  // Second half: continues from where the first half stopped.
  if (!build_tree(w, z, depth - 1, eps, draws, s.final_beg, s.rho_final, propose_final,
                  sum_weight_final)) {
    w.release(propose_init);
    return false;
  }
  propose = merge_samples(w, propose_init, propose_final, sum_weight_init, sum_weight_final,
                          sum_weight, draws);

  // Criterion over the merged subtree (its last point is the tip), then across the merge (Stan
  // >= 2.26): the first half's momenta plus the second half's first momentum, and the second
  // half's momenta plus the first half's last momentum.
  rho = s.rho_init + s.rho_final;
  // (`&`, not `&&`: one branch for the three criteria, which hold together until a U-turn.)
  if (no_u_turn(hamiltonian_, beg.p_sharp, w.tip_sharp(z), rho) &
      no_u_turn(hamiltonian_, beg.p_sharp, s.final_beg.p_sharp, s.rho_init + s.final_beg.p) &
      no_u_turn(hamiltonian_, s.init_end.p_sharp, w.tip_sharp(z), s.rho_final + s.init_end.p))
    return true;
  w.release(propose);  // the caller discards the subtree, and with it its sample
  return false;
}

TransitionStats NutsKernel::transition(ChainState& state, rng::Stream& stream) {
  if (work2_) return run(*work2_, state, stream);
  if (work_) return run(*work_, state, stream);
  if (work1_) return run(*work1_, state, stream);
  if (work3_) return run(*work3_, state, stream);
  return run(*work4_, state, stream);
}

template <int N>
int NutsKernel::start_trajectory(detail::NutsWork<N>& w, const ChainState& state,
                                 rng::Stream& stream) {
  hmc::PhasePoint& fwd_end = ends_[detail::kForward];
  hmc::PhasePoint& bck_end = ends_[detail::kBackward];
  if (state.x.size() != fwd_end.q.size() || state.grad.size() != fwd_end.q.size())
    throw ConfigError("nuts: the chain state has dimension " + std::to_string(state.x.size()) +
                      " (gradient " + std::to_string(state.grad.size()) + "), the target " +
                      std::to_string(fwd_end.q.size()));

  // Both ends start at the initial point with a fresh momentum.
  sized<N>(fwd_end.q) = sized<N>(state.x);
  sized<N>(fwd_end.grad) = sized<N>(state.grad);
  fwd_end.potential = state.potential;
  fixed_leapfrog_ = detail::NutsWork<N>::kFixed && hamiltonian_.fixed_size_ok();
  if constexpr (detail::NutsWork<N>::kFixed) {
    if (fixed_leapfrog_) hamiltonian_.sample_momentum_fixed<N>(stream, fwd_end);
    else hamiltonian_.sample_momentum(stream, fwd_end);
  } else {
    hamiltonian_.sample_momentum(stream, fwd_end);
  }
  h0_ = fwd_end.hamiltonian();
  sized<N>(bck_end.q) = sized<N>(fwd_end.q);
  sized<N>(bck_end.p) = sized<N>(fwd_end.p);
  sized<N>(bck_end.grad) = sized<N>(fwd_end.grad);
  sized<N>(bck_end.velocity) = sized<N>(fwd_end.velocity);
  bck_end.potential = fwd_end.potential;
  bck_end.kinetic = fwd_end.kinetic;
  w.note_tip(fwd_end);
  w.edge_at_tip(w.outer[detail::kForward], fwd_end);
  w.outer[detail::kBackward] = w.outer[detail::kForward];
  w.rho = w.outer[detail::kForward].p;
  if (!w.all_slots_free()) w.reset_slots();

  n_leapfrog_ = 0;
  sum_metro_prob_ = 0.0;
  divergent_ = false;
  nonfinite_ = false;
  // The sample's slot; its contents are read only once the sampler has moved.
  return w.acquire();
}

template <int N>
bool NutsKernel::no_u_turn_across_parts(const detail::NutsWork<N>& w, int depth) const {
  const auto& bck = w.outer[detail::kBackward];  // the backward end
  const auto& fwd = w.outer[detail::kForward];   // the forward end
  const auto& bck_join = w.inner[detail::kBackward];  // the backward part's last point
  const auto& fwd_join = w.inner[detail::kForward];   // the forward part's first point
  const auto& rho_bck = w.part_rho[detail::kBackward];
  const auto& rho_fwd = w.part_rho[detail::kForward];
  bool persist = no_u_turn(hamiltonian_, bck.p_sharp, fwd.p_sharp, w.rho);
  // After the first doubling both parts are single points and the checks across the join
  // repeat this one (same ends, same sum).
  if (depth > 1)
    persist &= no_u_turn(hamiltonian_, bck.p_sharp, fwd_join.p_sharp, rho_bck + fwd_join.p) &
               no_u_turn(hamiltonian_, bck_join.p_sharp, fwd.p_sharp, rho_fwd + bck_join.p);
  return persist;
}

template <int N>
TransitionStats NutsKernel::finish_transition(detail::NutsWork<N>& w, ChainState& state,
                                              int sample, bool moved, int depth) {
  TransitionStats stats;
  stats.step_size = options_.step_size;
  stats.tree_depth = depth;
  stats.n_leapfrog = n_leapfrog_;
  stats.accept_stat = sum_metro_prob_ / static_cast<double>(n_leapfrog_);
  stats.divergent = divergent_;
  stats.nonfinite = nonfinite_;
  stats.accepted = moved;
  stats.energy = h0_;
  if (moved) {
    const auto& c = w.candidates[static_cast<std::size_t>(sample)];
    stats.energy = c.potential + c.kinetic;
    sized<N>(state.x) = c.q;
    sized<N>(state.grad) = c.grad;
    state.potential = c.potential;
  }
  w.release(sample);
  return stats;
}

template <int N>
TransitionStats NutsKernel::run(detail::NutsWork<N>& w, ChainState& state, rng::Stream& stream) {
  const std::int64_t evals_before = hamiltonian_.n_gradient_evals();
  const double eps = options_.step_size;
  int sample = start_trajectory(w, state, stream);
  Weight sum_weight;  // exp(H0 - H0) = 1: the initial point's weight
  bool moved = false;
  int depth = 0;
  const double signed_eps[2] = {-eps, eps};
  detail::NutsDraws draws(stream);

  while (depth < options_.max_tree_depth) {
    // Extend forwards from the forward end (the old trajectory becomes the backward part) or
    // backwards from the backward end (it becomes the forward part). The direction is a coin
    // flip, so everything that depends on it is indexed by it: a branch (which the compiler makes
    // of `forward ? a : b` on references) would be mispredicted half the time.
    const int dir = draws.forward(depth) ? detail::kForward : detail::kBackward;
    const int old_side = 1 - dir;
    hmc::PhasePoint& z = ends_[dir];
    // The old trajectory's end on this side becomes the old part's inner edge.
    w.inner[old_side] = w.outer[dir];
    w.part_rho[old_side].swap(w.rho);
    int propose;
    Weight sum_weight_subtree;
    if (!build_tree(w, z, depth, signed_eps[dir], draws, w.inner[dir], w.part_rho[dir], propose,
                    sum_weight_subtree))
      break;
    w.edge_at_tip(w.outer[dir], z);
    ++depth;

    // Biased progressive sampling: move to the new subtree's sample with probability
    // min(1, w_new / w_old), which favours points far from the start. Stan draws the uniform only
    // when the ratio is at most 1; accept() draws the same way without branching on it.
    const double ratio = weight_ratio(sum_weight_subtree, sum_weight);
    const bool take = draws.accept(ratio);
    moved |= take;
    w.release(select_slot(take, sample, propose));
    sample = select_slot(take, propose, sample);
    sum_weight = add_weights(sum_weight, sum_weight_subtree, nullptr);

    w.rho = w.part_rho[detail::kBackward] + w.part_rho[detail::kForward];
    if (!no_u_turn_across_parts(w, depth)) break;
  }

  TransitionStats stats = finish_transition(w, state, sample, moved, depth);
  stats.n_gradient_evals = hamiltonian_.n_gradient_evals() - evals_before;
  return stats;
}

std::int64_t NutsKernel::choose_initial_step_size(const ChainState& state, rng::Stream& stream) {
  if (!options_.search_step_size) return 0;
  const std::int64_t evals_before = hamiltonian_.n_gradient_evals();
  options_.step_size = hmc::find_initial_step_size(hamiltonian_, ends_[0], state.x, state.grad,
                                                   state.potential, options_.step_size, stream);
  return hamiltonian_.n_gradient_evals() - evals_before;
}

void NutsKernel::begin_warmup(std::int64_t n_warmup) {
  if (options_.adaptation) {
    adapter_.emplace(*options_.adaptation, n_warmup, options_.step_size, metric_);
  }
}

void NutsKernel::adapt(std::int64_t warmup_iteration, const ChainState& state,
                       const TransitionStats& stats) {
  if (!adapter_) return;
  const auto update = adapter_->observe(warmup_iteration, state.x, stats.accept_stat);
  options_.step_size = update.step_size;
  if (update.metric) {
    metric_ = *update.metric;
    hamiltonian_.set_metric(metric_);
  }
}

void NutsKernel::end_warmup() {
  if (!adapter_) return;
  options_.step_size = adapter_->final_step_size();
  adapter_.reset();
}

// ---- checkpoint (added methods) ----

void NutsKernel::save_state(pemc::v1::KernelState& state) const {
  save_plain_state(state, name(), options_.step_size, metric_, adapter_);
}

void NutsKernel::restore_state(const pemc::v1::KernelState& state) {
  restore_plain_state(state, name(), options_.step_size, metric_, adapter_);
  hamiltonian_.set_metric(metric_);
}

}  // namespace pemc::kernels
