#include "config/sampler_kinds.hpp"

#include "config/samplers/all_kinds.hpp"

namespace pemc::config {

const std::vector<SamplerKind>& sampler_kinds() {
  static const std::vector<SamplerKind> kinds = {
      hmc_sampler_kind(),
      nuts_sampler_kind(),
      rwm_sampler_kind(),
      mala_sampler_kind(),
      pseudo_extended_sampler_kind(),
      continuous_tempering_sampler_kind(),
      parallel_tempering_sampler_kind(),
      simulated_tempering_sampler_kind(),
      annealed_importance_sampler_kind(),
  };
  return kinds;
}

const SamplerKind* find_sampler_kind(v1::SamplerConfig::KindCase kind) {
  for (const auto& row : sampler_kinds())
    if (row.kind == kind) return &row;
  return nullptr;
}

}  // namespace pemc::config
