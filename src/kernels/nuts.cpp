#include "kernels/nuts.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "hmc/leapfrog.hpp"

namespace pemc::kernels {
namespace {

// Generalised no-U-turn criterion (Betancourt 2017, eq. 4.2 with velocities): the trajectory may
// keep growing while both end velocities still point along the summed momentum rho.
template <class Rho>
bool no_u_turn(const Vector& p_sharp_minus, const Vector& p_sharp_plus,
               const Eigen::MatrixBase<Rho>& rho) {
  return p_sharp_plus.dot(rho) > 0.0 && p_sharp_minus.dot(rho) > 0.0;
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

// a + b; *share_b (if given) = b / (a + b).
inline detail::NutsWeight add_weights(const detail::NutsWeight& a, const detail::NutsWeight& b,
                                      double* share_b) {
  detail::NutsWeight out;
  double sa = a.s, sb = b.s;
  out.m = a.m;
  if (a.m != b.m) {  // rare: some point had |H - H0| > kLinearLogWeight
    out.m = a.m > b.m ? a.m : b.m;
    sa *= std::exp(a.m - out.m);
    sb *= std::exp(b.m - out.m);
  }
  out.s = sa + sb;
  if (share_b) *share_b = sb / out.s;
  if (!(out.s <= kWeightMax && out.s >= kWeightMin)) {
    out.m += std::log(out.s);
    out.s = 1.0;
  }
  return out;
}

// b / a.
inline double weight_ratio(const detail::NutsWeight& b, const detail::NutsWeight& a) {
  const double r = b.s / a.s;
  return b.m == a.m ? r : r * std::exp(b.m - a.m);
}

namespace {

// O(1) exchange of two phase points' buffers.
void swap_points(hmc::PhasePoint& a, hmc::PhasePoint& b) {
  a.q.swap(b.q);
  a.p.swap(b.p);
  a.grad.swap(b.grad);
  a.velocity.swap(b.velocity);
  std::swap(a.potential, b.potential);
  std::swap(a.kinetic, b.kinetic);
}

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

}  // namespace

NutsKernel::NutsKernel(targets::TargetPtr target, hmc::Metric metric, NutsOptions options)
    : target_(std::move(target)),
      metric_(std::move(metric)),
      options_(validated(options, target_->dim(), metric_.dim())),
      hamiltonian_(*target_, metric_),
      z_(target_->dim()),
      z_fwd_(target_->dim()),
      z_bck_(target_->dim()),
      sample_(target_->dim()),
      propose_(target_->dim()),
      fwd_fwd_(target_->dim()),
      fwd_bck_(target_->dim()),
      bck_fwd_(target_->dim()),
      bck_bck_(target_->dim()),
      rho_(target_->dim()),
      rho_fwd_(target_->dim()),
      rho_bck_(target_->dim()) {
  // build_tree(depth) uses levels_[depth] for depth in [1, max_tree_depth - 1].
  levels_.reserve(static_cast<std::size_t>(options_.max_tree_depth));
  for (int i = 0; i < options_.max_tree_depth; ++i) levels_.emplace_back(target_->dim());
}

bool NutsKernel::build_tree(int depth, double eps, rng::Stream& stream, Candidate& propose,
                            Edge& beg, Edge& end, Vector* rho, Weight& sum_weight) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (depth == 0) {
    const bool finite = hmc::leapfrog_step(z_, eps, hamiltonian_);
    ++n_leapfrog_;
    double h = finite ? z_.hamiltonian() : kInf;
    if (std::isnan(h)) h = kInf;
    if (!finite) nonfinite_ = true;
    if (h - h0_ > options_.max_energy_error) divergent_ = true;  // inf - h0 = inf included

    const double log_w = h0_ - h;
    // One exp serves both the acceptance statistic and the multinomial weight.
    const double w = std::exp(log_w);
    sum_metro_prob_ += log_w > 0.0 ? 1.0 : w;
    if (divergent_) return false;  // nothing below is used once the subtree is abandoned
    sum_weight = leaf_weight(log_w, w);

    propose.assign(z_);
    beg.p = z_.p;
    beg.p_sharp = z_.velocity;
    if (&end != &beg) {
      end.p = z_.p;
      end.p_sharp = z_.velocity;
    }
    if (rho) *rho = z_.p;
    return true;
  }

  Level& s = levels_[static_cast<std::size_t>(depth)];
  // At depth 1 both halves are single points: the first half's last edge is `beg`, the second
  // half's first edge is `end`, and each half's summed momentum is its only momentum. Aliasing
  // them saves the copies (the values are identical to separate buffers).
  const bool halves_are_points = depth == 1;
  Edge& init_end = halves_are_points ? beg : s.init_end;
  Edge& final_beg = halves_are_points ? end : s.final_beg;
  Vector* rho_init_out = halves_are_points ? nullptr : &s.rho_init;
  Vector* rho_final_out = halves_are_points ? nullptr : &s.rho_final;

  // First half: starts where the caller's subtree starts.
  Weight sum_weight_init;
  if (!build_tree(depth - 1, eps, stream, propose, beg, init_end, rho_init_out, sum_weight_init))
    return false;
  // Second half: continues from where the first half stopped (z_).
  Weight sum_weight_final;
  if (!build_tree(depth - 1, eps, stream, s.propose_final, final_beg, end, rho_final_out,
                  sum_weight_final))
    return false;
  const Vector& rho_init = halves_are_points ? beg.p : s.rho_init;
  const Vector& rho_final = halves_are_points ? end.p : s.rho_final;

  // Uniform-in-subtree multinomial sampling: take the second half's sample with probability
  // w_final / (w_init + w_final).
  double share_final;
  sum_weight = add_weights(sum_weight_init, sum_weight_final, &share_final);
  if (stream.uniform() < share_final) propose.swap(s.propose_final);

  // Criterion over the merged subtree, then across the merge (Stan >= 2.26): the first half's
  // momenta plus the second half's first momentum, and the second half's momenta plus the first
  // half's last momentum. With single-point halves the extra checks coincide with the first one.
  Vector& rho_subtree = *rho;  // internal nodes always report rho
  rho_subtree = rho_init + rho_final;
  if (!no_u_turn(beg.p_sharp, end.p_sharp, rho_subtree)) return false;
  if (halves_are_points) return true;
  return no_u_turn(beg.p_sharp, final_beg.p_sharp, rho_init + final_beg.p) &&
         no_u_turn(init_end.p_sharp, end.p_sharp, rho_final + init_end.p);
}

TransitionStats NutsKernel::transition(ChainState& state, rng::Stream& stream) {
  const std::int64_t evals_before = hamiltonian_.n_gradient_evals();
  const double eps = options_.step_size;

  z_.q = state.x;
  z_.grad = state.grad;
  z_.potential = state.potential;
  hamiltonian_.sample_momentum(stream, z_);
  h0_ = z_.hamiltonian();

  // Both ends start at the initial point; z_ itself is scratch between doublings. The inner
  // edges (fwd_bck_, bck_fwd_) are set before each doubling reads them, and sample_ is only read
  // after a move, so neither needs initialising here.
  fwd_fwd_.p = z_.p;
  fwd_fwd_.p_sharp = z_.velocity;
  bck_bck_.p = z_.p;
  bck_bck_.p_sharp = z_.velocity;
  rho_ = z_.p;
  z_fwd_ = z_;
  swap_points(z_bck_, z_);

  Weight sum_weight;  // exp(H0 - H0) = 1: the initial point's weight
  n_leapfrog_ = 0;
  sum_metro_prob_ = 0.0;
  divergent_ = false;
  nonfinite_ = false;
  bool moved = false;
  int depth = 0;

  while (depth < options_.max_tree_depth) {
    Weight sum_weight_subtree;
    bool valid;
    // Extend forwards from the forward end (the old trajectory becomes the backward subtree) or
    // backwards from the backward end (it becomes the forward subtree). The direction is a coin
    // flip, so the two cases are selected by reference rather than by a branch, which would be
    // mispredicted half the time. Swapping (O(1)) instead of copying: z_ holds scratch between
    // doublings.
    const bool forward = stream.uniform() > 0.5;
    hmc::PhasePoint& z_end = forward ? z_fwd_ : z_bck_;
    Vector& rho_old = forward ? rho_bck_ : rho_fwd_;
    Vector& rho_new = forward ? rho_fwd_ : rho_bck_;
    Edge& old_inner = forward ? bck_fwd_ : fwd_bck_;   // the old trajectory's end on this side
    Edge& new_inner = forward ? fwd_bck_ : bck_fwd_;   // the new subtree's first edge
    Edge& new_outer = forward ? fwd_fwd_ : bck_bck_;   // the new subtree's last edge
    swap_points(z_, z_end);
    rho_old.swap(rho_);
    old_inner = new_outer;
    valid = build_tree(depth, forward ? eps : -eps, stream, propose_, new_inner, new_outer,
                       &rho_new, sum_weight_subtree);
    swap_points(z_, z_end);
    if (!valid) break;
    ++depth;

    // Biased progressive sampling: move to the new subtree's sample with probability
    // min(1, w_new / w_old), which favours points far from the start.
    const double ratio = weight_ratio(sum_weight_subtree, sum_weight);
    if (ratio > 1.0) {
      sample_.swap(propose_);
      moved = true;
    } else if (stream.uniform() < ratio) {
      sample_.swap(propose_);
      moved = true;
    }
    sum_weight = add_weights(sum_weight, sum_weight_subtree, nullptr);

    rho_ = rho_bck_ + rho_fwd_;
    const bool persist = no_u_turn(bck_bck_.p_sharp, fwd_fwd_.p_sharp, rho_) &&
                         no_u_turn(bck_bck_.p_sharp, fwd_bck_.p_sharp, rho_bck_ + fwd_bck_.p) &&
                         no_u_turn(bck_fwd_.p_sharp, fwd_fwd_.p_sharp, rho_fwd_ + bck_fwd_.p);
    if (!persist) break;
  }

  TransitionStats stats;
  stats.step_size = eps;
  stats.tree_depth = depth;
  stats.n_leapfrog = n_leapfrog_;
  stats.n_gradient_evals = hamiltonian_.n_gradient_evals() - evals_before;
  stats.accept_stat = sum_metro_prob_ / static_cast<double>(n_leapfrog_);
  stats.divergent = divergent_;
  stats.nonfinite = nonfinite_;
  stats.accepted = moved;
  stats.energy = moved ? sample_.potential + sample_.kinetic : h0_;
  if (moved) {
    state.x = sample_.q;
    state.grad = sample_.grad;
    state.potential = sample_.potential;
  }
  return stats;
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
