#pragma once
// Leapfrog (velocity Verlet) integrator: symplectic, time-reversible, volume preserving.
#include "hmc/hamiltonian.hpp"

namespace pemc::hmc {

// One step of size eps (negative eps integrates backwards). On entry z.grad is dU/dq at z.q.
// On exit z is fully updated (potential, gradient, kinetic, velocity). Returns false when the
// potential became non-finite: the caller must treat the trajectory as divergent/rejected.
inline bool leapfrog_step(PhasePoint& z, double eps, Hamiltonian& h) {
  z.p.noalias() -= (0.5 * eps) * z.grad;
  h.metric().velocity(z.p, z.velocity);
  z.q.noalias() += eps * z.velocity;
  h.update_potential_gradient(z);
  if (!std::isfinite(z.potential)) return false;
  z.p.noalias() -= (0.5 * eps) * z.grad;
  h.update_kinetic(z);
  return true;
}

}  // namespace pemc::hmc
