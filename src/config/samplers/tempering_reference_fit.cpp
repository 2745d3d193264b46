#include "config/samplers/tempering_reference_fit.hpp"

#include "extended/base_density_fit.hpp"

namespace pemc::config {

tempering::Reference fit_tempering_reference(const v1::BaseDensityConfig& config,
                                             const targets::Target& target,
                                             const std::string& field) {
  auto base = extended::make_base_density(config, target, field);
  return tempering::Reference{std::move(base.density), base.log_zeta};
}

}  // namespace pemc::config
