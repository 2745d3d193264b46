#pragma once
// The mode search before sampling (issue 36; config `modes`, docs/guide.md#modes): L-BFGS
// (lbfgs.hpp) from many widely spread starts, in batches, clustered into modes with their Laplace
// approximations (laplace.hpp).
//
// Start i is a pure function of (seed, i): x_i = c * t_3 per coordinate (Student's t with
// 3 degrees of freedom, drawn from Stream(seed, kModeSearch, i, 0)), c = init_scale for even i and
// kWideStartFactor * init_scale for odd i, or uniform in the target's box when it has one. Each start's optimisation is a pure function of the target and x_i, so a batch
// may be spread over any number of ranks (the caller's BatchRunner) and the search still gives the
// same modes. Results are clustered in start order:
//  - an optimum within merge_distance standard deviations (the Mahalanobis distance under a mode's
//    Hessian) of a mode found earlier is that mode;
//  - otherwise the Hessian of the potential there (2 d gradients) decides: positive definite, a
//    new mode with its Laplace fit; else a degenerate optimum (a saddle, a ridge along an
//    unidentified direction), only counted.
// An optimisation also ends when a step lowers the potential by less than
// kStallRelativeDecrease of its size (LbfgsOptions::relative_objective_tolerance): next to the
// optimum of a stiff posterior (a regression on predictors in the hundreds: a Hessian of ~1e7
// at a potential of ~50) the decrease left within the gradient tolerance is below the
// potential's rounding, and L-BFGS crawled on for its whole iteration budget without moving (a
// quarter of the starts on posteriordb's sblrc-blr, three quarters of the search's gradients).
// Such a stalled start counts as reaching a mode found before when it is within merge_distance of
// it; a new mode from it must pass the Newton test: the step to the quadratic model's optimum,
// sqrt(g' H^-1 g) standard deviations, is at most kStalledOptimumDistance, else the start did not
// converge.
// The search stops after the first batch at which the Good-Turing estimate n_1 / n of the chance
// that another start finds an unseen mode (n_1 modes reached by exactly one of the n starts that
// reached a mode) is at most unseen_probability, or when max_starts starts have run. Singletons
// whose Laplace share of the mass found is below kNegligibleModeShare do not count: such modes,
// and unseen ones like them, change no estimate (a likelihood with many tiny local optima, e.g.
// an oscillating ODE solution's fit across frequencies, would otherwise keep the search going).
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "modes/lbfgs.hpp"
#include "modes/mode_set.hpp"
#include "targets/target.hpp"

namespace pemc::modes {

// How much wider the odd-numbered starts spread than init_scale.
inline constexpr double kWideStartFactor = 5.0;
// Stan's default tol_rel_obj (1e4 machine epsilons): a step that lowers the potential by less
// than this fraction of it ends the optimisation as stalled.
inline constexpr double kStallRelativeDecrease = 1e4 * std::numeric_limits<double>::epsilon();
// The Newton test of a stalled start's point, in standard deviations of the Hessian there.
inline constexpr double kStalledOptimumDistance = 0.01;

struct ModeSearchSettings {
  std::uint64_t seed = 0;
  double init_scale = 2.0;
  std::optional<double> box_lower, box_upper;  // the target's box (starts uniform inside it)
  int batch_starts = 32;
  int max_starts = 256;
  double unseen_probability = 0.05;
  LbfgsOptions lbfgs{.max_iterations = 1000, .gradient_tolerance = 1e-6,
                     .relative_tolerance = true,
                     .relative_objective_tolerance = kStallRelativeDecrease, .history = 10};
  double merge_distance = 1.0;
  double hessian_step = 1e-5;
};

// What one start's optimisation gave.
struct StartResult {
  // kStalled: ended by the relative-decrease test, not the gradient test (see above).
  enum class Outcome { kConverged = 0, kNotConverged = 1, kNonFinite = 2, kStalled = 3 };
  int index = 0;
  Outcome outcome = Outcome::kNonFinite;
  Vector x;                  // where the optimisation ended (empty when not finite at the start)
  double potential = 0.0;
  std::int64_t n_gradient_evals = 0;
};

// Start i's initial point.
Vector start_point(const ModeSearchSettings& s, int dim, int index);

// Runs start `index` (any exception from the target counts as a non-finite start).
StartResult run_start(const targets::Target& f, const ModeSearchSettings& s, int index);

// Runs the starts first .. first + count - 1 and returns their results (in any order).
using BatchRunner = std::function<std::vector<StartResult>(int first, int count)>;

// Every start on this process, in order.
BatchRunner serial_batches(const targets::Target& f, const ModeSearchSettings& s);

// The search. Hessians are computed here, on every caller alike (each caller gets the same set).
ModeSet search_modes(const targets::Target& f, const ModeSearchSettings& s,
                     const BatchRunner& run_batch);

// Adds a batch's results to a search in progress (exposed for tests): clusters them in start-index
// order into `set`, counting outcomes and gradient evaluations, and updates the Good-Turing
// estimate. Modes stay in the order found until search_modes sorts them.
void add_batch(const targets::Target& f, const ModeSearchSettings& s,
               std::vector<StartResult> batch, ModeSet& set);

// Modes below this Laplace share of the mass found do not keep the search going.
constexpr double kNegligibleModeShare = 1e-6;
// The Good-Turing chance that another start finds an unseen mode that matters (above).
double good_turing_unseen(const ModeSet& set);

}  // namespace pemc::modes
