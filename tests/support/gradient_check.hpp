#pragma once
// Test support: compare a Target's analytic gradient with central finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "targets/target.hpp"

namespace pemc::testing {

// Central differences with a step scaled to |x_i|; truncation error O(h^2), rounding O(eps/h).
inline Vector finite_difference_gradient(const targets::Target& t, const Vector& x) {
  Vector g(x.size());
  Vector xp = x;
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const double h = 1e-5 * std::max(1.0, std::fabs(x[i]));
    xp[i] = x[i] + h;
    const double up = t.potential(xp);
    xp[i] = x[i] - h;
    const double down = t.potential(xp);
    xp[i] = x[i];
    g[i] = (up - down) / (2.0 * h);
  }
  return g;
}

// Asserts potential_and_gradient's value equals potential(x) and its gradient matches finite
// differences to rel_tol relative to max(1, |g|_inf).
inline void expect_gradient_matches(const targets::Target& t, const Vector& x,
                                    double rel_tol = 1e-6) {
  Vector g(t.dim());
  const double u = t.potential_and_gradient(x, g);
  ASSERT_TRUE(std::isfinite(u)) << "potential not finite at the check point";
  EXPECT_NEAR(u, t.potential(x), 1e-10 * std::max(1.0, std::fabs(u)));
  const Vector fd = finite_difference_gradient(t, x);
  const double scale = std::max(1.0, fd.cwiseAbs().maxCoeff());
  for (Eigen::Index i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], fd[i], rel_tol * scale) << t.name() << ": d/dx_" << i;
}

}  // namespace pemc::testing
