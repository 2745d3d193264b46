#include "targets/boxed.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::targets {

BoxedTarget::BoxedTarget(TargetPtr inner, double lower, double upper)
    : inner_(std::move(inner)), lower_(lower), upper_(upper) {
  if (!inner_) throw ConfigError("boxed target: no inner target");
  if (std::isnan(lower) || std::isnan(upper) || !(lower < upper))
    throw ConfigError("boxed target: need lower < upper (got lower " + std::to_string(lower) +
                      ", upper " + std::to_string(upper) + ")");
}

bool BoxedTarget::inside(ConstVectorRef x) const {
  for (Eigen::Index i = 0; i < x.size(); ++i)
    if (!(x[i] >= lower_ && x[i] <= upper_)) return false;  // NaN counts as outside
  return true;
}

double BoxedTarget::potential(ConstVectorRef x) const {
  return inside(x) ? inner_->potential(x) : kInf;
}

double BoxedTarget::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  if (inside(x)) return inner_->potential_and_gradient(x, grad);
  grad.setConstant(std::numeric_limits<double>::quiet_NaN());
  return kInf;
}

std::optional<Vector> BoxedTarget::default_initial_point() const {
  auto p = inner_->default_initial_point();
  if (p && inside(*p)) return p;
  return std::nullopt;
}

TargetPtr apply_box(TargetPtr inner, const v1::TargetConfig& config) {
  if (!config.has_box_lower() && !config.has_box_upper()) return inner;
  const double lower = config.has_box_lower() ? config.box_lower() : -kInf;
  const double upper = config.has_box_upper() ? config.box_upper() : kInf;
  if (std::isnan(lower)) throw ConfigError("target.box_lower: is NaN");
  if (std::isnan(upper)) throw ConfigError("target.box_upper: is NaN");
  if (!(lower < upper))
    throw ConfigError("target.box_lower/box_upper: need box_lower < box_upper (got " +
                      std::to_string(lower) + " and " + std::to_string(upper) + ")");
  return std::make_shared<BoxedTarget>(std::move(inner), lower, upper);
}

}  // namespace pemc::targets
