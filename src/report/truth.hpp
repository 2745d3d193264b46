#pragma once
// The exact truth of a config's target (analytic or by enumeration), as JSON.
#include <filesystem>
#include <string>

#include "targets/target.hpp"

namespace pemc::report {

// {"target", "dim", "mean", "second_moment", "log_z", extras...}; keys absent when unknown.
std::string truth_to_json(const std::string& target_name, int dim, const targets::Truth& truth);

// Loads and validates a run config and builds its target (throws ConfigError naming the problem).
struct ConfigTarget {
  std::string kind;  // config::target_kind_name
  targets::TargetPtr target;
};
ConfigTarget target_of_config(const std::filesystem::path& config_path);

// truth_to_json of a config's target.
std::string truth_of_config(const std::filesystem::path& config_path);

}  // namespace pemc::report
