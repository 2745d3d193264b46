#pragma once
// Haario et al. (1999) "banana" (twisted Gaussian), 2-D:
//   y1 = x1 / sqrt(v),  y2 = x2 - b (x1^2 - v),  y ~ N(0, I),  potential = (y1^2 + y2^2) / 2.
//
// The map x -> y has Jacobian determinant 1/sqrt(v) (triangular, constant), so exp(-potential)
// integrates to 2 pi sqrt(v) and the moments follow from x1 = sqrt(v) y1, x2 = y2 + b(x1^2 - v):
//   E[x1] = 0, E[x1^2] = v, E[x2] = 0, E[x2^2] = 1 + b^2 Var(x1^2) = 1 + 2 b^2 v^2,
//   E[x1 x2] = b E[x1^3] - b v E[x1] = 0.
#include <memory>

#include "targets/target.hpp"

namespace pemc::v1 {
class BananaTarget;
}

namespace pemc::targets {

class Banana final : public Target {
 public:
  // b finite, v finite and > 0; throws ConfigError otherwise.
  explicit Banana(double b = 0.1, double v = 100.0);

  int dim() const override { return 2; }
  std::string name() const override { return "banana"; }
  double potential(ConstVectorRef x) const override;
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;
  Truth truth() const override;

  double b() const { return b_; }
  double v() const { return v_; }

 private:
  double b_;
  double v_;
  double inv_sqrt_v_;
};

// Defaults b = 0.1, v = 100 for unset fields; errors name target.banana.<field>.
std::shared_ptr<Banana> make_banana(const v1::BananaTarget& config);

}  // namespace pemc::targets
