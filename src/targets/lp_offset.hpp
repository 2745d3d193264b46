#pragma once
// The constant between a target's log density (-potential) and the log density its model's own
// tools report as lp__ (Stan's: the constants of `~` statements dropped, Jacobian included), for
// the run's header (RunInfo.lp_offset): reports export lp__ = -potential - offset, so that a Stan
// model sampled with the full density (propto: false, needed for log Z) still shows Stan's lp__.
//
// The offset is measured at a few points rather than trusted: it must be the same at each of them
// (within kRelativeTolerance of its size), else nothing is recorded and exports keep -potential.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "targets/target.hpp"

namespace pemc::targets {

struct LpOffsetMeasurement {
  std::optional<double> offset;  // the value to record; nullopt: record nothing
  std::vector<double> values;    // the offset at each point where the target gave one
  int n_points_tried = 0;
  // Why nothing is recorded for a target that has an offset: too few points where the model gave
  // one, or values that disagree (with them). Empty when recorded or the target has none.
  std::string problem;
};

struct LpOffsetOptions {
  int n_points = 3;      // points whose offsets must agree
  int max_points = 20;   // points drawn at most (the model may reject some)
  int min_points = 2;    // fewer valid points than this: nothing is recorded
  // Two values agree when they differ by at most this times max(1, |first value|): the offset is
  // the difference of two log densities, each rounded at its own magnitude.
  static constexpr double kRelativeTolerance = 1e-8;
};

// Evaluates target.lp_offset at the points draw_point(attempt, x) fills (attempt = 0, 1, ...; x
// has target.dim() entries) until n_points gave a value or max_points were drawn. A target without
// an offset (has_lp_offset() false) gives an empty measurement without drawing any point.
LpOffsetMeasurement measure_lp_offset(const Target& target,
                                      const std::function<void(int, VectorRef)>& draw_point,
                                      const LpOffsetOptions& options = {});

}  // namespace pemc::targets
