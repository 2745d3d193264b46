#pragma once
// Rules of continuous tempering's base density (BaseDensityConfig): a Gaussian given inline or in
// files, or one fitted to the target (Laplace, Boltzmann mean field, variational).
#include <string>

#include "config/problems.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::config {

// `bp` is the base's path (e.g. "sampler.continuous_tempering.base"); an unset kind is a problem.
void check_base_density(const v1::BaseDensityConfig& b, const std::string& bp, Problems& p);

}  // namespace pemc::config
