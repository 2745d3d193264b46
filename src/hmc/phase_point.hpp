#pragma once
// A point in phase space with everything the integrator reuses: the potential's value and gradient
// at q, and the velocity M^{-1} p.
#include <cmath>

#include "core/types.hpp"

namespace pemc::hmc {

struct PhasePoint {
  Vector q;
  Vector p;
  Vector grad;      // d potential / dq at q
  Vector velocity;  // M^{-1} p
  double potential = 0.0;
  double kinetic = 0.0;

  explicit PhasePoint(int dim = 0)
      : q(Vector::Zero(dim)), p(Vector::Zero(dim)), grad(Vector::Zero(dim)),
        velocity(Vector::Zero(dim)) {}

  double hamiltonian() const { return potential + kinetic; }
  // A non-finite potential anywhere on a trajectory means the trajectory is rejected.
  bool finite() const { return std::isfinite(potential) && std::isfinite(kinetic); }
};

}  // namespace pemc::hmc
