// TemperedTarget / PathPoint, swaps and round trips.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "rng/stream.hpp"
#include "support/gradient_check.hpp"
#include "tempering/swaps.hpp"
#include "tempering/tempered_target.hpp"
#include "tempering_test_support.hpp"

namespace pemc::tempering {
namespace {

using testing::ShiftedGaussian;

Matrix example_lower() {
  Matrix l(3, 3);
  l << 1.5, 0, 0, 0.3, 0.7, 0, -0.4, 0.2, 2.0;
  return l;
}

TEST(TemperedTarget, PotentialGradientAndPathPoint) {
  auto target = std::make_shared<ShiftedGaussian>(Vector::LinSpaced(3, 1.0, 3.0),
                                                  Vector::Constant(3, 0.5), 2.0);
  auto ref = testing::dense_reference(Vector::Zero(3), example_lower());
  const Vector x = Vector::LinSpaced(3, 0.2, -0.5);
  for (double beta : {0.0, 0.3, 1.0}) {
    TemperedTarget t(target, ref, beta);
    pemc::testing::expect_gradient_matches(t, x);
    EXPECT_NEAR(t.potential(x), beta * target->potential(x) + (1 - beta) * ref->density->potential(x), 1e-12);
  }
  TemperedTarget t(target, ref, 0.3);
  PathPoint p;
  EXPECT_EQ(t.path_point(x, p), 1);  // nothing cached yet
  Vector g(3);
  const double u = t.potential_and_gradient(x, g);
  PathPoint q;
  EXPECT_EQ(t.path_point(x, q), 0);  // the last evaluation was at x
  EXPECT_EQ(q.phi, p.phi);
  EXPECT_EQ(q.psi, p.psi);
  kernels::ChainState cs;
  q.to_chain_state(0.3, cs);
  EXPECT_EQ(cs.potential, u);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(cs.grad[i], g[i], 1e-14);
  // The path point is beta-free: at another beta it equals that beta's target.
  q.to_chain_state(0.8, cs);
  TemperedTarget t8(target, ref, 0.8);
  EXPECT_NEAR(cs.potential, t8.potential(x), 1e-12);
  const Vector y = x.array() + 0.1;
  EXPECT_EQ(t.path_point(y, q), 1);  // a different point is evaluated
  EXPECT_NEAR(q.phi, target->potential(y), 1e-14);
}

TEST(TemperedTarget, PowerPathHasNoReference) {
  auto target = std::make_shared<ShiftedGaussian>(Vector::Zero(2), Vector::Ones(2), 0.0);
  TemperedTarget t(target, nullptr, 0.25);
  const Vector x = Vector::Constant(2, 1.0);
  EXPECT_NEAR(t.potential(x), 0.25 * 1.0, 1e-15);
  PathPoint p;
  t.path_point(x, p);
  EXPECT_EQ(p.psi, 0.0);
  EXPECT_EQ(p.v(), p.phi);
}

// The swap ratio equals the brute-force ratio of tempered densities.
TEST(Swaps, LogRatioMatchesDensities) {
  auto target = std::make_shared<ShiftedGaussian>(Vector::Constant(2, 1.0), Vector::Constant(2, 0.3), 5.0);
  auto ref = testing::diagonal_reference(Vector::Zero(2), Vector::Ones(2));
  const Vector xa = Vector::Constant(2, 0.1), xb = Vector::Constant(2, 0.9);
  const double b0 = 0.2, b1 = 0.7;
  TemperedTarget t0(target, ref, b0), t1(target, ref, b1);
  const double brute = -t0.potential(xb) - t1.potential(xa) + t0.potential(xa) + t1.potential(xb);
  const double va = target->potential(xa) - ref->density->potential(xa), vb = target->potential(xb) - ref->density->potential(xb);
  EXPECT_NEAR(swap_log_ratio(b0, b1, va, vb), brute, 1e-12);
  EXPECT_EQ(swap_log_ratio(0.1, 0.2, NAN, 1.0), -kInf);
}

TEST(Swaps, DeterministicEvenOddAlternatesAndAcceptsFreeSwaps) {
  const std::vector<double> betas{0.0, 0.25, 0.5, 0.75, 1.0};
  const std::vector<double> v(5, 3.0);  // equal V: every swap has probability 1
  std::vector<int> at{0, 1, 2, 3, 4}, lv{0, 1, 2, 3, 4};
  rng::Stream s(1, rng::Domain::kTest, 0, 0);
  auto o = swap_round(betas, v, at, lv, SwapScheme::kDeterministicEvenOdd, 0, s);
  EXPECT_EQ(o.proposed, (std::vector<char>{1, 0, 1, 0}));
  EXPECT_EQ(o.accepted, (std::vector<char>{1, 0, 1, 0}));
  EXPECT_EQ(at, (std::vector<int>{1, 0, 3, 2, 4}));
  o = swap_round(betas, v, at, lv, SwapScheme::kDeterministicEvenOdd, 1, s);
  EXPECT_EQ(o.proposed, (std::vector<char>{0, 1, 0, 1}));
  EXPECT_EQ(at, (std::vector<int>{1, 3, 0, 4, 2}));
  for (int r = 0; r < 5; ++r) EXPECT_EQ(at[lv[r]], r);  // inverse permutations
  for (double a : o.accept_prob) EXPECT_EQ(a, 1.0);
}

TEST(Swaps, AcceptanceFrequencyMatchesProbability) {
  const std::vector<double> betas{0.5, 1.0};
  const std::vector<double> v{0.0, -1.0};  // log alpha = 0.5 * (-1 - 0) = -0.5
  int accepted = 0;
  const int n = 20000;
  rng::Stream s(3, rng::Domain::kTest, 0, 0);
  for (int i = 0; i < n; ++i) {
    std::vector<int> at{0, 1}, lv{0, 1};
    const auto o = swap_round(betas, v, at, lv, SwapScheme::kStochasticEvenOdd, i, s);
    EXPECT_NEAR(o.accept_prob[0], std::exp(-0.5), 1e-15);
    accepted += o.accepted[0];
  }
  // The pair is proposed with probability 1/2 (even parity), then accepted w.p. exp(-0.5).
  const double p = 0.5 * std::exp(-0.5);
  EXPECT_NEAR(accepted / static_cast<double>(n), p, 5 * std::sqrt(p * (1 - p) / n));
}

TEST(RoundTrips, CountsBottomTopBottom) {
  RoundTripCounter c(1);
  const int k = 3;
  for (int level : {1, 0, 1, 2, 1, 2, 0, 2, 0, 1, 0}) c.observe({level}, k);
  // 1 (ignored: never at bottom), 0 start, ->2, ->0: trip 1; ->2 ->0: trip 2; ->1 ->0: none.
  EXPECT_EQ(c.round_trips(), 2);
  EXPECT_EQ(c.min_replica_round_trips(), 2);
  // Two replicas: the second goes to the top once and stays there, so the fewest any replica
  // made is 0 while the total counts the first one's three.
  RoundTripCounter two(2);
  two.observe({0, 0}, k);
  for (int t = 0; t < 3; ++t) {
    two.observe({2, 2}, k);
    two.observe({0, 2}, k);
  }
  EXPECT_EQ(two.round_trips(), 3);
  EXPECT_EQ(two.min_replica_round_trips(), 0);
}

}  // namespace
}  // namespace pemc::tempering
