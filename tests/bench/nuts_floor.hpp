#pragma once
// Floors for NUTS's own cost: the leanest exact NUTS we could write, for the benchmarks
// BM_Overhead/nuts_floor/kou_a and BM_Overhead/pe5_nuts_floor/kou_a only. They answer "how far
// below kernels::NutsKernel could any exact NUTS get on this machine?", so their figures are read
// against the issues' bounds (1.25 for NUTS on Kou, 1.15 for pseudo-extended NUTS).
//
// It is kernels::NutsKernel's algorithm (Stan's base_nuts: multinomial sampling, the generalised
// no-U-turn criterion with the checks across each merge, biased progressive sampling at the top,
// the same draws through kernels::detail::NutsDraws) and the same arithmetic in the same order,
// without anything the benchmarks do not exercise: unit metric only, the dimension fixed at
// compile time, no adaptation or checkpoints, candidates copied by value instead of pooled, and
// weights as plain doubles, which equal NutsKernel's while every |H - H0| < 500 (beyond that
// NutsKernel rescales; this one would not). The space's geometry (momentum draw, kinetic energy,
// dot products) comes from a policy: PlainSpace<N> (an unpartitioned space, as hmc::Hamiltonian's
// fixed-size path) or OneMemberItems<...> (a pseudo-extended space on one rank: per-item sums in
// item order, as hmc::Partition). The benchmarks check first that it gives NutsKernel's draws bit
// for bit, and refuse to time it otherwise.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/scalar_exp.hpp"
#include "kernels/kernel.hpp"
#include "kernels/nuts.hpp"

namespace pemc::bench {

// An unpartitioned N-dimensional space with a unit metric (hmc::Hamiltonian's fixed-size path;
// N <= 2, where Eigen's packet sums and these sequential ones round alike).
template <int N>
struct PlainSpace {
  static_assert(N >= 1 && N <= 2);
  static constexpr int kDim = N;
  static void draw_momentum(rng::Stream& stream, double* p) { stream.fill_normal(p, N); }
  static double kinetic(const double* p) {  // squaredNorm's order: 0 + p_0^2 + p_1^2 + ...
    double two_k = 0.0;
    for (int i = 0; i < N; ++i) two_k += p[i] * p[i];
    return 0.5 * two_k;
  }
  static double dot(const double* a, const double* b) {  // Eigen's order for N <= 2
    double s = a[0] * b[0];
    for (int i = 1; i < N; ++i) s += a[i] * b[i];
    return s;
  }
};

// A pseudo-extended space of kItems items of kBlock coordinates plus one tail coordinate each
// (hmc::Partition's layout), on one rank with a unit metric: each item's momentum from its own
// stream keyed by one word of the transition's, and every sum over items in item order, each
// item's part as Partition::item_dot forms it (kBlock < 4).
template <int kItems, int kBlock>
struct OneMemberItems {
  static_assert(kBlock >= 1 && kBlock < 4);
  static constexpr int kDim = kItems * (kBlock + 1);
  static void draw_momentum(rng::Stream& stream, double* p) {
    const std::uint64_t key = stream.bits();
    for (int i = 0; i < kItems; ++i) {
      rng::Stream item(key, rng::Domain::kTransition, static_cast<std::uint64_t>(i), 0);
      item.fill_normal(p + i * kBlock, kBlock);
      item.fill_normal(p + kItems * kBlock + i, 1);
    }
  }
  static double dot(const double* a, const double* b) {
    double sum = 0.0;
    for (int i = 0; i < kItems; ++i) {
      double s0 = 0.0;
      for (int j = i * kBlock; j < (i + 1) * kBlock; ++j) s0 += a[j] * b[j];
      double r = (s0 + 0.0) + (0.0 + 0.0);
      const int t = kItems * kBlock + i;
      r += a[t] * b[t];
      sum += r;
    }
    return sum;
  }
  static double kinetic(const double* p) { return 0.5 * dot(p, p); }
};

template <class Space>
class NutsFloorKernel final : public kernels::Kernel {
  static constexpr int N = Space::kDim;

 public:
  // (max_tree_depth bounds the recursion, hence the candidates it indexes: NutsKernel's range.)
  NutsFloorKernel(targets::TargetPtr target, double step_size, int max_tree_depth)
      : target_(std::move(target)), eps_(step_size), max_depth_(max_tree_depth) {
    if (max_depth_ < 1 || max_depth_ > kernels::kNutsMaxTreeDepthLimit)
      throw std::invalid_argument("nuts_floor: max_tree_depth out of range");
  }
  std::string name() const override { return "nuts_floor"; }
  double step_size() const override { return eps_; }

  kernels::TransitionStats transition(kernels::ChainState& state, rng::Stream& stream) override {
    Point& start = ends_[1];
    for (int i = 0; i < N; ++i) {
      start.q[i] = state.x[i];
      start.g[i] = state.grad[i];
    }
    start.u = state.potential;
    Space::draw_momentum(stream, start.p);
    start.k = Space::kinetic(start.p);
    h0_ = start.u + start.k;
    ends_[0] = start;
    // Momenta at the two parts' outer ends and inner ends (at the last join), their sums, and
    // the whole trajectory's sum, indexed by side (0 backward, 1 forward).
    double outer[2][N], inner[2][N], part_rho[2][N], rho[N];
    for (int i = 0; i < N; ++i) outer[0][i] = outer[1][i] = rho[i] = start.p[i];
    n_leapfrog_ = 0;
    sum_metro_ = 0.0;
    divergent_ = false;
    double sum_weight = 1.0;
    bool moved = false;
    int depth = 0;
    const double signed_eps[2] = {-eps_, eps_};
    kernels::detail::NutsDraws draws(stream);
    Candidate* sample = &candidates_[0];
    Candidate* proposal = &candidates_[1];
    while (depth < max_depth_) {
      const int dir = draws.forward(depth) ? 1 : 0;
      const int old_side = 1 - dir;
      for (int i = 0; i < N; ++i) {
        inner[old_side][i] = outer[dir][i];
        part_rho[old_side][i] = rho[i];
      }
      double subtree_weight;
      if (!build(ends_[dir], depth, signed_eps[dir], draws, inner[dir], part_rho[dir], *proposal,
                 subtree_weight, 2))
        break;
      for (int i = 0; i < N; ++i) outer[dir][i] = ends_[dir].p[i];
      ++depth;
      const bool take = draws.accept(subtree_weight / sum_weight);
      moved |= take;
      if (take) std::swap(sample, proposal);
      sum_weight += subtree_weight;
      for (int i = 0; i < N; ++i) rho[i] = part_rho[0][i] + part_rho[1][i];
      bool persist = no_u_turn(outer[0], outer[1], rho);
      if (depth > 1) {
        double across_bck[N], across_fwd[N];
        for (int i = 0; i < N; ++i) {
          across_bck[i] = part_rho[0][i] + inner[1][i];
          across_fwd[i] = part_rho[1][i] + inner[0][i];
        }
        persist &= no_u_turn(outer[0], inner[1], across_bck) &
                   no_u_turn(inner[0], outer[1], across_fwd);
      }
      if (!persist) break;
    }
    kernels::TransitionStats stats;
    stats.step_size = eps_;
    stats.tree_depth = depth;
    stats.n_leapfrog = n_leapfrog_;
    stats.n_gradient_evals = n_leapfrog_;
    stats.accept_stat = sum_metro_ / n_leapfrog_;
    stats.divergent = divergent_;
    stats.accepted = moved;
    stats.energy = h0_;
    if (moved) {
      stats.energy = sample->u + sample->k;
      for (int i = 0; i < N; ++i) {
        state.x[i] = sample->q[i];
        state.grad[i] = sample->g[i];
      }
      state.potential = sample->u;
    }
    return stats;
  }

 private:
  struct Point {
    double q[N], p[N], g[N];
    double u, k;
  };
  struct Candidate {
    double q[N], g[N];
    double u, k;
  };

  static bool no_u_turn(const double* p_minus, const double* p_plus, const double* rho) {
    return (Space::dot(p_plus, rho) > 0.0) & (Space::dot(p_minus, rho) > 0.0);
  }

  // One leapfrog step of z (hmc::leapfrog_step_fixed's unit-metric arithmetic); c = the new
  // point, w = its weight exp(H0 - H). False on divergence.
  bool leaf(Point& z, double eps, Candidate& c, double& w) {
    const double half = 0.5 * eps;
    for (int i = 0; i < N; ++i) {
      z.p[i] -= half * z.g[i];
      z.q[i] += eps * z.p[i];
    }
    const double u = target_->potential_and_gradient(Eigen::Map<const Vector>(z.q, N),
                                                     Eigen::Map<Vector>(z.g, N));
    double zero = 0.0;  // NaN when some gradient entry is not finite
    for (int i = 0; i < N; ++i) zero += z.g[i] * 0.0;
    ++n_leapfrog_;
    double h = std::numeric_limits<double>::infinity();
    if (u < h && zero == 0.0) {
      for (int i = 0; i < N; ++i) z.p[i] -= half * z.g[i];
      z.u = u;
      z.k = Space::kinetic(z.p);
      h = u + z.k;
    }
    const double e = scalar_exp(h0_ - h);
    sum_metro_ += std::min(1.0, e);
    if (h - h0_ > kMaxEnergyError) {
      divergent_ = true;
      return false;
    }
    w = e;
    for (int i = 0; i < N; ++i) {
      c.q[i] = z.q[i];
      c.g[i] = z.g[i];
    }
    c.u = z.u;
    c.k = z.k;
    return true;
  }

  // 2^depth steps from z: beg = the subtree's first momentum, rho = its summed momenta, c = its
  // sample, w = its weight. `scratch` indexes the candidates this level's second half may use.
  bool build(Point& z, int depth, double eps, kernels::detail::NutsDraws& draws, double* beg,
             double* rho, Candidate& c, double& w, int scratch) {
    if (depth == 0) {
      if (!leaf(z, eps, c, w)) return false;
      for (int i = 0; i < N; ++i) beg[i] = rho[i] = z.p[i];
      return true;
    }
    Candidate& c_final = candidates_[scratch];
    double w_final;
    if (depth == 1) {
      if (!leaf(z, eps, c, w)) return false;
      for (int i = 0; i < N; ++i) beg[i] = z.p[i];
      if (!leaf(z, eps, c_final, w_final)) return false;
      const double sum = w + w_final;
      if (draws.below(w_final / sum)) c = c_final;
      w = sum;
      for (int i = 0; i < N; ++i) rho[i] = beg[i] + z.p[i];
      return no_u_turn(beg, z.p, rho);
    }
    double rho_init[N], rho_final[N], init_end[N], final_beg[N];
    if (!build(z, depth - 1, eps, draws, beg, rho_init, c, w, scratch + 1)) return false;
    for (int i = 0; i < N; ++i) init_end[i] = z.p[i];
    if (!build(z, depth - 1, eps, draws, final_beg, rho_final, c_final, w_final, scratch + 1))
      return false;
    const double sum = w + w_final;
    if (draws.below(w_final / sum)) c = c_final;
    w = sum;
    double across_init[N], across_final[N];
    for (int i = 0; i < N; ++i) {
      rho[i] = rho_init[i] + rho_final[i];
      across_init[i] = rho_init[i] + final_beg[i];
      across_final[i] = rho_final[i] + init_end[i];
    }
    return no_u_turn(beg, z.p, rho) & no_u_turn(beg, final_beg, across_init) &
           no_u_turn(init_end, z.p, across_final);
  }

  // NutsKernel's default divergence threshold (the benchmarks' configs leave it unset).
  static constexpr double kMaxEnergyError = kernels::NutsOptions{}.max_energy_error;

  targets::TargetPtr target_;
  double eps_;
  int max_depth_;
  double h0_ = 0.0, sum_metro_ = 0.0;
  int n_leapfrog_ = 0;
  bool divergent_ = false;
  Point ends_[2];
  // 0 and 1: the sample and the top-level subtree's proposal; from 2: one per tree level.
  Candidate candidates_[kernels::kNutsMaxTreeDepthLimit + 3];
};

}  // namespace pemc::bench
