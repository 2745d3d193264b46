#pragma once
// Rules shared by the tempering samplers (parallel and simulated tempering, AIS): the reference
// density and the ladder of inverse temperatures.
#include <string>

#include "config/problems.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::config {

// CT paper eq. (4): the reference must be a normalised density; its file and inline forms are
// exclusive. `pre` is the reference's path.
void check_reference(const v1::TemperingReferenceConfig& r, const std::string& pre, Problems& p);

// `has_reference`: the ladder tempers towards a reference, so beta = 0 is a proper density.
void check_ladder(const v1::TemperingLadderConfig& l, const std::string& pre, bool has_reference,
                  Problems& p);

}  // namespace pemc::config
