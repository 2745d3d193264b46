// E-BFMI (src/estimators/ebfmi.hpp) against hand-computed values, rstan::get_bfmi's definition.
#include "estimators/ebfmi.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace pemc::estimators {
namespace {

TEST(Ebfmi, IsMeanSquaredStepOverVariance) {
  // Energies 1, 2, 4, 7: steps 1, 2, 3, sum of squares 14, over n = 4: 3.5. Mean 3.5, squared
  // deviations 6.25 + 2.25 + 0.25 + 12.25 = 21, var (n - 1) = 7. E-BFMI = 3.5 / 7 = 0.5.
  EbfmiAccumulator e;
  for (double x : {1.0, 2.0, 4.0, 7.0}) e.add(x);
  EXPECT_EQ(e.count(), 4);
  EXPECT_DOUBLE_EQ(e.value(), 0.5);
}

TEST(Ebfmi, AlternatingEnergiesGiveALargeValue) {
  // 0, 2, 0, 2: steps of 2, sum 12, over 4: 3. Mean 1, var = 4 / 3. E-BFMI = 2.25.
  EbfmiAccumulator e;
  for (double x : {0.0, 2.0, 0.0, 2.0}) e.add(x);
  EXPECT_DOUBLE_EQ(e.value(), 2.25);
}

TEST(Ebfmi, UndefinedWithoutVarianceAndRejectsNonFinite) {
  EbfmiAccumulator none;
  EXPECT_TRUE(std::isnan(none.value()));
  EbfmiAccumulator one;
  one.add(3.0);
  EXPECT_TRUE(std::isnan(one.value()));
  EbfmiAccumulator flat;
  for (int i = 0; i < 5; ++i) flat.add(2.0);
  EXPECT_TRUE(std::isnan(flat.value()));
  EbfmiAccumulator bad;
  EXPECT_THROW(bad.add(std::numeric_limits<double>::quiet_NaN()), NumericalError);
  EXPECT_THROW(bad.add(std::numeric_limits<double>::infinity()), NumericalError);
}

}  // namespace
}  // namespace pemc::estimators
