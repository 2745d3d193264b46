#pragma once
// Test helper: runs Target::potential_and_gradient_batch on a list of points.
#include <cstddef>
#include <vector>

#include "targets/target.hpp"

namespace pemc::testing {

// The potentials (one per point) and gradients (point after point) of one batch call.
struct BatchResult {
  std::vector<double> u, g;
};

inline BatchResult run_batch(const targets::Target& t, const std::vector<Vector>& points) {
  const auto d = static_cast<std::size_t>(t.dim());
  std::vector<double> x;
  for (const auto& p : points) x.insert(x.end(), p.data(), p.data() + p.size());
  BatchResult r{std::vector<double>(points.size()), std::vector<double>(points.size() * d)};
  t.potential_and_gradient_batch(x, r.u, r.g);
  return r;
}

}  // namespace pemc::testing
