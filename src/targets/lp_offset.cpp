#include "targets/lp_offset.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pemc::targets {

LpOffsetMeasurement measure_lp_offset(const Target& target,
                                      const std::function<void(int, VectorRef)>& draw_point,
                                      const LpOffsetOptions& options) {
  LpOffsetMeasurement m;
  if (!target.has_lp_offset()) return m;
  Vector x(target.dim());
  while (static_cast<int>(m.values.size()) < options.n_points &&
         m.n_points_tried < options.max_points) {
    draw_point(m.n_points_tried, x);
    ++m.n_points_tried;
    if (const auto value = target.lp_offset(x)) m.values.push_back(*value);
  }
  if (static_cast<int>(m.values.size()) < options.min_points) {
    m.problem = fmt::format("the model gave it at {} of {} points, fewer than {}",
                            m.values.size(), m.n_points_tried, options.min_points);
    return m;
  }
  const double first = m.values.front();
  const double tolerance = LpOffsetOptions::kRelativeTolerance * std::max(1.0, std::abs(first));
  for (const double v : m.values)
    if (!(std::abs(v - first) <= tolerance)) {
      std::string list;
      for (const double w : m.values) list += fmt::format("{}{:.17g}", list.empty() ? "" : ", ", w);
      m.problem = fmt::format(
          "its values at {} points disagree ({}) by more than {:g} x max(1, |offset|)",
          m.values.size(), list, LpOffsetOptions::kRelativeTolerance);
      return m;
    }
  m.offset = first;
  return m;
}

}  // namespace pemc::targets
