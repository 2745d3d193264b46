// Tests of the Pareto k-hat of importance weights (src/estimators/pareto_tail.hpp): the fit
// recovers the shape of weights with a known Pareto tail, tells a light tail from a heavy one, and
// is undefined where the paper's method has too few tail draws.
#include "estimators/pareto_tail.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace pemc::estimators {
namespace {

// log weights of S draws r = U^{-k} (a Pareto tail with shape exactly k: P(r > t) = t^{-1/k}).
std::vector<double> pareto_log_weights(double k, int s, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> lw(static_cast<std::size_t>(s));
  for (auto& v : lw) v = -k * std::log(1.0 - u(gen));
  return lw;
}

TEST(ParetoKHat, RecoversAKnownShape) {
  // S = 10000: M = min(2000, 300) = 300 tail draws. The estimator's sd is about (1 + k) / sqrt(M)
  // (the GPD shape's asymptotic sd), 0.07-0.11 here; the prior shifts k by (0.5 - k) 10 / 310,
  // under 0.02. Tolerance: 4 sd.
  for (double k : {0.2, 0.5, 0.9}) {
    const auto lw = pareto_log_weights(k, 10000, 7 + static_cast<std::uint64_t>(10 * k));
    const double tol = 4 * (1 + k) / std::sqrt(300.0);
    EXPECT_NEAR(pareto_k_hat(lw), k, tol) << "k = " << k;
  }
}

TEST(ParetoKHat, LightTailsAreBelowAHalf) {
  // Normal log weights with sd 0.3 (weights exp(0.3 z): lognormal, all moments finite): the
  // fitted tail shape is near 0 on finite samples, far below the 0.7 threshold.
  std::mt19937_64 gen(3);
  std::normal_distribution<double> n(0.0, 0.3);
  std::vector<double> lw(2000);
  for (auto& v : lw) v = n(gen);
  EXPECT_LT(pareto_k_hat(lw), 0.4);
}

TEST(ParetoKHat, ScaleOfTheWeightsDoesNotMatter) {
  auto lw = pareto_log_weights(0.6, 1000, 11);
  const double k = pareto_k_hat(lw);
  for (auto& v : lw) v += 500.0;  // weights times e^500: only ratios enter
  EXPECT_NEAR(pareto_k_hat(lw), k, 1e-9);
}

TEST(ParetoKHat, UndefinedWithTooFewTailDraws) {
  // S = 24: M = ceil(min(4.8, 14.7)) = 5 needs 6 finite weights; S = 20 gives M = 4 < 5.
  EXPECT_TRUE(std::isnan(pareto_k_hat(pareto_log_weights(0.5, 20, 1))));
  EXPECT_TRUE(std::isfinite(pareto_k_hat(pareto_log_weights(0.5, 24, 1))));
  // Zero weights (-inf) count as draws but cannot be tail draws.
  std::vector<double> lw(100, -INFINITY);
  lw[0] = 0.0;
  EXPECT_TRUE(std::isnan(pareto_k_hat(lw)));
  // Equal weights: no tail at all.
  EXPECT_TRUE(std::isnan(pareto_k_hat(std::vector<double>(100, 1.0))));
}

TEST(ParetoKHat, ThresholdDependsOnTheSampleSize) {
  EXPECT_NEAR(pareto_k_threshold(100), 0.5, 1e-12);
  EXPECT_NEAR(pareto_k_threshold(1000), 1.0 - 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(pareto_k_threshold(1e6), 0.7, 1e-12);
  EXPECT_TRUE(std::isnan(pareto_k_threshold(10)));
}

}  // namespace
}  // namespace pemc::estimators
