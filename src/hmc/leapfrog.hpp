#pragma once
// Leapfrog (velocity Verlet) integrator: symplectic, time-reversible, volume preserving.
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

}  // namespace pemc::hmc
