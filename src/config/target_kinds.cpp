#include "config/target_kinds.hpp"

#include "config/targets/all_kinds.hpp"

namespace pemc::config {

const std::vector<TargetKind>& target_kinds() {
  static const std::vector<TargetKind> kinds = {
      gaussian_target_kind(),
      correlated_gaussian_target_kind(),
      mixture_target_kind(),
      boltzmann_target_kind(),
      horseshoe_logistic_target_kind(),
      radon_target_kind(),
      banana_target_kind(),
      flower_target_kind(),
      funnel_target_kind(),
      plugin_target_kind(),
      stan_target_kind(),
  };
  return kinds;
}

const TargetKind* find_target_kind(v1::TargetConfig::KindCase kind) {
  for (const auto& row : target_kinds())
    if (row.kind == kind) return &row;
  return nullptr;
}

}  // namespace pemc::config
