#pragma once
// The reference of a tempering path (CT paper eq. (4)): a normalised density exp(-psi),
// ∫ exp(-psi) = 1 (densities/density.hpp): a Gaussian, or a mixture of Gaussians over a target's
// modes. With beta_0 = 0 the tempering estimators then estimate Z itself rather than Z / Z(beta_0).
//
// One reference object is shared by the tempered targets of every level, and the in-process test
// groups share it between threads: its density must be evaluated with Evaluation::kShared
// (make_reference in from_config.hpp makes it so).
#include <limits>
#include <string>

#include "densities/density.hpp"

namespace pemc::tempering {

struct Reference {
  densities::DensityPtr density;  // never null
  // The log Z approximation that came with a fitted reference (CT paper eq. (25)); NaN otherwise.
  // Recorded only (EstimatesSnapshot.base), for normalising errors as in the paper's Figure 2.
  double log_zeta = std::numeric_limits<double>::quiet_NaN();
  // How a fitted reference was obtained (extended::BaseDensity::description); empty otherwise.
  std::string description;
};

// What a fitted reference is, for the log ("mixture over 2 modes (...), log zeta -423.8"); empty
// for none or a user-given one.
std::string describe_fitted(const Reference* reference);

}  // namespace pemc::tempering
