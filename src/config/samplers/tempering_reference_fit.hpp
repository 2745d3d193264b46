#pragma once
// The `fitted` reference of the tempering samplers (parallel and simulated tempering, AIS):
// TemperingReferenceConfig.fitted is a BaseDensityConfig, fitted exactly as continuous tempering
// fits its base density (extended/base_density_fit.hpp). Config joins the two modules here so that
// tempering/ does not depend on extended/: the tempering samplers take this as their
// tempering::ReferenceFitter.
#include <string>

#include "config/factories.hpp"
#include "pemc/v1/config.pb.h"
#include "targets/target.hpp"
#include "tempering/from_config.hpp"
#include "tempering/reference.hpp"

namespace pemc::config {

// The base density continuous tempering would build for `target` from `config`, with its log zeta
// (Reference::log_zeta). `field` names the config path in errors. Throws ConfigError / IoError /
// DataError as extended::make_base_density does.
// A `mixture` is built from the run's modes (modes_of(context)).
tempering::Reference fit_tempering_reference(const v1::BaseDensityConfig& config,
                                             const targets::Target& target,
                                             const std::string& field,
                                             const SamplerContext& context);

// fit_tempering_reference with this context, as the tempering factories take it.
tempering::ReferenceFitter reference_fitter(const SamplerContext& context);

// Whether a tempering sampler's reference is fitted to the run's modes (a `mixture`).
bool reference_uses_modes(const v1::TemperingReferenceConfig& reference);

}  // namespace pemc::config
