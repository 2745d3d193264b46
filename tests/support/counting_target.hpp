#pragma once
// Test helper: wraps a target and counts its potential and gradient evaluations.
#include <cstdint>
#include <string>
#include <utility>

#include "targets/target.hpp"

namespace pemc::testing {

class CountingTarget final : public targets::Target {
 public:
  explicit CountingTarget(targets::TargetPtr inner) : inner_(std::move(inner)) {}
  int dim() const override { return inner_->dim(); }
  std::string name() const override { return "counting"; }
  double potential(ConstVectorRef x) const override {
    ++n_potential;
    return inner_->potential(x);
  }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    ++n_gradient;
    return inner_->potential_and_gradient(x, g);
  }
  mutable std::int64_t n_gradient = 0, n_potential = 0;

 private:
  targets::TargetPtr inner_;
};

}  // namespace pemc::testing
