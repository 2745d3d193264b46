#pragma once
// The No-U-Turn sampler (NutsConfig): the `nuts` sampler, and the local kernel of composite
// samplers (samplers/local_kernel.hpp). Every NUTS default and rule is here.
#include <cstdint>
#include <optional>
#include <string>

#include "config/problems.hpp"
#include "config/samplers/adaptation.hpp"
#include "kernels/kernel.hpp"
#include "pemc/v1/config.pb.h"
#include "targets/target.hpp"

namespace pemc::config {

void fill_nuts_defaults(v1::NutsConfig& n, Placement where);

// `pre` is the message's path; `dim` the sampled space's dimension when known; `top_level_warmup`
// the run's warmup for the top-level sampler, nullopt for a composite sampler's kernel.
void check_nuts(const v1::NutsConfig& n, const std::string& pre, std::optional<std::int64_t> dim,
                std::optional<std::int64_t> top_level_warmup, Problems& p);

// The kernel on `space`; `field` (the message's path) names the config in errors.
kernels::KernelPtr make_nuts_kernel(const v1::NutsConfig& n, targets::TargetPtr space,
                                    const std::string& field);

}  // namespace pemc::config
