#include "densities/density.hpp"

#include <string>
#include <vector>

#include "core/error.hpp"

namespace pemc::densities {

void Density::check_mixed_gradient_spans(std::span<const double> x, const MixedGradient& m) const {
  const auto d = static_cast<std::size_t>(dim());
  if (x.size() != d || m.grad_phi.size() != d || m.out.size() != d ||
      !(m.grad_psi.empty() || m.grad_psi.size() == d))
    throw NumericalError(describe() +
                         ": potential_and_mixed_gradient needs x, grad_phi and out (and grad_psi, "
                         "if given) of dimension " +
                         std::to_string(d));
}

double Density::potential_and_mixed_gradient(std::span<const double> x,
                                             const MixedGradient& m) const {
  check_mixed_gradient_spans(x, m);
  const auto n = static_cast<Eigen::Index>(x.size());
  // grad psi goes to the caller's grad_psi, or else to this thread's scratch (grown, never
  // shrunk: no allocation once it has the largest dimension this thread has seen).
  double* grad_psi = m.grad_psi.data();
  if (m.grad_psi.empty()) {
    thread_local std::vector<double> scratch;
    if (scratch.size() < x.size()) scratch.resize(x.size());
    grad_psi = scratch.data();
  }
  Eigen::Map<Vector> g(grad_psi, n);
  const double value = potential_and_gradient(Eigen::Map<const Vector>(x.data(), n), g);
  Eigen::Map<Vector>(m.out.data(), n).noalias() =
      m.w_phi * Eigen::Map<const Vector>(m.grad_phi.data(), n) + m.w_psi * g;
  return value;
}

}  // namespace pemc::densities
