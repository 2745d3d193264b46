#pragma once
// Continuous tempering's base density (Graham & Storkey 2017, eq. (14)): a normalised density psi
// (densities/density.hpp: a Gaussian, or a mixture of Gaussians over the target's modes) and the
// approximation log zeta to log Z that goes with it.
#include <string>

#include "densities/density.hpp"

namespace pemc::extended {

struct BaseDensity {
  densities::DensityPtr density;  // never null; CT evaluates it from its chain's thread only
  double log_zeta = 0.0;
  std::string description;  // how it was obtained, for logs ("user", "laplace (3 modes)", ...)
};

}  // namespace pemc::extended
