#pragma once
// Test support: a 1-D target with two separated modes and exact moments, for the pseudo-extended
// quadrature tests: 0.5 N(-1, 0.1) + 0.5 N(1, 0.02), E[x] = 0, E[x^2] = 1.06.
#include <memory>
#include <vector>

#include "targets/mixture.hpp"

namespace pemc::testing {

inline std::shared_ptr<targets::GaussianMixture> bimodal_1d() {
  using targets::GaussianMixture;
  return std::make_shared<GaussianMixture>(std::vector<GaussianMixture::Component>{
      {0.5, Vector::Constant(1, -1.0), Vector::Constant(1, 0.1)},
      {0.5, Vector::Constant(1, 1.0), Vector::Constant(1, 0.02)}});
}

}  // namespace pemc::testing
