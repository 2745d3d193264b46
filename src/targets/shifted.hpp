#pragma once
// A target whose density is the inner target's divided by exp(log_scale): potential = inner
// potential + log_scale. Everything else (outputs, held-out data, batches) is the inner target's.
// Pseudo-extended normalises its instrumental this way (extended/pseudo_extended.hpp): with
// log_scale the highest log density found, the shifted density is 1 at the best mode.
#include <memory>

#include "targets/forwarding.hpp"

namespace pemc::targets {

class ShiftedTarget final : public ForwardingTarget {
 public:
  // log_scale must be finite (ConfigError otherwise).
  ShiftedTarget(TargetPtr inner, double log_scale);

  double potential(ConstVectorRef x) const override { return inner_->potential(x) + log_scale_; }
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override {
    return inner_->potential_and_gradient(x, grad) + log_scale_;
  }
  void potential_and_gradient_batch(std::span<const double> points, std::span<double> potentials,
                                    std::span<double> grads) const override;
  // The inner truth with log Z lowered by log_scale.
  Truth truth() const override;

  double log_scale() const { return log_scale_; }

 private:
  double log_scale_;
};

}  // namespace pemc::targets
