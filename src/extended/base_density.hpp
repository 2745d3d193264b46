#pragma once
// Continuous tempering's base density (Graham & Storkey 2017, eq. (14)): a normalised Gaussian psi
// (densities/gaussian.hpp) and the approximation log zeta to log Z that goes with it.
#include <string>

#include "densities/gaussian.hpp"

namespace pemc::extended {

struct BaseDensity {
  densities::Gaussian psi;
  double log_zeta = 0.0;
  std::string description;  // how it was obtained, for logs ("user", "laplace (3 modes)", ...)
};

}  // namespace pemc::extended
