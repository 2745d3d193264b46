#pragma once
// A target whose density is the inner target's divided by exp(log_scale): potential = inner
// potential + log_scale. Everything else (outputs, held-out data, batches) is the inner target's.
// Pseudo-extended normalises its instrumental this way (extended/pseudo_extended.hpp): with
// log_scale the highest log density found, the shifted density is 1 at the best mode.
#include <memory>

#include "targets/target.hpp"

namespace pemc::targets {

class ShiftedTarget final : public Target {
 public:
  // log_scale must be finite (ConfigError otherwise).
  ShiftedTarget(TargetPtr inner, double log_scale);

  int dim() const override { return inner_->dim(); }
  std::string name() const override { return inner_->name(); }
  double potential(ConstVectorRef x) const override { return inner_->potential(x) + log_scale_; }
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override {
    return inner_->potential_and_gradient(x, grad) + log_scale_;
  }
  void potential_and_gradient_batch(std::span<const double> points, std::span<double> potentials,
                                    std::span<double> grads) const override;
  // The inner truth with log Z lowered by log_scale.
  Truth truth() const override;
  int n_test_points() const override { return inner_->n_test_points(); }
  void log_predictive(ConstVectorRef x, std::span<double> out) const override {
    inner_->log_predictive(x, out);
  }
  std::vector<std::string> output_names() const override { return inner_->output_names(); }
  bool write_outputs(ConstVectorRef x, std::uint64_t seed, std::span<double> out) const override {
    return inner_->write_outputs(x, seed, out);
  }
  std::vector<ModelMessage> take_model_messages() const override {
    return inner_->take_model_messages();
  }
  std::optional<Vector> default_initial_point() const override {
    return inner_->default_initial_point();
  }

  const Target& inner() const { return *inner_; }
  double log_scale() const { return log_scale_; }

 private:
  TargetPtr inner_;
  double log_scale_;
};

}  // namespace pemc::targets
