#pragma once
// Validation of a loaded (and overridden, defaulted) config before any work starts.
//
// validate() checks every rule documented in config.proto and throws ONE ConfigError listing every
// problem, one per line, each "<where>: <field.path>: <reason> (got <value>)", where <where> is
// "file.pbtxt:LINE:COL", "file.pb", or "command line (--set ...)" for overridden fields.
//
// It validates the effective config, i.e. after apply_defaults(): plain proto3 fields whose zero
// means "use the default" (e.g. horseshoe sigma) must already hold their default.
//
// File paths in the config (output.path, data files, plugin library) are used as written:
// relative paths are relative to the current working directory of pemc-dist, NOT to the config
// file's directory. Checks on them (existence, R_OK/W_OK access) happen here so that a typo fails
// before any chain starts.
//
// The rules of each sampler and target kind are in its file under samplers/ and targets/
// (sampler_kinds.hpp, target_kinds.hpp); the config-wide ones (run length, seeds, init, output,
// checkpoint, chain counts) in validate.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/limits.hpp"
#include "config/load.hpp"
#include "config/problems.hpp"

namespace pemc::config {

// Which rules to check. A study checks its runs with kRun each and its own fields (output,
// checkpoint: the study's, shared by every run) once with kShared, so that a problem there is
// reported once, for the study, not as a problem of its first run.
enum class Scope {
  kAll,     // a plain config: everything
  kRun,     // everything but output.* and checkpoint.*
  kShared,  // only output.* and checkpoint.*
};

// Every problem found, in a stable order (no throw). Used by validate() and by tests.
std::vector<Problem> find_problems(const LoadedConfig& c, Scope scope = Scope::kAll);

// The dimension of the target when the config alone determines it (gaussian, correlated_gaussian,
// mixture, funnel, banana = 2, flower = 2); nullopt for data- or plugin-defined targets.
std::optional<std::int64_t> known_dimension(const pemc::v1::RunConfig& config);

// Settings that are valid but known to misbehave (e.g. an improper pseudo-extended instrumental).
std::vector<Problem> find_warnings(const LoadedConfig& c);

// Logs find_warnings() (spdlog warn), then throws ConfigError listing all problems (one per line) if there is any.
void validate(const LoadedConfig& c, Scope scope = Scope::kAll);

}  // namespace pemc::config
