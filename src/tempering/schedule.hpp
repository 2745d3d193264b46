#pragma once
// Inverse-temperature ladders shared by PT, ST and AIS.
#include <vector>

namespace pemc::tempering {

// K inverse temperatures from beta_min to 1, geometrically spaced (beta_min > 0), ascending.
std::vector<double> geometric_ladder(int k, double beta_min);

}  // namespace pemc::tempering
