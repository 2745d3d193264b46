#include "tempering/schedule.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "rng/stream.hpp"

namespace pemc::tempering {
namespace {

TEST(Ladders, EndpointsAndOrder) {
  for (const auto& b : {geometric_ladder(7, 0.01), linear_ladder(7, 0.0), linear_ladder(5, 0.2),
                        sigmoidal_ladder(9, 0.0, 4.0), sigmoidal_ladder(4, 0.1, 1.0)}) {
    EXPECT_NO_THROW(check_ladder(b));
    EXPECT_EQ(b.back(), 1.0);
  }
  EXPECT_DOUBLE_EQ(geometric_ladder(7, 0.01).front(), 0.01);
  EXPECT_DOUBLE_EQ(geometric_ladder(3, 0.01)[1], 0.1);  // geometric mean of the ends
  EXPECT_DOUBLE_EQ(linear_ladder(5, 0.2)[2], 0.6);
  const auto s = sigmoidal_ladder(9, 0.0, 4.0);
  EXPECT_EQ(s.front(), 0.0);
  EXPECT_NEAR(s[4], 0.5, 1e-15);  // symmetric about the middle
  EXPECT_LT(s[1] - s[0], s[5] - s[4]);  // dense near the ends
}

TEST(Ladders, InvalidInputsThrow) {
  EXPECT_THROW(geometric_ladder(1, 0.1), std::invalid_argument);
  EXPECT_THROW(geometric_ladder(4, 0.0), std::invalid_argument);
  EXPECT_THROW(sigmoidal_ladder(4, 0.0, 0.0), std::invalid_argument);
  EXPECT_THROW(check_ladder({0.0}), std::invalid_argument);
  EXPECT_THROW(check_ladder({0.0, 0.5, 0.5, 1.0}), std::invalid_argument);
  EXPECT_THROW(check_ladder({0.0, 0.5, 0.9}), std::invalid_argument);
  EXPECT_THROW(check_ladder({-0.1, 1.0}), std::invalid_argument);
}

TEST(MonotoneCubic, InterpolatesKnotsAndReproducesLines) {
  const MonotoneCubic f({0.0, 0.1, 0.5, 1.0}, {1.0, 1.2, 2.0, 3.0});
  EXPECT_DOUBLE_EQ(f(0.0), 1.0);
  EXPECT_DOUBLE_EQ(f(0.1), 1.2);
  EXPECT_DOUBLE_EQ(f(0.5), 2.0);
  EXPECT_DOUBLE_EQ(f(1.0), 3.0);
  // Data on a line: all secants equal, Hermite slopes equal them, the interpolant is that line.
  const MonotoneCubic g({0.0, 0.3, 0.4, 1.0}, {0.0, 0.6, 0.8, 2.0});
  for (double t = 0; t <= 1.0; t += 0.01) EXPECT_NEAR(g(t), 2.0 * t, 1e-14);
}

TEST(MonotoneCubic, MonotoneOnSteppedDataAndInverts) {
  // Plateaus and a jump: an unconstrained cubic spline would overshoot here.
  const std::vector<double> x{0.0, 0.1, 0.2, 0.3, 0.6, 0.7, 1.0};
  const std::vector<double> y{0.0, 0.0, 0.05, 2.0, 2.0, 2.1, 4.0};
  const MonotoneCubic f(x, y);
  double prev = f(0.0);
  for (int i = 1; i <= 10000; ++i) {
    const double v = f(i / 10000.0);
    ASSERT_GE(v, prev - 1e-15) << "at t = " << i / 10000.0;
    prev = v;
  }
  EXPECT_NEAR(f(0.45), 2.0, 1e-15);  // flat segment stays flat
  for (double target = 0.01; target < 4.0; target += 0.037) {
    const double t = f.inverse(target);
    EXPECT_NEAR(f(t), target, 1e-9) << target;
  }
  EXPECT_EQ(f.inverse(-1.0), 0.0);
  EXPECT_NEAR(f.inverse(2.0), 0.3, 1e-9);  // the smallest t reaching the plateau
}

TEST(Barrier, CumulativeSums) {
  const auto b = communication_barrier({0.1, 0.2, 0.3});
  ASSERT_EQ(b.cumulative.size(), 4u);
  EXPECT_DOUBLE_EQ(b.cumulative[0], 0.0);
  EXPECT_DOUBLE_EQ(b.cumulative[2], 0.1 + 0.2);
  EXPECT_DOUBLE_EQ(b.total, 0.6);
  EXPECT_DOUBLE_EQ(communication_barrier({1.5, -0.2}).total, 1.0);  // clamped to [0, 1]
}

TEST(Barrier, EqualisedLadderHasEqualBarrierIncrements) {
  const std::vector<double> betas{0.0, 0.05, 0.2, 0.5, 1.0};
  const std::vector<double> rejection{0.9, 0.3, 0.1, 0.05};
  for (int n_new : {5, 9, 17}) {
    const auto nb = equalise_barrier(betas, rejection, n_new);
    ASSERT_EQ(static_cast<int>(nb.size()), n_new);
    EXPECT_NO_THROW(check_ladder(nb));
    EXPECT_EQ(nb.front(), 0.0);
    const auto bar = communication_barrier(rejection);
    const MonotoneCubic lambda(betas, bar.cumulative);
    for (int j = 0; j < n_new; ++j)
      EXPECT_NEAR(lambda(nb[j]), bar.total * j / (n_new - 1), 1e-9) << "level " << j;
  }
  // Most of the barrier is in the first interval, so most new levels go there.
  const auto nb = equalise_barrier(betas, rejection, 9);
  EXPECT_LT(nb[4], 0.05);
}

TEST(Barrier, ConstantRejectionOnUniformLadderIsAFixedPoint) {
  const auto betas = linear_ladder(6, 0.0);
  const auto nb = equalise_barrier(betas, std::vector<double>(5, 0.3), 6);
  for (int j = 0; j < 6; ++j) EXPECT_NEAR(nb[j], betas[j], 1e-12);
}

TEST(Barrier, NoRejectionGivesLinearLadder) {
  const auto nb = equalise_barrier({0.1, 0.5, 1.0}, {0.0, 0.0}, 4);
  const auto lin = linear_ladder(4, 0.1);
  for (int j = 0; j < 4; ++j) EXPECT_DOUBLE_EQ(nb[j], lin[j]);
}

TEST(Barrier, ReplicasFromBarrier) {
  EXPECT_EQ(replicas_for_barrier(3.2, 2.0, 3, 64), 8);  // ceil(6.4) + 1
  EXPECT_EQ(replicas_for_barrier(0.1, 2.0, 3, 64), 3);
  EXPECT_EQ(replicas_for_barrier(100.0, 2.0, 3, 64), 64);
  EXPECT_EQ(replicas_for_barrier(3.0, 2.0, 2, 64), 7);
}

}  // namespace
}  // namespace pemc::tempering
