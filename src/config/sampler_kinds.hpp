#pragma once
// The table of sampler kinds: one row per case of SamplerConfig's `kind` oneof, each defined in its
// own file under src/config/samplers/ with that kind's defaults, rules and factory. apply_defaults,
// find_problems, find_warnings and make_sampler look the configured kind up here.
//
// Adding a sampler kind: its message in config.proto, a file src/config/samplers/<kind>.cpp
// defining `SamplerKind <kind>_sampler_kind()`, its declaration in samplers/all_kinds.hpp and its
// row in sampler_kinds.cpp (docs/adding-a-kind.md).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/factories.hpp"
#include "config/problems.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::config {

struct SamplerKind {
  v1::SamplerConfig::KindCase kind;
  std::string_view name;  // the oneof field's name, e.g. "nuts"

  // Fills this kind's documented defaults into unset fields of the run's sampler (and of run-level
  // fields that only this kind reads). Idempotent.
  void (*apply_defaults)(v1::RunConfig& config);

  // Adds every broken rule of this kind's message, in a fixed order. `dim` is the target's
  // dimension when the config alone fixes it.
  void (*validate)(const v1::RunConfig& config, std::optional<std::int64_t> dim, Problems& p);

  // Builds the sampler (see make_sampler in factories.hpp); `group` is never null here.
  SamplerSetup (*make)(const v1::SamplerConfig& config, targets::TargetPtr target,
                       parallel::GroupCommPtr group, const SamplerContext& context);

  // Optional (nullptr: none): settings that are valid but known to misbehave.
  std::vector<Problem> (*warnings)(const v1::RunConfig& config,
                                   std::optional<std::int64_t> dim) = nullptr;

  // Optional (nullptr: none): defaults that depend on the built target's dimension; returns one
  // line per value filled in for the run log (see apply_dimension_defaults in defaults.hpp).
  std::vector<std::string> (*apply_dimension_defaults)(v1::RunConfig& config,
                                                       std::int64_t target_dim) = nullptr;

  // Optional (nullptr: never): whether this run's sampler (defaults filled) builds something from
  // the run's mode search (config/modes.hpp), which make() then finds in its context.
  bool (*uses_modes)(const v1::RunConfig& config) = nullptr;
};

// Every sampler kind, in the oneof's field order.
const std::vector<SamplerKind>& sampler_kinds();

// The row for `kind`, or nullptr (KIND_NOT_SET, or a proto field without a row).
const SamplerKind* find_sampler_kind(v1::SamplerConfig::KindCase kind);

}  // namespace pemc::config
