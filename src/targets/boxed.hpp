#pragma once
// A target restricted to the box [lower, upper]^d: potential = inner potential inside (boundary
// included), +inf outside (a rejected proposal). The restricted density's normaliser and moments
// differ from the inner target's whenever the box cuts off mass, so no truth is claimed.
#include <memory>

#include "targets/target.hpp"

namespace pemc::v1 {
class TargetConfig;
}

namespace pemc::targets {

class BoxedTarget final : public Target {
 public:
  // lower < upper (either may be infinite, neither NaN); throws ConfigError otherwise.
  BoxedTarget(TargetPtr inner, double lower, double upper);

  int dim() const override { return inner_->dim(); }
  std::string name() const override { return "boxed_" + inner_->name(); }
  double potential(ConstVectorRef x) const override;
  // Outside the box: returns +inf and fills grad with NaN.
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;
  Truth truth() const override { return {}; }
  std::vector<std::string> output_names() const override { return inner_->output_names(); }
  bool write_outputs(ConstVectorRef x, std::uint64_t seed, std::span<double> out) const override {
    return inner_->write_outputs(x, seed, out);
  }
  std::vector<ModelMessage> take_model_messages() const override {
    return inner_->take_model_messages();
  }
  // The inner target's default if it lies in the box, else nullopt.
  std::optional<Vector> default_initial_point() const override;

  bool inside(ConstVectorRef x) const;
  const Target& inner() const { return *inner_; }
  double lower() const { return lower_; }
  double upper() const { return upper_; }

 private:
  TargetPtr inner_;
  double lower_;
  double upper_;
};

// Wraps `inner` in a BoxedTarget when config.box_lower or config.box_upper is set (an unset side
// is unbounded); returns `inner` unchanged otherwise. Errors name target.box_lower/box_upper.
TargetPtr apply_box(TargetPtr inner, const v1::TargetConfig& config);

}  // namespace pemc::targets
