#include "estimators/ebfmi.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace pemc::estimators {

void EbfmiAccumulator::add(double energy) {
  if (!std::isfinite(energy))
    throw NumericalError("E-BFMI: energy " + std::to_string(energy) + " is not finite");
  if (n_ > 0) sum_sq_diff_ += (energy - previous_) * (energy - previous_);
  previous_ = energy;
  ++n_;
  const double delta = energy - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (energy - mean_);
}

std::array<double, EbfmiAccumulator::kSavedSize> EbfmiAccumulator::save() const {
  return {static_cast<double>(n_), previous_, sum_sq_diff_, mean_, m2_};
}

EbfmiAccumulator EbfmiAccumulator::restore(std::span<const double> sums) {
  if (sums.size() != kSavedSize)
    throw DataError("E-BFMI sums: " + std::to_string(sums.size()) + " numbers, expected " +
                    std::to_string(kSavedSize));
  for (double v : sums)
    if (!std::isfinite(v)) throw DataError("E-BFMI sums: a sum is not finite");
  if (sums[0] < 0.0 || sums[0] != std::floor(sums[0]) || sums[2] < 0.0 || sums[4] < 0.0)
    throw DataError("E-BFMI sums: a negative or fractional count, or a negative sum of squares");
  EbfmiAccumulator a;
  a.n_ = static_cast<std::int64_t>(sums[0]);
  a.previous_ = sums[1];
  a.sum_sq_diff_ = sums[2];
  a.mean_ = sums[3];
  a.m2_ = sums[4];
  return a;
}

double EbfmiAccumulator::value() const {
  if (n_ < 2 || m2_ <= 0.0) return std::numeric_limits<double>::quiet_NaN();
  const double n = static_cast<double>(n_);
  return (sum_sq_diff_ / n) / (m2_ / (n - 1.0));
}

}  // namespace pemc::estimators
