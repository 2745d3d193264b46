// A Boltzmann machine relaxation (BoltzmannTarget): W/Q and b from files, or generated.
#include "targets/boltzmann.hpp"

#include "config/file_checks.hpp"
#include "config/target_kinds.hpp"
#include "config/targets/all_kinds.hpp"

namespace pemc::config {

namespace {

// The generator's scales and the enumeration limit (config.proto BoltzmannTarget). Plain proto3
// fields: 0 means unset, which is outside their valid range.
constexpr double kWeightScaleHi = 6.0;
constexpr double kWeightScaleLo = 2.0;
constexpr double kBiasScale = 0.1;
constexpr int kDefaultMaxEnumerationUnits = 30;

constexpr int kMaxBoltzmannUnits = 64;
constexpr int kMaxEnumerationUnitsLimit = 40;  // 2^40 states: beyond any run's budget
// A Boltzmann machine has at most kMaxBoltzmannUnits units, so its W, b and Q files hold at most a
// few thousand numbers; a larger file is the wrong file (and would be read into memory line by
// line).
constexpr std::uintmax_t kMaxBoltzmannFileBytes = std::uintmax_t{64} << 20;

void fill_boltzmann(v1::TargetConfig& t) {
  auto& b = *t.mutable_boltzmann();
  if (b.has_generated()) {
    auto& g = *b.mutable_generated();
    if (g.weight_scale_hi() == 0) g.set_weight_scale_hi(kWeightScaleHi);
    if (g.weight_scale_lo() == 0) g.set_weight_scale_lo(kWeightScaleLo);
    if (g.bias_scale() == 0) g.set_bias_scale(kBiasScale);
  }
  if (b.max_enumeration_units() == 0) {
    b.set_max_enumeration_units(kDefaultMaxEnumerationUnits);
  }
}

void check_boltzmann(const v1::BoltzmannTarget& b, Problems& p) {
  const std::string pre = "target.boltzmann";
  const bool w = !b.weights_file().empty();
  const bool q = !b.q_file().empty();
  const bool g = b.has_generated();
  const int sources = int{w} + int{q} + int{g};
  if (sources == 0) {
    p.add(pre,
          "required: exactly one source of the model: weights_file + bias_file, q_file + "
          "bias_file, or generated { ... }");
    return;
  }
  if (sources > 1) {
    if (w && q)
      p.add(pre + ".q_file", "weights_file and q_file are exclusive (give one)",
            quoted(b.q_file()));
    if (g && (w || q)) {
      p.add(pre + ".generated", std::string("generated is exclusive with ") +
                                    (w ? "weights_file" : "q_file") + " (give one source)");
    }
    return;
  }
  if (w || q) {
    if (b.bias_file().empty()) {
      p.add(pre + ".bias_file", std::string("required with ") + (w ? "weights_file" : "q_file"));
    } else {
      readable_file(p, pre + ".bias_file", b.bias_file(), kMaxBoltzmannFileBytes);
    }
    if (w) readable_file(p, pre + ".weights_file", b.weights_file(), kMaxBoltzmannFileBytes);
    if (q) readable_file(p, pre + ".q_file", b.q_file(), kMaxBoltzmannFileBytes);
  } else {
    if (!b.bias_file().empty()) {
      p.add(pre + ".bias_file", "not used with generated (the biases are generated too); remove it",
            quoted(b.bias_file()));
    }
    const auto& gen = b.generated();
    in_range(p, pre + ".generated.n_units", gen.n_units(), 2, kMaxBoltzmannUnits);
    positive(p, pre + ".generated.weight_scale_hi", gen.weight_scale_hi());
    positive(p, pre + ".generated.weight_scale_lo", gen.weight_scale_lo());
    positive(p, pre + ".generated.bias_scale", gen.bias_scale());
  }
  in_range(p, pre + ".max_enumeration_units", b.max_enumeration_units(), 0,
           kMaxEnumerationUnitsLimit);
}

}  // namespace

TargetKind boltzmann_target_kind() {
  return {
      .kind = v1::TargetConfig::kBoltzmann,
      .name = "boltzmann",
      .validate = [](const v1::TargetConfig& t, Problems& p) { check_boltzmann(t.boltzmann(), p); },
      .make = [](const v1::TargetConfig& t) -> targets::TargetPtr {
        return targets::make_boltzmann(t.boltzmann());
      },
      .apply_defaults = fill_boltzmann,
  };
}

}  // namespace pemc::config
