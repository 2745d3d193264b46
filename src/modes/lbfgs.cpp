#include "modes/lbfgs.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/numerics.hpp"

namespace pemc::modes {
namespace {

bool finite_point(double f, const Vector& g) { return std::isfinite(f) && g.allFinite(); }

}  // namespace

LbfgsResult minimize_lbfgs(const targets::Target& f, Vector x0, const LbfgsOptions& options) {
  const auto d = x0.size();
  const int m = std::max(1, options.history);
  LbfgsResult out;
  out.x = std::move(x0);
  out.grad.resize(d);
  out.value = f.potential_and_gradient(out.x, out.grad);
  out.n_gradient_evals = 1;
  if (!finite_point(out.value, out.grad))
    throw NumericalError("L-BFGS: the potential or its gradient is not finite at the start point");

  Matrix s_hist(d, m), y_hist(d, m);
  Vector rho(m), alpha(m);
  int count = 0, newest = -1;
  Vector dir(d), x_new(d), g_new(d);
  constexpr double kArmijo = 1e-4;
  constexpr int kMaxBacktracks = 60;

  const auto tolerance = [&options](double value) {
    return options.relative_tolerance ? options.gradient_tolerance * std::max(1.0, std::fabs(value))
                                      : options.gradient_tolerance;
  };
  for (out.iterations = 0; out.iterations < options.max_iterations; ++out.iterations) {
    const double gmax = out.grad.cwiseAbs().maxCoeff();
    if (gmax <= tolerance(out.value)) {
      out.converged = true;
      out.message = "gradient tolerance reached";
      return out;
    }
    // Two-loop recursion: dir = -H_k g (Nocedal & Wright Algorithm 7.4).
    dir = out.grad;
    for (int k = 0; k < count; ++k) {
      const int i = (newest - k + m) % m;
      alpha[i] = rho[i] * s_hist.col(i).dot(dir);
      dir.noalias() -= alpha[i] * y_hist.col(i);
    }
    double gamma;
    if (count > 0) {
      gamma = s_hist.col(newest).dot(y_hist.col(newest)) / y_hist.col(newest).squaredNorm();
    } else {
      gamma = 1.0 / std::max(1.0, gmax);  // first step moves at most 1 in every coordinate
    }
    dir *= gamma;
    for (int k = count - 1; k >= 0; --k) {
      const int i = (newest - k + m) % m;
      const double beta = rho[i] * y_hist.col(i).dot(dir);
      dir.noalias() += (alpha[i] - beta) * s_hist.col(i);
    }
    dir = -dir;
    double slope = out.grad.dot(dir);
    if (!(slope < 0.0)) {  // not a descent direction: restart from steepest descent
      count = 0;
      dir = -out.grad / std::max(1.0, gmax);
      slope = out.grad.dot(dir);
    }

    // Backtracking line search with safeguarded quadratic interpolation.
    double t = 1.0, f_new = kInf;
    bool accepted = false;
    for (int k = 0; k < kMaxBacktracks; ++k) {
      x_new.noalias() = out.x + t * dir;
      f_new = f.potential_and_gradient(x_new, g_new);
      ++out.n_gradient_evals;
      if (finite_point(f_new, g_new) && f_new <= out.value + kArmijo * t * slope) {
        accepted = true;
        break;
      }
      double t_next = 0.5 * t;
      if (std::isfinite(f_new)) {
        const double denom = 2.0 * (f_new - out.value - slope * t);
        if (denom > 0.0) t_next = std::clamp(-slope * t * t / denom, 0.1 * t, 0.5 * t);
      }
      t = t_next;
    }
    if (!accepted) {
      out.message = "line search failed (max |grad| = " + std::to_string(gmax) + ")";
      return out;
    }
    // Curvature pair; skipped when s'y is not safely positive (keeps H_k positive definite).
    const int slot = (newest + 1) % m;
    s_hist.col(slot) = x_new - out.x;
    y_hist.col(slot) = g_new - out.grad;
    const double sy = s_hist.col(slot).dot(y_hist.col(slot));
    if (sy > 1e-10 * s_hist.col(slot).norm() * y_hist.col(slot).norm()) {
      rho[slot] = 1.0 / sy;
      newest = slot;
      count = std::min(count + 1, m);
    }
    const double decrease = out.value - f_new;
    out.x.swap(x_new);
    out.grad.swap(g_new);
    const double scale = std::max({std::fabs(out.value), std::fabs(f_new), 1.0});
    out.value = f_new;
    if (options.relative_objective_tolerance > 0.0 &&
        decrease <= options.relative_objective_tolerance * scale) {
      ++out.iterations;
      out.converged = out.grad.cwiseAbs().maxCoeff() <= tolerance(out.value);
      out.stalled = !out.converged;
      out.message = out.converged ? "gradient tolerance reached" : "relative decrease below tolerance";
      return out;
    }
  }
  out.converged = out.grad.cwiseAbs().maxCoeff() <= tolerance(out.value);
  out.message = out.converged ? "gradient tolerance reached" : "iteration limit reached";
  return out;
}

}  // namespace pemc::modes
