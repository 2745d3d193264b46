#pragma once
// The row of each target kind, one per file in this folder; target_kinds.cpp lists them.
#include "config/target_kinds.hpp"

namespace pemc::config {

TargetKind gaussian_target_kind();
TargetKind correlated_gaussian_target_kind();
TargetKind mixture_target_kind();
TargetKind boltzmann_target_kind();
TargetKind horseshoe_logistic_target_kind();
TargetKind radon_target_kind();
TargetKind banana_target_kind();
TargetKind flower_target_kind();
TargetKind funnel_target_kind();
TargetKind plugin_target_kind();
TargetKind stan_target_kind();

}  // namespace pemc::config
