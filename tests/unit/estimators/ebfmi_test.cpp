// E-BFMI (src/estimators/ebfmi.hpp) against hand-computed values, rstan::get_bfmi's definition.
#include "estimators/ebfmi.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

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

TEST(Ebfmi, SavedSumsContinueExactly) {
  // A chain checkpointed after 3 energies and resumed gives the uninterrupted chain's value.
  const double energies[] = {1.0, 2.5, 0.5, 4.0, 3.0, 7.5};
  EbfmiAccumulator whole, first;
  for (double x : energies) whole.add(x);
  for (int i = 0; i < 3; ++i) first.add(energies[i]);
  const auto sums = first.save();
  auto resumed = EbfmiAccumulator::restore(sums);
  for (int i = 3; i < 6; ++i) resumed.add(energies[i]);
  EXPECT_EQ(resumed.count(), whole.count());
  EXPECT_EQ(resumed.value(), whole.value());
}

TEST(Ebfmi, RestoreRejectsSumsNoAccumulatorHolds) {
  const std::vector<double> too_short{1.0, 2.0};
  EXPECT_THROW(EbfmiAccumulator::restore(too_short), DataError);
  const std::vector<double> negative_count{-1.0, 0.0, 0.0, 0.0, 0.0};
  EXPECT_THROW(EbfmiAccumulator::restore(negative_count), DataError);
  const std::vector<double> fractional_count{1.5, 0.0, 0.0, 0.0, 0.0};
  EXPECT_THROW(EbfmiAccumulator::restore(fractional_count), DataError);
  const std::vector<double> negative_m2{3.0, 0.0, 1.0, 0.0, -1.0};
  EXPECT_THROW(EbfmiAccumulator::restore(negative_m2), DataError);
  const std::vector<double> not_finite{3.0, std::numeric_limits<double>::infinity(), 1.0, 0.0, 1.0};
  EXPECT_THROW(EbfmiAccumulator::restore(not_finite), DataError);
}

}  // namespace
}  // namespace pemc::estimators
