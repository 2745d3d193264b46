// The flower-shaped 2-d target (FlowerTarget): a ring with petals.
#include "targets/flower.hpp"

#include "config/target_kinds.hpp"
#include "config/targets/all_kinds.hpp"

namespace pemc::config {

namespace {

constexpr double kRadius = 10.0;
constexpr double kAmplitude = 6.0;
constexpr int kPetals = 6;
constexpr double kSd = 1.0;

void fill_flower(v1::TargetConfig& t) {
  auto& f = *t.mutable_flower();
  if (!f.has_radius()) f.set_radius(kRadius);
  if (!f.has_amplitude()) f.set_amplitude(kAmplitude);
  if (!f.has_petals()) f.set_petals(kPetals);
  if (!f.has_sd()) f.set_sd(kSd);
}

void check_flower(const v1::FlowerTarget& f, Problems& p) {
  if (f.has_sd()) positive(p, "target.flower.sd", f.sd());
  if (f.has_petals() && f.petals() < 1)
    p.add("target.flower.petals", "must be >= 1", num(std::int64_t{f.petals()}));
}

}  // namespace

TargetKind flower_target_kind() {
  return {
      .kind = v1::TargetConfig::kFlower,
      .name = "flower",
      .validate = [](const v1::TargetConfig& t, Problems& p) { check_flower(t.flower(), p); },
      .make = [](const v1::TargetConfig& t) -> targets::TargetPtr {
        return targets::make_flower(t.flower());
      },
      .apply_defaults = fill_flower,
      .dimension = [](const v1::TargetConfig&) { return std::int64_t{2}; },
  };
}

}  // namespace pemc::config
