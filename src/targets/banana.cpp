#include "targets/banana.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "core/error.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::targets {

Banana::Banana(double b, double v) : b_(b), v_(v) {
  if (!std::isfinite(b)) throw ConfigError("banana target: b must be finite");
  if (!(std::isfinite(v) && v > 0.0))
    throw ConfigError("banana target: v must be finite and > 0 (got " + std::to_string(v) + ")");
  inv_sqrt_v_ = 1.0 / std::sqrt(v);
}

double Banana::potential(ConstVectorRef x) const {
  const double y1 = x[0] * inv_sqrt_v_;
  const double y2 = x[1] - b_ * (x[0] * x[0] - v_);
  return 0.5 * (y1 * y1 + y2 * y2);
}

double Banana::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  const double y1 = x[0] * inv_sqrt_v_;
  const double y2 = x[1] - b_ * (x[0] * x[0] - v_);
  // dU/dx1 = y1 dy1/dx1 + y2 dy2/dx1 = y1 / sqrt(v) - 2 b x1 y2;  dU/dx2 = y2.
  grad[0] = y1 * inv_sqrt_v_ - 2.0 * b_ * x[0] * y2;
  grad[1] = y2;
  return 0.5 * (y1 * y1 + y2 * y2);
}

Truth Banana::truth() const {
  Truth t;
  t.mean = Vector::Zero(2);
  const double e_x2_sq = 1.0 + 2.0 * b_ * b_ * v_ * v_;
  t.second_moment = Eigen::Vector2d(v_, e_x2_sq);
  Matrix cross = Matrix::Zero(2, 2);
  cross(0, 0) = v_;
  cross(1, 1) = e_x2_sq;
  t.cross_moment = cross;
  t.log_z = std::log(2.0 * std::numbers::pi * std::sqrt(v_));
  return t;
}

std::shared_ptr<Banana> make_banana(const v1::BananaTarget& config) {
  const double b = config.has_b() ? config.b() : 0.1;
  const double v = config.has_v() ? config.v() : 100.0;
  if (!std::isfinite(b)) throw ConfigError("target.banana.b: must be finite");
  if (!(std::isfinite(v) && v > 0.0))
    throw ConfigError("target.banana.v: must be finite and > 0 (got " + std::to_string(v) + ")");
  return std::make_shared<Banana>(b, v);
}

}  // namespace pemc::targets
