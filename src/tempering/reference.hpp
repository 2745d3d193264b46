#pragma once
// The reference of a tempering path (CT paper eq. (4)): a normalised Gaussian psi, ∫ exp(-psi) = 1
// (densities/gaussian.hpp, evaluated with Evaluation::kShared: the levels' targets share one
// reference, and the in-process test groups share it between threads). With beta_0 = 0 the
// tempering estimators then estimate Z itself rather than Z / Z(beta_0).
#include <limits>

#include "densities/gaussian.hpp"

namespace pemc::tempering {

struct Reference {
  densities::Gaussian psi;
  // The log Z approximation that came with a fitted reference (CT paper eq. (25)); NaN otherwise.
  // Recorded only (EstimatesSnapshot.base), for normalising errors as in the paper's Figure 2.
  double log_zeta = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace pemc::tempering
