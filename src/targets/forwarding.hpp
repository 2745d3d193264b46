#pragma once
// Base of a target that wraps another and changes only its density (ShiftedTarget,
// extended::ReferenceRatioTarget): dimension, name, named outputs, held-out data, model messages
// and the default initial point are the inner target's. A subclass overrides the potential and
// its gradient, and the truth when it changes.
#include <memory>

#include "core/error.hpp"
#include "targets/target.hpp"

namespace pemc::targets {

class ForwardingTarget : public Target {
 public:
  int dim() const override { return inner_->dim(); }
  std::string name() const override { return inner_->name(); }
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

 protected:
  // `what` names the wrapper in the error for a null inner target (ConfigError).
  ForwardingTarget(TargetPtr inner, const char* what) : inner_(std::move(inner)) {
    if (!inner_) throw ConfigError(std::string(what) + ": no inner target");
  }

  TargetPtr inner_;
};

}  // namespace pemc::targets
