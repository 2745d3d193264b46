#pragma once
// Neal's (2003) funnel. State (v, x_1, ..., x_{d-1}):
//   v ~ N(0, v_scale^2),  x_i | v ~ N(0, e^v),
//   potential = v^2 / (2 v_scale^2) + sum_i (x_i^2 e^{-v} / 2 + v / 2).
// Exact truth: E[v] = 0, E[v^2] = v_scale^2, E[x_i] = 0, E[x_i^2] = E[e^v] = exp(v_scale^2 / 2),
// all cross moments 0, log_z = d/2 log(2 pi) + log v_scale.
#include <memory>

#include "targets/target.hpp"

namespace pemc::v1 {
class FunnelTarget;
}

namespace pemc::targets {

class Funnel final : public Target {
 public:
  // dim >= 2, v_scale finite and > 0; throws ConfigError otherwise.
  explicit Funnel(int dim, double v_scale = 3.0);

  int dim() const override { return dim_; }
  std::string name() const override { return "funnel"; }
  double potential(ConstVectorRef x) const override;
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;
  // The cross moment (diagonal) only for dim <= kMaxCrossMomentDim.
  Truth truth() const override;

  double v_scale() const { return v_scale_; }

  static constexpr int kMaxCrossMomentDim = 2000;

 private:
  int dim_;
  double v_scale_;
  double inv_var_v_;  // 1 / v_scale^2
};

// Default v_scale 3 when unset; errors name target.funnel.<field>.
std::shared_ptr<Funnel> make_funnel(const v1::FunnelTarget& config);

}  // namespace pemc::targets
