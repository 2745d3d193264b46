#include "targets/funnel.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::targets {

namespace {

// 0.5 * sum_sq * e^{-v}, formed in the log domain so that sum_sq = 0 with e^{-v} = inf (v < -709)
// gives 0 rather than NaN; an overflow gives +inf (density 0: a rejection).
double half_scaled_sum(double sum_sq, double v) {
  if (sum_sq == 0.0 && !std::isnan(v)) return 0.0;
  return 0.5 * std::exp(std::log(sum_sq) - v);
}

}  // namespace

Funnel::Funnel(int dim, double v_scale) : dim_(dim), v_scale_(v_scale) {
  if (dim < 2)
    throw ConfigError("funnel target: dim must be >= 2 (got " + std::to_string(dim) + ")");
  if (!(std::isfinite(v_scale) && v_scale > 0.0))
    throw ConfigError("funnel target: v_scale must be finite and > 0 (got " +
                      std::to_string(v_scale) + ")");
  inv_var_v_ = 1.0 / (v_scale * v_scale);
}

double Funnel::potential(ConstVectorRef x) const {
  const double v = x[0];
  const double sum_sq = x.tail(dim_ - 1).squaredNorm();
  return 0.5 * v * v * inv_var_v_ + half_scaled_sum(sum_sq, v) + 0.5 * (dim_ - 1) * v;
}

double Funnel::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  const double v = x[0];
  const double sum_sq = x.tail(dim_ - 1).squaredNorm();
  const double q = half_scaled_sum(sum_sq, v);
  const double e_minus_v = std::exp(-v);
  // dU/dv = v / v_scale^2 - sum x_i^2 e^{-v} / 2 + (d-1)/2;  dU/dx_i = x_i e^{-v}.
  grad[0] = v * inv_var_v_ - q + 0.5 * (dim_ - 1);
  for (int i = 1; i < dim_; ++i) grad[i] = x[i] == 0.0 ? 0.0 : x[i] * e_minus_v;
  return 0.5 * v * v * inv_var_v_ + q + 0.5 * (dim_ - 1) * v;
}

Truth Funnel::truth() const {
  const double s2 = v_scale_ * v_scale_;
  Truth t;
  t.mean = Vector::Zero(dim_);
  Vector second = Vector::Constant(dim_, std::exp(0.5 * s2));  // E[e^v], v ~ N(0, s2)
  second[0] = s2;
  if (dim_ <= kMaxCrossMomentDim) t.cross_moment = Matrix(second.asDiagonal());
  t.second_moment = second;
  t.log_z = 0.5 * dim_ * kLog2Pi + std::log(v_scale_);
  return t;
}

std::shared_ptr<Funnel> make_funnel(const v1::FunnelTarget& config) {
  if (config.dim() < 2)
    throw ConfigError("target.funnel.dim: must be >= 2 (got " + std::to_string(config.dim()) + ")");
  const double scale = config.has_v_scale() ? config.v_scale() : 3.0;
  if (!(std::isfinite(scale) && scale > 0.0))
    throw ConfigError("target.funnel.v_scale: must be finite and > 0 (got " +
                      std::to_string(scale) + ")");
  return std::make_shared<Funnel>(config.dim(), scale);
}

}  // namespace pemc::targets
