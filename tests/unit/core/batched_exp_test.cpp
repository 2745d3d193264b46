// exp_nonpositive (core/batched_exp.hpp): SLEEF's 1-ULP exp behind the cut at -708.
#include "core/batched_exp.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/exp_accuracy.hpp"

namespace pemc {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kInfinity = std::numeric_limits<double>::infinity();

using test::ulps_from_exact;

// Points on [-708, 0]: uniform over the range (exponent bits) and |N(0,1)| (the common small
// arguments: softmax weights near the maximum), with a fixed seed.
std::vector<double> test_points(std::size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> wide(kExpCut, 0.0);
  std::normal_distribution<double> narrow;
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i % 3 == 0 ? wide(gen) : -std::fabs(narrow(gen));
  return v;
}

// SLEEF documents its u10 exp as within 1.0 ulp: tested against the long double exp, and against
// glibc's exp (itself < 1 ulp, so the two may differ by up to 2 ulp; ulp <= eps * value). Lengths
// 1, 2, 7 and 20001 cover the vector pairs and the odd tail.
TEST(ExpNonpositive, WithinOneUlpOfExactAndTwoOfGlibc) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{20001}}) {
    const std::vector<double> v = test_points(n, 14u + static_cast<unsigned>(n));
    std::vector<double> e(n);
    exp_nonpositive(v, e);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_LE(ulps_from_exact(v[i], e[i]), 1.0L) << "v = " << v[i];
      const double g = std::exp(v[i]);
      EXPECT_LE(std::fabs(e[i] - g), 2 * kEps * g) << "v = " << v[i];
      EXPECT_LE(ulps_from_exact(v[i], exp_nonpositive(v[i])), 1.0L) << "scalar, v = " << v[i];
    }
  }
}

// The cut: exp(0) = 1 exactly, exp(-708) a normal double, exactly +0 below -708 and at -inf (and
// for NaN), whether the value is in a vector pair or the odd tail.
TEST(ExpNonpositive, ExactAtZeroAndZeroBelowTheCut) {
  const std::vector<double> edge = {0.0,    -0.0,   kExpCut, std::nextafter(kExpCut, -kInfinity),
                                    -745.5, -1e300, -kInfinity, std::numeric_limits<double>::quiet_NaN()};
  for (std::size_t shift = 0; shift < 5; ++shift) {  // each value in each lane (2 and 4 wide) / a tail
    std::vector<double> v(shift, -1.0);
    v.insert(v.end(), edge.begin(), edge.end());
    std::vector<double> out(v.size(), -1.0);
    exp_nonpositive(v, out);
    const double* o = out.data() + shift;
    EXPECT_EQ(o[0], 1.0);
    EXPECT_EQ(o[1], 1.0);
    EXPECT_GT(o[2], std::numeric_limits<double>::min());  // exp(-708) is a normal double
    EXPECT_LE(ulps_from_exact(kExpCut, o[2]), 1.0L);
    for (std::size_t i = 3; i < edge.size(); ++i) {
      EXPECT_EQ(o[i], 0.0) << "v = " << edge[i];
      EXPECT_FALSE(std::signbit(o[i])) << "v = " << edge[i];
    }
  }
  EXPECT_EQ(exp_nonpositive(0.0), 1.0);
  EXPECT_EQ(exp_nonpositive(-kInfinity), 0.0);
  EXPECT_EQ(exp_nonpositive(std::nextafter(kExpCut, -kInfinity)), 0.0);
}

// An element's bits do not depend on where it sits (a four-wide group, a pair, the odd tail) or
// on the length: the pseudo-extended target applies this to each rank's block of items, and a
// chain must give the same bits on 1, 2 or 4 ranks.
TEST(ExpNonpositive, AnElementsBitsDoNotDependOnItsPosition) {
  const std::vector<double> v = test_points(37, 9u);
  std::vector<double> all(v.size());
  exp_nonpositive(v, all);
  for (std::size_t i = 0; i < v.size(); ++i) {
    for (std::size_t shift = 0; shift < 5; ++shift) {
      for (const std::size_t tail : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
        std::vector<double> w(shift, -0.5);
        w.push_back(v[i]);
        w.insert(w.end(), tail, -2.0);
        std::vector<double> out(w.size());
        exp_nonpositive(w, out);
        ASSERT_EQ(out[shift], all[i]) << "v = " << v[i] << " at " << shift << " of " << w.size();
      }
    }
  }
}

// In place (out = v), the PE target's use.
TEST(ExpNonpositive, InPlaceMatchesOutOfPlace) {
  const std::vector<double> v = test_points(101, 7u);
  std::vector<double> expected(v.size()), in_place = v;
  exp_nonpositive(v, expected);
  exp_nonpositive(in_place, in_place);
  EXPECT_EQ(in_place, expected);
}

TEST(ExpNonpositive, ShortOutputThrows) {
  const std::vector<double> v(3, -1.0);
  std::vector<double> out(2);
  EXPECT_THROW(exp_nonpositive(v, out), std::invalid_argument);
}

}  // namespace
}  // namespace pemc
