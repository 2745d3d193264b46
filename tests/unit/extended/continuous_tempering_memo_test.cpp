// DeltaMemo and the extended spaces' weighted views: phi and psi at any point evaluated since the
// kernel's transition began (a NUTS trajectory, not only its last point) are reused without a
// target evaluation; points match bit for bit; the memo forgets beyond its capacity and at a
// transition's start; a miss is re-evaluated, never answered with another point's values.
#include <gtest/gtest.h>

#include <cmath>
#include <span>

#include "densities/gaussian.hpp"
#include "extended/continuous_tempering.hpp"
#include "support/counting_target.hpp"
#include "targets/gaussian.hpp"

namespace pemc::extended {
namespace {

using pemc::testing::CountingTarget;

std::span<const double> span(const Vector& v) { return {v.data(), static_cast<std::size_t>(v.size())}; }

TEST(DeltaMemo, FindsEveryEvaluationSinceStartBitForBit) {
  DeltaMemo memo;
  memo.start();
  Vector a(3), b(3), c(3);
  a << 0.0, 1.0, 2.0;
  b << 0.5, -1.0, 3.0;
  c << 0.0, 1.0, 2.0000000000000004;
  memo.remember(span(a), 1.0, 2.0);
  memo.remember(span(b), 3.0, 4.0);
  double phi = 0.0, psi = 0.0;
  ASSERT_TRUE(memo.find(span(a), phi, psi));
  EXPECT_EQ(phi, 1.0);
  EXPECT_EQ(psi, 2.0);
  ASSERT_TRUE(memo.find(span(b), phi, psi));
  EXPECT_EQ(phi, 3.0);
  EXPECT_FALSE(memo.find(span(c), phi, psi));  // one ulp away
  Vector z = a;
  z[0] = -0.0;  // equal to 0.0, but not the same bits
  EXPECT_FALSE(memo.find(span(z), phi, psi));
  memo.remember_view(span(c), 5.0, 6.0);
  memo.start();  // the evaluations are forgotten, the view is not
  EXPECT_FALSE(memo.find(span(a), phi, psi));
  ASSERT_TRUE(memo.find(span(c), phi, psi));
  EXPECT_EQ(phi, 5.0);
  EXPECT_EQ(psi, 6.0);
}

TEST(DeltaMemo, KeepsTheLatestCapacityEvaluations) {
  DeltaMemo memo;
  const int n = DeltaMemo::kCapacity + 10;  // d = 2: capacity() = kCapacity
  Vector x(2);
  for (int i = 0; i < n; ++i) {
    x << i, -i;
    memo.remember(span(x), i, -i);
  }
  double phi, psi;
  for (int i = 0; i < n; ++i) {
    x << i, -i;
    const bool found = memo.find(span(x), phi, psi);
    EXPECT_EQ(found, i >= n - memo.capacity()) << i;
    if (found) {
      EXPECT_EQ(phi, i);
    }
  }
}

TEST(WeightedViewMemo, ReusesAnyPointOfTheTransitionWithoutEvaluatingTheTarget) {
  Matrix cov(3, 3);
  cov << 1.0, 0.3, 0.0, 0.3, 2.0, -0.4, 0.0, -0.4, 0.5;
  auto counting = std::make_shared<CountingTarget>(
      std::make_shared<targets::Gaussian>(Vector::LinSpaced(3, -1.0, 1.0), cov));
  const TemperingParts parts{counting,
                             std::make_shared<const densities::Gaussian>(densities::Gaussian::from_covariance(
                                 Vector::Constant(3, 0.2), 1.5 * Matrix::Identity(3, 3))),
                             0.7};
  const JointTemperingTarget joint(parts, 1.0, 0.5);
  joint.start_transition();
  std::vector<Vector> points;
  Vector g(4);
  for (int i = 0; i < 6; ++i) {
    Vector z(4);
    z << 0.1 * i, -0.2, 0.3 + i, -0.5 + 0.2 * i;
    joint.potential_and_gradient(z, g);
    points.push_back(z);
  }
  targets::WeightedView v;
  const std::int64_t before = counting->n_potential;
  joint.weighted_view(points[2], v);  // a point in the middle of the "trajectory"
  EXPECT_EQ(counting->n_potential, before);
  const Vector x = points[2].head(3);
  const double delta = parts.target->potential(x) + 0.7 - parts.base->potential(x);
  EXPECT_EQ(v.extra[kExtraDelta], delta);
  // A point never evaluated is evaluated (once).
  Vector other = points[2];
  other[1] += 0.25;
  joint.weighted_view(other, v);
  EXPECT_EQ(counting->n_potential, before + 2);  // + the check of delta above
  // After the next transition starts, the old trajectory is gone but the last view is kept.
  joint.start_transition();
  joint.weighted_view(other, v);
  EXPECT_EQ(counting->n_potential, before + 2);
  joint.weighted_view(points[4], v);
  EXPECT_EQ(counting->n_potential, before + 3);
}

}  // namespace
}  // namespace pemc::extended
