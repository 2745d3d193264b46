#pragma once
// Leapfrog (velocity Verlet) integrator: symplectic, time-reversible, volume preserving.
#include <cmath>

#include "hmc/hamiltonian.hpp"

namespace pemc::hmc {

// One step of size eps (negative eps integrates backwards). On entry z.grad is dU/dq at z.q.
// On exit z is fully updated (potential, gradient, kinetic, velocity). Returns false when the
// potential became non-finite: the caller must treat the trajectory as divergent/rejected.
inline bool leapfrog_step(PhasePoint& z, double eps, Hamiltonian& h) {
  // Only h.ranges() move (the whole vector, or this member's items of a partitioned space).
  if (h.metric().kind() == MetricKind::kUnit) {
    // Unit metric (velocity = p): the same arithmetic fused into one pass before and one after
    // the gradient, instead of six vector operations (NUTS calls this once per leaf).
    const double half = 0.5 * eps;
    const Eigen::Index n = z.q.size();  // unpartitioned: the one range is [0, n)
    for (const Partition::Range& r : h.ranges()) {
      double* __restrict q = z.q.data() + r.begin;
      double* __restrict p = z.p.data() + r.begin;
      double* __restrict v = z.velocity.data() + r.begin;
      const double* __restrict g = z.grad.data() + r.begin;
      for (Eigen::Index i = 0; i < r.size; ++i) {
        const double pi = p[i] - half * g[i];
        p[i] = pi;
        v[i] = pi;
        q[i] += eps * pi;
      }
    }
    h.update_potential_gradient(z);
    if (!std::isfinite(z.potential)) return false;
    if (h.partitioned()) {
      // The sum over this member's coordinates is not the kinetic energy; the per-item sums
      // reduced over the group are.
      for (const Partition::Range& r : h.ranges()) {
        double* __restrict p = z.p.data() + r.begin;
        double* __restrict v = z.velocity.data() + r.begin;
        const double* __restrict g = z.grad.data() + r.begin;
        for (Eigen::Index i = 0; i < r.size; ++i) {
          const double pi = p[i] - half * g[i];
          p[i] = pi;
          v[i] = pi;
        }
      }
      z.kinetic = h.kinetic_energy(z.p, z.velocity);
      return true;
    }
    double two_k = 0.0;
    {
      double* __restrict p = z.p.data();
      double* __restrict v = z.velocity.data();
      const double* __restrict g = z.grad.data();
      for (Eigen::Index i = 0; i < n; ++i) {
        const double pi = p[i] - half * g[i];
        p[i] = pi;
        v[i] = pi;
        two_k += pi * pi;
      }
    }
    z.kinetic = 0.5 * two_k;
    return true;
  }
  for (const Partition::Range& r : h.ranges()) {
    z.p.segment(r.begin, r.size).noalias() -= (0.5 * eps) * z.grad.segment(r.begin, r.size);
    h.metric().velocity(z.p, z.velocity, r.begin, r.size);
    z.q.segment(r.begin, r.size).noalias() += eps * z.velocity.segment(r.begin, r.size);
  }
  h.update_potential_gradient(z);
  if (!std::isfinite(z.potential)) return false;
  for (const Partition::Range& r : h.ranges())
    z.p.segment(r.begin, r.size).noalias() -= (0.5 * eps) * z.grad.segment(r.begin, r.size);
  h.update_kinetic(z);
  return true;
}

// leapfrog_step() for z of compile-time size N on an unpartitioned space with a unit or diagonal
// metric (h.fixed_size_ok()): the same arithmetic in the same order, hence the same results bit
// for bit, without the loops over ranges, Eigen::Ref hand-offs and dynamic reductions (NUTS on a
// 2-D target calls this for each of its ~3 leapfrogs per transition, each ~150 ns of gradient).
template <int N>
[[gnu::always_inline]] inline bool leapfrog_step_fixed(PhasePoint& z, double eps, Hamiltonian& h) {
  using Vec = Eigen::Matrix<double, N, 1>;
  const double half = 0.5 * eps;
  // (No __restrict: the gradient call writes z.grad between the two passes.)
  double* q = z.q.data();
  double* p = z.p.data();
  double* v = z.velocity.data();
  const double* g = z.grad.data();
  if (h.metric().kind() == MetricKind::kUnit) {
    for (int i = 0; i < N; ++i) {
      const double pi = p[i] - half * g[i];
      p[i] = pi;
      v[i] = pi;
      q[i] += eps * pi;
    }
    h.update_potential_gradient_fixed<N>(z);
    if (!std::isfinite(z.potential)) return false;
    double two_k = 0.0;
    for (int i = 0; i < N; ++i) {
      const double pi = p[i] - half * g[i];
      p[i] = pi;
      v[i] = pi;
      two_k += pi * pi;
    }
    z.kinetic = 0.5 * two_k;
    return true;
  }
  const double* inv = h.metric().inverse_diagonal().data();
  for (int i = 0; i < N; ++i) {
    const double pi = p[i] - half * g[i];
    const double vi = inv[i] * pi;
    p[i] = pi;
    v[i] = vi;
    q[i] += eps * vi;
  }
  h.update_potential_gradient_fixed<N>(z);
  if (!std::isfinite(z.potential)) return false;
  for (int i = 0; i < N; ++i) {
    const double pi = p[i] - half * g[i];
    p[i] = pi;
    v[i] = inv[i] * pi;
  }
  // The generic path's kinetic energy: 0.5 p.dot(v) (Eigen's reduction order).
  z.kinetic = 0.5 * Eigen::Map<const Vec>(p).dot(Eigen::Map<const Vec>(v));
  return true;
}

}  // namespace pemc::hmc
