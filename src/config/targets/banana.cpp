// The banana-shaped 2-d target (BananaTarget).
#include "targets/banana.hpp"

#include "config/target_kinds.hpp"
#include "config/targets/all_kinds.hpp"

namespace pemc::config {

namespace {

constexpr double kB = 0.1;
constexpr double kV = 100.0;

void fill_banana(v1::TargetConfig& t) {
  auto& b = *t.mutable_banana();
  if (!b.has_b()) b.set_b(kB);
  if (!b.has_v()) b.set_v(kV);
}

}  // namespace

TargetKind banana_target_kind() {
  return {
      .kind = v1::TargetConfig::kBanana,
      .name = "banana",
      .validate =
          [](const v1::TargetConfig& t, Problems& p) {
            if (t.banana().has_v()) positive(p, "target.banana.v", t.banana().v());
          },
      .make = [](const v1::TargetConfig& t) -> targets::TargetPtr {
        return targets::make_banana(t.banana());
      },
      .apply_defaults = fill_banana,
      .dimension = [](const v1::TargetConfig&) { return std::int64_t{2}; },
  };
}

}  // namespace pemc::config
