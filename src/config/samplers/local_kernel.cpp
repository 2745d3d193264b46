#include "config/samplers/local_kernel.hpp"

#include <optional>

#include "config/samplers/hmc.hpp"
#include "config/samplers/nuts.hpp"
#include "core/error.hpp"

namespace pemc::config {

void fill_default_local_kernel(v1::NutsConfig& nuts) {
  nuts.set_step_size(kDefaultLocalStepSize);
  nuts.mutable_adaptation()->set_enabled(true);
  nuts.mutable_adaptation()->set_adapt_metric(false);
}

std::optional<Vector> mode_inverse_metric(const SamplerContext& context) {
  if (!context.modes || context.modes->modes.empty()) return std::nullopt;
  return context.modes->laplace_diagonal();
}

Vector same_layout(const Vector& target_diagonal, int space_dim) {
  if (target_diagonal.size() != space_dim)
    throw ConfigError("local kernel: the modes' metric has " +
                      std::to_string(target_diagonal.size()) + " entries, the space " +
                      std::to_string(space_dim));
  return target_diagonal;
}

void fill_local_kernel_defaults(v1::HmcConfig* hmc, v1::NutsConfig* nuts) {
  if (hmc) fill_hmc_defaults(*hmc, Placement::kLocal);
  if (nuts) fill_nuts_defaults(*nuts, Placement::kLocal);
}

void check_local_kernel(const v1::HmcConfig* hmc, const v1::NutsConfig* nuts,
                        const std::string& pre, Problems& p) {
  if (hmc) {
    check_hmc(*hmc, pre + ".hmc", std::nullopt, std::nullopt, p);
  } else if (nuts) {
    check_nuts(*nuts, pre + ".nuts", std::nullopt, std::nullopt, p);
  } else {
    p.add(pre, "required: set hmc or nuts (the local kernel)");
  }
}

kernels::KernelPtr make_local_kernel(const v1::HmcConfig* hmc, const v1::NutsConfig* nuts,
                                     targets::TargetPtr space, const std::string& field) {
  if (hmc) return make_hmc_kernel(*hmc, std::move(space), field + ".hmc");
  if (nuts) return make_nuts_kernel(*nuts, std::move(space), field + ".nuts");
  throw ConfigError(field + ": no kernel is set (give hmc or nuts)");
}

}  // namespace pemc::config
