#include "tempering/schedule.hpp"

#include <cmath>
#include <stdexcept>

namespace pemc::tempering {

std::vector<double> geometric_ladder(int k, double beta_min) {
  if (k < 2 || !(beta_min > 0.0) || !(beta_min < 1.0))
    throw std::invalid_argument("geometric_ladder: need k >= 2 and 0 < beta_min < 1");
  std::vector<double> b(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) b[i] = std::pow(beta_min, 1.0 - static_cast<double>(i) / (k - 1));
  b.back() = 1.0;
  return b;
}

}  // namespace pemc::tempering
