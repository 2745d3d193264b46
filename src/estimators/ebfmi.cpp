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

double EbfmiAccumulator::value() const {
  if (n_ < 2 || m2_ <= 0.0) return std::numeric_limits<double>::quiet_NaN();
  const double n = static_cast<double>(n_);
  return (sum_sq_diff_ / n) / (m2_ / (n - 1.0));
}

}  // namespace pemc::estimators
