#pragma once
// The table of target kinds: one row per case of TargetConfig's `kind` oneof, each defined in its
// own file under src/config/targets/ with that kind's defaults, rules, dimension and factory.
// apply_defaults, find_problems, known_dimension and make_target look the configured kind up here.
//
// Adding a target kind: its message in config.proto, a file src/config/targets/<kind>.cpp
// defining `TargetKind <kind>_target_kind()`, its declaration in targets/all_kinds.hpp and its row
// in target_kinds.cpp (docs/adding-a-kind.md).
#include <cstdint>
#include <string_view>
#include <vector>

#include "config/problems.hpp"
#include "pemc/v1/config.pb.h"
#include "targets/target.hpp"

namespace pemc::config {

struct TargetKind {
  v1::TargetConfig::KindCase kind;
  std::string_view name;  // the oneof field's name, e.g. "mixture"

  // Adds every broken rule of this kind's message, in a fixed order.
  void (*validate)(const v1::TargetConfig& config, Problems& p);

  // Builds the target (make_target in factories.hpp then applies the optional box). Construction
  // problems surface as ConfigError/DataError naming the config field or the file.
  targets::TargetPtr (*make)(const v1::TargetConfig& config);

  // Optional (nullptr: none): fills this kind's documented defaults into unset fields. Idempotent.
  void (*apply_defaults)(v1::TargetConfig& config) = nullptr;

  // Optional (nullptr: known only once the target is built): the dimension the config fixes.
  std::int64_t (*dimension)(const v1::TargetConfig& config) = nullptr;
};

// Every target kind, in the oneof's field order.
const std::vector<TargetKind>& target_kinds();

// The row for `kind`, or nullptr (KIND_NOT_SET, or a proto field without a row).
const TargetKind* find_target_kind(v1::TargetConfig::KindCase kind);

}  // namespace pemc::config
