#include "config/samplers/tempering_reference_fit.hpp"

#include "extended/base_density_fit.hpp"

namespace pemc::config {

tempering::Reference fit_tempering_reference(const v1::BaseDensityConfig& config,
                                             const targets::Target& target,
                                             const std::string& field,
                                             const SamplerContext& context) {
  const bool mixture = config.kind_case() == v1::BaseDensityConfig::kMixture;
  auto base = extended::make_base_density(
      config, target, field, mixture ? &modes_of(context, field + ".mixture") : nullptr);
  return tempering::Reference{std::move(base.density), base.log_zeta, std::move(base.description)};
}

tempering::ReferenceFitter reference_fitter(const SamplerContext& context) {
  return [context](const v1::BaseDensityConfig& config, const targets::Target& target,
                   const std::string& field) {
    return fit_tempering_reference(config, target, field, context);
  };
}

bool reference_uses_modes(const v1::TemperingReferenceConfig& reference) {
  return reference.has_fitted() &&
         reference.fitted().kind_case() == v1::BaseDensityConfig::kMixture;
}

}  // namespace pemc::config
