#include "targets/shifted.hpp"

#include <cmath>

namespace pemc::targets {

ShiftedTarget::ShiftedTarget(TargetPtr inner, double log_scale)
    : ForwardingTarget(std::move(inner), "shifted target"), log_scale_(log_scale) {
  if (!std::isfinite(log_scale_))
    throw ConfigError("shifted target: the log scale must be finite, got " +
                      std::to_string(log_scale_));
}

void ShiftedTarget::potential_and_gradient_batch(std::span<const double> points,
                                                 std::span<double> potentials,
                                                 std::span<double> grads) const {
  inner_->potential_and_gradient_batch(points, potentials, grads);
  for (double& p : potentials) p += log_scale_;
}

Truth ShiftedTarget::truth() const {
  Truth t = inner_->truth();
  if (t.log_z) *t.log_z -= log_scale_;
  return t;
}

}  // namespace pemc::targets
