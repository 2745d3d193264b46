// scalar_exp (core/scalar_exp.hpp): the table-driven exp NUTS takes per leapfrog step. Within
// 1 ulp, the same bits with and without the FMA instruction, libm's results outside (-708, 709).
#include "core/scalar_exp.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "support/exp_accuracy.hpp"

namespace pemc {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

using test::ulps_from_exact;

// Fixed-seed points: uniform over the whole fast range, over [-20, 20] (NUTS's log weights H0 - H)
// and over [-ln 2 / 256, ln 2 / 256] (k = 0: the polynomial alone). Each table entry j is reached by
// ~1/128 of the first two sets.
std::vector<double> test_points(std::size_t n_per_set) {
  std::mt19937_64 gen(20261126);
  std::vector<double> v;
  for (auto [lo, hi] : {std::pair{-707.99, 708.99}, std::pair{-20.0, 20.0},
                        std::pair{-0.0027, 0.0027}}) {
    std::uniform_real_distribution<double> u(lo, hi);
    for (std::size_t i = 0; i < n_per_set; ++i) v.push_back(u(gen));
  }
  return v;
}

TEST(ScalarExp, WithinOneUlp) {
  long double worst = 0;
  double worst_at = 0;
  for (double v : test_points(400000)) {
    const long double err = ulps_from_exact(v, scalar_exp(v));
    if (err > worst) {
      worst = err;
      worst_at = v;
    }
  }
  EXPECT_LE(worst, 1.0L) << "at x = " << worst_at;
}

TEST(ScalarExp, EveryTableEntryAtItsNode) {
  // x = j ln 2 / 128 (nearest double) for j = -640..640: r is within rounding of 0, so the result
  // is the table entry (times 2^m) up to the polynomial's first-order term. One wrong entry fails.
  for (int j = -640; j <= 640; ++j) {
    const double x = j * (0.69314718055994530942 / 128);
    EXPECT_LE(ulps_from_exact(x, scalar_exp(x)), 1.0L) << "j = " << j;
  }
}

TEST(ScalarExp, FmaInstructionAndSoftwareFmaGiveTheSameBits) {
  if (!detail::kScalarExpHasFma) GTEST_SKIP() << "this CPU has no FMA instruction";
  int differing = 0;
  for (double v : test_points(200000))
    differing += std::bit_cast<std::uint64_t>(detail::scalar_exp_fma(v)) !=
                 std::bit_cast<std::uint64_t>(detail::scalar_exp_soft_fma(v));
  EXPECT_EQ(differing, 0);
}

TEST(ScalarExp, SpecialValuesAndRangeEnds) {
  EXPECT_EQ(scalar_exp(0.0), 1.0);
  EXPECT_EQ(scalar_exp(-0.0), 1.0);
  EXPECT_EQ(scalar_exp(-kInfinity), 0.0);
  EXPECT_EQ(scalar_exp(kInfinity), kInfinity);
  EXPECT_TRUE(std::isnan(scalar_exp(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_EQ(scalar_exp(1000.0), kInfinity);
  EXPECT_EQ(scalar_exp(-1000.0), 0.0);
  // Outside (-708, 709) the result is libm's, bit for bit (subnormals, the overflow threshold).
  for (double x : {-708.0, -708.5, -744.0, -745.2, 709.0, 709.7, 709.8})
    EXPECT_EQ(std::bit_cast<std::uint64_t>(scalar_exp(x)), std::bit_cast<std::uint64_t>(std::exp(x)))
        << "x = " << x;
  // Just inside: normal, finite results within 1 ulp.
  for (double x : {-707.999, 708.999, 1.0, -1.0, 0.5})
    EXPECT_LE(ulps_from_exact(x, scalar_exp(x)), 1.0L) << "x = " << x;
}

}  // namespace
}  // namespace pemc
