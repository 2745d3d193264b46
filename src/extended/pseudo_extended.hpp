#pragma once
// Config -> pseudo-extended sampler (Nemeth et al. 2019): the extended target of
// pseudo_extended_target.hpp and the configured HMC/NUTS kernel on it. Also the config rules
// (ranges, exclusions) and the propriety warnings, for the config validator.
#include <optional>
#include <string>
#include <vector>

#include "extended/extended_sampler.hpp"
#include "densities/density.hpp"
#include "extended/pseudo_extended_target.hpp"
#include "parallel/group_comm.hpp"
#include "pemc/v1/config.pb.h"
#include "pemc/v1/pseudo_extended.pb.h"

namespace pemc::extended {

// Defaults of the optional fields (pseudo_extended.proto documents them).
inline constexpr double kDefaultBetaLower = 0.001;
inline constexpr double kDefaultBetaUpper = 1.0;
inline constexpr int kMaxPseudoSamples = 1'000'000;

// The shape a of g(beta) = Beta(a, b) when beta_instrumental.a is unset, for a target of
// dimension d (b stays 1):
//   a = max(1, d/2 + c(d)),   c(d) = min(1, max(0, (d - 2) / 8)):
// 1 (the paper's flat g) for d <= 2, d/2 + 1 for d >= 10, linear in between (d = 5: 2.875).
//
// Why (Nemeth et al. 2019, Section 3): the instrumental q(x, beta) ∝ gamma(x)^beta g(beta) (eq. 7)
// has beta-marginal q(beta) ∝ Z(beta) g(beta), Z(beta) = ∫ gamma(x)^beta dx. Near a Gaussian-like
// mode with covariance S, Z(beta) = gamma_max^beta (2 pi)^(d/2) |S|^(1/2) beta^(-d/2) (a mixture
// of separated modes adds up the same power of beta), so
//   q(beta) ∝ gamma_max^beta beta^(a - 1 - d/2) (1 - beta)^(b - 1).
// The paper's flat g (a = 1) gives beta^(-d/2): in its 2-D examples a log-uniform beta, but in
// 10-D beta^-5, which puts the N - 1 instrumental pseudo-samples at beta_lower (94% of q's mass
// below 2 beta_lower), far out in the tails where their weights are ~0: one pseudo-sample carries
// every draw and the chain is plain HMC at N times the cost. a = d/2 gives the log-uniform beta of
// the paper's 2-D runs in every dimension; a = d/2 + 1 a flat one. Measured (separated 4-mode
// mixtures in 2, 5, 10 and 20 dimensions, the 2-D Kou mixture; docs/pseudo-extended-defaults.md):
// log-uniform is best in 2-D (Kou: RMSE of E[x] 0.07 against 0.54 with a = 2), flat is best from
// 10-D on (20-D: 0.16 against 0.30 with a = d/2), 5-D best at d/2 + 1/2, and a beyond d/2 + 1
// starves the chain of hot pseudo-samples (10-D, a = d/2 + 3: 1.2). For d >= 3 the default also
// keeps q proper with beta_lower = 0 (a > d/2).
double default_instrumental_a(std::int64_t original_dim);

// Whether the config samples on the reference path (pseudo_extended_reference.hpp):
// instrumental REFERENCE_PATH, or unset with `reference` settings given.
bool uses_reference_path(const v1::PseudoExtendedConfig& config);

// The instrumental a run uses when `instrumental` is unset (pseudo_extended.proto): the reference
// path for a user's own model (Stan, plugin) with sampled beta on one rank per chain (and no
// standardise: true) or when
// `reference` is set, else the paper's tempered instrumental.
v1::PseudoExtendedConfig::Instrumental default_instrumental(const v1::PseudoExtendedConfig& config,
                                                            const v1::TargetConfig& target);

// Writes the dimension-derived defaults into `config` (beta_instrumental.a when beta is sampled
// and a is unset), so that a run's recorded config holds the values it ran with.
void fill_dimension_defaults(v1::PseudoExtendedConfig& config, std::int64_t original_dim);

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

// The inverse metric of the extended space (x_1, ..., x_N, eta_1, ..., eta_N) built from one of
// the target (`target_metric`: d variances, or a d x d row-major covariance when `dense`), for a
// space whose pseudo-samples have about the target's scale at every temperature (the reference
// path): the target's for every pseudo-sample, and for every eta_i the variance of
// logit((beta - beta_lower) / (beta_upper - beta_lower)) under g = Beta(a, b), trigamma(a) +
// trigamma(b) (pi^2 / 3 for the flat g), the temperatures' law when rho is close to the target
// (q(beta) ∝ Z(beta) g(beta) with Z(beta) ≈ 1). Dense: block-diagonal, (N d + N)^2 entries.
std::vector<double> extended_inverse_metric(const v1::PseudoExtendedConfig& config,
                                            const std::vector<double>& target_metric,
                                            std::int64_t original_dim, bool dense);

// Options with every default applied, those derived from the dimension (default_instrumental_a)
// for a target of dimension original_dim. Throws ConfigError listing config_problems().
PseudoExtendedOptions options_from_config(const v1::PseudoExtendedConfig& config,
                                          std::int64_t original_dim,
                                          const std::string& prefix = "sampler.pseudo_extended");

// Where standardised pseudo-samples are centred and how they are scaled
// (pseudo_extended_standardised.hpp).
struct Standardisation {
  Vector centre, scale;
};

// The reference path's rho and the log zeta the target is divided by
// (pseudo_extended_reference.hpp).
struct ReferencePath {
  densities::DensityPtr density;
  double log_zeta = 0.0;
};

// The sampler: PseudoExtendedTarget on `target` (blocks over `group`; nullptr = this rank alone),
// on standardised pseudo-samples when `standardise` is given, on the reference path when
// `reference` is given, and inner(space). Throws ConfigError for a bad config (fields named under
// sampler.pseudo_extended).
ExtendedSampler make_pseudo_extended(const v1::PseudoExtendedConfig& config,
                                     targets::TargetPtr target, const InnerKernelFactory& inner,
                                     parallel::GroupCommPtr group = nullptr,
                                     const std::optional<Standardisation>& standardise = {},
                                     const std::optional<ReferencePath>& reference = {});

}  // namespace pemc::extended
