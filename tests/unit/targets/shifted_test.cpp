// ShiftedTarget (targets/shifted.hpp): the inner density divided by exp(log_scale).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "targets/mixture.hpp"
#include "targets/shifted.hpp"

namespace pemc::targets {
namespace {

using C = GaussianMixture::Component;

std::shared_ptr<GaussianMixture> mixture() {
  return std::make_shared<GaussianMixture>(std::vector<C>{
      {0.5, Vector::Constant(2, -1.0), Vector::Constant(2, 0.5)},
      {0.5, Vector::Constant(2, 2.0), Vector::Constant(2, 1.0)}});
}

TEST(ShiftedTarget, AddsTheLogScaleToThePotentialOnly) {
  const auto inner = mixture();
  const ShiftedTarget t(inner, -420.5);
  const Vector x = (Vector(2) << 0.3, -0.7).finished();
  Vector g_inner(2), g(2);
  const double p_inner = inner->potential_and_gradient(x, g_inner);
  EXPECT_EQ(t.potential_and_gradient(x, g), p_inner + -420.5);
  EXPECT_EQ(t.potential(x), inner->potential(x) - 420.5);
  EXPECT_EQ(g, g_inner);
  // Batches: the same numbers per point.
  const std::vector<double> points{0.3, -0.7, 2.0, 2.5};
  std::vector<double> pots(2), grads(4);
  t.potential_and_gradient_batch(points, pots, grads);
  EXPECT_EQ(pots[0], t.potential(x));
  ASSERT_TRUE(t.truth().log_z.has_value());
  EXPECT_DOUBLE_EQ(*t.truth().log_z, *inner->truth().log_z + 420.5);
  EXPECT_THROW(ShiftedTarget(inner, std::nan("")), ConfigError);
}

}  // namespace
}  // namespace pemc::targets
