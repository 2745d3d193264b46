#pragma once
// The run's mode search (config.proto ModesConfig, src/modes/mode_search.hpp): whether it runs,
// its defaults, its rules and the settings it runs with. Sampler kinds say whether they build on
// the modes (SamplerKind::uses_modes: a mixture reference or base, pseudo-extended's
// normalisation); those cannot run without the search.
#include <cstdint>

#include "config/problems.hpp"
#include "modes/mode_search.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::config {

struct ModesDefaults {
  static constexpr double kInitScale = 2.0;
  // The first batch alone must find every mode with a basin of a few per cent of the starts: the
  // Good-Turing estimate says nothing when each mode found was reached more than once (with 32
  // starts a label-switching model's sixth ordering and a 64-mode product's last mode went
  // unseen, and a sampler that builds on the modes never visited them; with 128 and 1 % both
  // were found, in under a second).
  static constexpr int kBatchStarts = 128;
  static constexpr int kMaxStarts = 1024;
  static constexpr double kUnseenProbability = 0.01;
  static constexpr int kMaxIterations = 1000;
  static constexpr double kGradientTolerance = 1e-6;
  static constexpr double kMergeDistance = 1.0;
  static constexpr int kMaxBatchStarts = 100000;
};

// Whether the run's sampler (with its defaults filled) builds something from the modes.
bool sampler_uses_modes(const pemc::v1::RunConfig& run);

// modes.enabled, default true: every run searches (its mode check then covers any sampler; a
// sampler that builds on the modes needs it).
bool mode_search_enabled(const pemc::v1::RunConfig& run);

// Fills the documented defaults into run.modes (enabled included). Idempotent; call after the
// sampler's own defaults.
void fill_modes_defaults(pemc::v1::RunConfig& run);

// Field ranges, and a sampler that needs the modes with `enabled: false`.
void check_modes(const pemc::v1::RunConfig& run, Problems& p);

// The search's settings: the run's modes fields, its first seed, the target's box.
modes::ModeSearchSettings mode_search_settings(const pemc::v1::RunConfig& run);

}  // namespace pemc::config
