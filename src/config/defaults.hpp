#pragma once
// The documented defaults of config.proto, filled into unset fields so that the rest of pemc (and
// the run's recorded config) sees the effective values.
//
// "Unset" means: not present for `optional` fields and messages; zero/empty for plain proto3
// scalars whose documented default is not zero (e.g. horseshoe sigma, boltzmann scales,
// chains_per_seed). An explicit 0 in such a plain field therefore also gets the default, which is
// harmless because 0 is outside their valid range. Negative values are left for validate().
//
// The run-level defaults are here; each sampler and target kind declares and fills its own in its
// file under samplers/ and targets/ (sampler_kinds.hpp, target_kinds.hpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/load.hpp"

namespace pemc::config {

// The run-level defaults (config.proto RunConfig comments).
struct Defaults {
  static constexpr std::int64_t kWarmup = 0;
  static constexpr int kThin = 1;
  static constexpr int kFlushEvery = 64;
  static constexpr double kProgressIntervalSeconds = 5.0;
  static constexpr int kChainsPerSeed = 1;

  static constexpr double kInitUniformRadius = 2.0;
};

// Fills every documented default into unset fields. The run name defaults to the config file's
// stem. Idempotent. Call after apply_overrides and before validate.
void apply_defaults(LoadedConfig& c);

// Fills the defaults that depend on the target's dimension, known once the target is built
// (pseudo-extended: beta_instrumental.a, extended::default_instrumental_a), and returns
// one line per value filled in ("field = value (why)") for the run log. Idempotent.
std::vector<std::string> apply_dimension_defaults(pemc::v1::RunConfig& config,
                                                  std::int64_t target_dim);

}  // namespace pemc::config
