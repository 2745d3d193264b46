#pragma once
// The row of each sampler kind, one per file in this folder; sampler_kinds.cpp lists them.
#include "config/sampler_kinds.hpp"

namespace pemc::config {

SamplerKind hmc_sampler_kind();
SamplerKind nuts_sampler_kind();
SamplerKind rwm_sampler_kind();
SamplerKind mala_sampler_kind();
SamplerKind pseudo_extended_sampler_kind();
SamplerKind continuous_tempering_sampler_kind();
SamplerKind parallel_tempering_sampler_kind();
SamplerKind simulated_tempering_sampler_kind();
SamplerKind annealed_importance_sampler_kind();

}  // namespace pemc::config
