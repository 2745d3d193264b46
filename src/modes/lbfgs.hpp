#pragma once
// Limited-memory BFGS minimisation of a target's potential (Nocedal & Wright, Algorithms 7.4 and
// 7.5): the two-loop recursion with the scaling gamma = s'y / y'y and a backtracking Armijo line
// search with safeguarded quadratic interpolation. Used by the mode search (mode_search.hpp) and
// the fitted base densities (extended/base_density_fit.hpp).
#include <cstdint>
#include <string>

#include "core/types.hpp"
#include "targets/target.hpp"

namespace pemc::modes {

struct LbfgsOptions {
  int max_iterations = 2000;
  // Converged when max_i |grad_i| <= gradient_tolerance * (relative ? max(1, |value|) : 1).
  double gradient_tolerance = 1e-6;
  bool relative_tolerance = false;
  // Also stop when an accepted step lowers the value by at most this fraction of
  // max(|f_k|, |f_k+1|, 1) (Stan's tol_rel_obj; 0 = off). Next to the optimum of a stiff
  // potential (a large Hessian at a moderate value) the decrease left within gradient_tolerance
  // can be below the value's rounding: the line search accepts noise, the curvature pairs stop
  // being positive and the iterations crawl without moving the value. Such a stop is not proof
  // of an optimum (LbfgsResult::stalled): the caller checks the point.
  double relative_objective_tolerance = 0.0;
  int history = 10;  // number of (s, y) pairs kept
};

struct LbfgsResult {
  Vector x;
  double value = 0.0;
  Vector grad;
  int iterations = 0;
  std::int64_t n_gradient_evals = 0;
  bool converged = false;
  bool stalled = false;  // stopped by relative_objective_tolerance (converged is false)
  std::string message;   // why it stopped
};

// Minimises f.potential from x0. Pairs with s'y <= 1e-10 |s||y| are skipped so the inverse-Hessian
// estimate stays positive definite. Non-finite trial values are treated as "too far" (the step is
// shortened). Throws NumericalError if f is not finite at x0.
LbfgsResult minimize_lbfgs(const targets::Target& f, Vector x0, const LbfgsOptions& options = {});

}  // namespace pemc::modes
