#pragma once
// Config -> pseudo-extended sampler (Nemeth et al. 2019): the extended target of
// pseudo_extended_target.hpp and the configured HMC/NUTS kernel on it. Also the config rules
// (ranges, exclusions) and the propriety warnings, for the config validator.
#include <optional>
#include <string>
#include <vector>

#include "extended/extended_sampler.hpp"
#include "extended/pseudo_extended_target.hpp"
#include "parallel/group_comm.hpp"
#include "pemc/v1/config.pb.h"
#include "pemc/v1/pseudo_extended.pb.h"

namespace pemc::extended {

// Defaults of the optional fields (pseudo_extended.proto documents them).
inline constexpr double kDefaultBetaLower = 0.001;
inline constexpr double kDefaultBetaUpper = 1.0;
inline constexpr int kMaxPseudoSamples = 1'000'000;

// One rule broken by a config: field path (prefix + "." + field), reason, offending value.
struct PseudoExtendedIssue {
  std::string field_path;
  std::string reason;
  std::optional<std::string> value;
};

// Every range/exclusion problem of `config` (no throw), fields named under `prefix`. The inner
// kernel's own fields (prefix.hmc / prefix.nuts) are NOT checked here: check them like a plain
// sampler's, with the extended dimension extended_dim() for the metric.
std::vector<PseudoExtendedIssue> config_problems(
    const v1::PseudoExtendedConfig& config, const std::string& prefix = "sampler.pseudo_extended");

// Settings known to make the instrumental q(x, beta) ∝ gamma(x)^beta g(beta) improper (eq. 7):
// beta may reach 0 (beta_lower = 0, or fixed_beta = 0) on a target that is not boxed on both
// sides. original_dim: the target's dimension if known (nullopt: assume d >= 2). Warnings, not
// errors: the run can still be started.
std::vector<PseudoExtendedIssue> propriety_warnings(
    const v1::PseudoExtendedConfig& config, const v1::TargetConfig& target,
    std::optional<std::int64_t> original_dim = std::nullopt,
    const std::string& prefix = "sampler.pseudo_extended");

// The dimension the inner kernel samples: N d + N (beta sampled) or N d (fixed beta).
std::int64_t extended_dim(const v1::PseudoExtendedConfig& config, std::int64_t original_dim);

// Options with every default applied. Throws ConfigError listing config_problems().
PseudoExtendedOptions options_from_config(const v1::PseudoExtendedConfig& config,
                                          const std::string& prefix = "sampler.pseudo_extended");

// The sampler: PseudoExtendedTarget on `target` (blocks over `group`; nullptr = this rank alone)
// and inner(space). Throws ConfigError for a bad config (fields named under
// sampler.pseudo_extended).
ExtendedSampler make_pseudo_extended(const v1::PseudoExtendedConfig& config,
                                     targets::TargetPtr target, const InnerKernelFactory& inner,
                                     parallel::GroupCommPtr group = nullptr);

}  // namespace pemc::extended
