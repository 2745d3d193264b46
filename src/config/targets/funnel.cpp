// Neal's funnel (FunnelTarget).
#include "targets/funnel.hpp"

#include "config/limits.hpp"
#include "config/target_kinds.hpp"
#include "config/targets/all_kinds.hpp"

namespace pemc::config {

namespace {

constexpr double kVScale = 3.0;

void fill_funnel(v1::TargetConfig& t) {
  auto& f = *t.mutable_funnel();
  if (!f.has_v_scale()) f.set_v_scale(kVScale);
}

void check_funnel(const v1::FunnelTarget& f, Problems& p) {
  in_range(p, "target.funnel.dim", f.dim(), 2, kMaxDimension);
  if (f.has_v_scale()) positive(p, "target.funnel.v_scale", f.v_scale());
}

}  // namespace

TargetKind funnel_target_kind() {
  return {
      .kind = v1::TargetConfig::kFunnel,
      .name = "funnel",
      .validate = [](const v1::TargetConfig& t, Problems& p) { check_funnel(t.funnel(), p); },
      .make = [](const v1::TargetConfig& t) -> targets::TargetPtr {
        return targets::make_funnel(t.funnel());
      },
      .apply_defaults = fill_funnel,
      .dimension = [](const v1::TargetConfig& t) { return std::int64_t{t.funnel().dim()}; },
  };
}

}  // namespace pemc::config
