#pragma once
// A first step size for warmup when the config gives none: the heuristic of Hoffman & Gelman
// (2014, Algorithm 4) in the form Stan uses. One leapfrog step from the chain's state with a fresh
// momentum tells whether the step's acceptance probability exp(H0 - H1) is above 0.8; the step
// size is then doubled (or halved) until a fresh momentum's acceptance falls to 0.8 or below
// (rises above 0.8). Dual averaging starts from the result, so it only needs the right scale.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "hmc/hamiltonian.hpp"
#include "hmc/leapfrog.hpp"
#include "hmc/phase_point.hpp"
#include "rng/stream.hpp"

namespace pemc::hmc {

// Where the search gives up: a step this large means the density does not decay (improper), and
// halving this often from the start means no step size gives a finite, accurate step.
inline constexpr double kMaxSearchedStepSize = 1e7;

namespace detail {

// H0 - H1 for one leapfrog step of size eps from (q, grad, potential) with a momentum drawn from
// `stream`; -inf when the step leaves the density's support or the energy is NaN.
inline double one_step_energy_gain(Hamiltonian& h, PhasePoint& z, const Vector& q,
                                   const Vector& grad, double potential, double eps,
                                   rng::Stream& stream) {
  z.q = q;
  z.grad = grad;
  z.potential = potential;
  h.sample_momentum(stream, z);
  const double h0 = z.hamiltonian();
  if (!leapfrog_step(z, eps, h)) return -std::numeric_limits<double>::infinity();
  const double h1 = z.hamiltonian();
  return std::isnan(h1) ? -std::numeric_limits<double>::infinity() : h0 - h1;
}

}  // namespace detail

// The searched step size, starting from `initial` (> 0). `z` is scratch space of the target's
// dimension; every momentum comes from `stream`. Throws NumericalError when the step size
// grows past kMaxSearchedStepSize or underflows to 0.
inline double find_initial_step_size(Hamiltonian& h, PhasePoint& z, const Vector& q,
                                     const Vector& grad, double potential, double initial,
                                     rng::Stream& stream) {
  const double threshold = std::log(0.8);
  double eps = initial;
  const bool grow = detail::one_step_energy_gain(h, z, q, grad, potential, eps, stream) > threshold;
  for (;;) {
    const double gain = detail::one_step_energy_gain(h, z, q, grad, potential, eps, stream);
    if (grow ? !(gain > threshold) : !(gain < threshold)) return eps;
    eps = grow ? 2.0 * eps : 0.5 * eps;
    if (eps > kMaxSearchedStepSize)
      throw NumericalError("step size search: a leapfrog step of size " +
                           std::to_string(kMaxSearchedStepSize) +
                           " is still accurate, so the density does not decay (improper target?)");
    if (eps == 0.0)
      throw NumericalError(
          "step size search: no step size gives an accurate leapfrog step from the initial "
          "point (is the potential continuous there?)");
  }
}

}  // namespace pemc::hmc
