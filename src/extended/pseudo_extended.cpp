#include "extended/pseudo_extended.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include <boost/math/special_functions/trigamma.hpp>

#include "core/error.hpp"
#include "extended/pseudo_extended_reference.hpp"
#include "extended/pseudo_extended_refresh.hpp"
#include "extended/pseudo_extended_standardised.hpp"

namespace pemc::extended {
namespace {

std::string num(double v) { return fmt::format("{}", v); }

void check_shape(const v1::BetaDensity& s, const std::string& path,
                 std::vector<PseudoExtendedIssue>& out) {
  if (s.has_a() && !(std::isfinite(s.a()) && s.a() > 0.0))
    out.push_back({path + ".a", "must be finite and > 0", num(s.a())});
  if (s.has_b() && !(std::isfinite(s.b()) && s.b() > 0.0))
    out.push_back({path + ".b", "must be finite and > 0", num(s.b())});
}

// default_a: the shape a when the config leaves it unset.
BetaShape shape_of(const v1::BetaDensity& s, double default_a = 1.0) {
  return {s.has_a() ? s.a() : default_a, s.has_b() ? s.b() : 1.0};
}

bool bounded_box(const v1::TargetConfig& t) {
  return t.has_box_lower() && t.has_box_upper() && std::isfinite(t.box_lower()) &&
         std::isfinite(t.box_upper());
}

}  // namespace

std::vector<PseudoExtendedIssue> config_problems(const v1::PseudoExtendedConfig& c,
                                                 const std::string& prefix) {
  std::vector<PseudoExtendedIssue> out;
  const std::string p = prefix + ".";
  if (c.n_pseudo() < 1 || c.n_pseudo() > kMaxPseudoSamples)
    out.push_back({p + "n_pseudo",
                   "required: the number of pseudo-samples N, in [1, " +
                       std::to_string(kMaxPseudoSamples) + "]",
                   std::to_string(c.n_pseudo())});
  if (c.kernel_case() == v1::PseudoExtendedConfig::KERNEL_NOT_SET)
    out.push_back({p + "kernel", "required: set hmc or nuts (the kernel run on the extended space)",
                   std::nullopt});
  if (c.ranks_per_chain() < 0)
    out.push_back(
        {p + "ranks_per_chain", "must be >= 1 (0 means 1)", std::to_string(c.ranks_per_chain())});
  // With blocks, each rank integrates only its own pseudo-samples; a dense metric couples them.
  const bool dense = (c.has_hmc() && c.hmc().metric() == v1::DENSE) ||
                     (c.has_nuts() && c.nuts().metric() == v1::DENSE);
  if (dense && c.ranks_per_chain() > 1)
    out.push_back({p + (c.has_hmc() ? "hmc" : "nuts") + ".metric",
                   "a DENSE metric couples all pseudo-samples, so it cannot be used with "
                   "ranks_per_chain " + std::to_string(c.ranks_per_chain()) +
                       " (each rank integrates only its own pseudo-samples): use DIAGONAL or UNIT, "
                       "or ranks_per_chain 1",
                   "DENSE"});
  if (c.instrumental() == v1::PseudoExtendedConfig::TEMPERED && c.has_reference())
    out.push_back({p + "reference", "has no effect with instrumental TEMPERED: remove one of them",
                   std::nullopt});
  if (uses_reference_path(c)) {
    // Its sum over every pseudo-sample needs them all on one rank; standardising by
    // beta^(-1/2) fits the tempered instrumental's widths, not the reference path's.
    const std::string field = p + (c.has_reference() ? "reference" : "instrumental");
    if (c.has_fixed_beta())
      out.push_back({field, "the reference path needs sampled temperatures: remove fixed_beta or "
                            "set instrumental: TEMPERED",
                     std::nullopt});
    if (c.ranks_per_chain() > 1)
      out.push_back({field, "the reference path needs one rank per chain: set ranks_per_chain 1 or "
                            "instrumental: TEMPERED",
                     std::to_string(c.ranks_per_chain())});
    if (c.has_standardise() && c.standardise())
      out.push_back({p + "standardise",
                     "scales pseudo-samples by beta^(-1/2), the width of gamma^beta; on the "
                     "reference path every temperature is about as wide as the target: remove "
                     "standardise or set instrumental: TEMPERED",
                     "true"});
  }
  if (c.has_fixed_beta()) {
    if (!(c.fixed_beta() >= 0.0 && c.fixed_beta() <= 1.0))
      out.push_back({p + "fixed_beta", "must be in [0, 1]", num(c.fixed_beta())});
    // Sampled-beta settings would be silently ignored: refuse them.
    const char* excl = "has no effect with fixed_beta (beta is not sampled): remove one of them";
    if (c.has_beta_lower()) out.push_back({p + "beta_lower", excl, num(c.beta_lower())});
    if (c.has_beta_upper()) out.push_back({p + "beta_upper", excl, num(c.beta_upper())});
    if (c.has_beta_init()) out.push_back({p + "beta_init", excl, num(c.beta_init())});
    if (c.has_beta_target()) out.push_back({p + "beta_target", excl, std::nullopt});
    if (c.has_beta_instrumental()) out.push_back({p + "beta_instrumental", excl, std::nullopt});
    return out;
  }
  const double lo = c.has_beta_lower() ? c.beta_lower() : kDefaultBetaLower;
  const double hi = c.has_beta_upper() ? c.beta_upper() : kDefaultBetaUpper;
  if (!(lo >= 0.0 && lo < 1.0))
    out.push_back({p + "beta_lower", "must be in [0, 1)", num(lo)});
  else if (!(hi > 0.0 && hi <= 1.0))
    out.push_back({p + "beta_upper", "must be in (0, 1]", num(hi)});
  else if (!(lo < hi))
    out.push_back({p + (c.has_beta_upper() ? "beta_upper" : "beta_lower"),
                   "need beta_lower < beta_upper (got " + num(lo) + " and " + num(hi) + ")",
                   std::nullopt});
  else if (c.has_beta_init() && !(c.beta_init() > lo && c.beta_init() < hi))
    out.push_back(
        {p + "beta_init",
         "must lie strictly inside (beta_lower, beta_upper) = (" + num(lo) + ", " + num(hi) + ")",
         num(c.beta_init())});
  check_shape(c.beta_target(), p + "beta_target", out);
  check_shape(c.beta_instrumental(), p + "beta_instrumental", out);
  return out;
}

std::vector<PseudoExtendedIssue> propriety_warnings(const v1::PseudoExtendedConfig& c,
                                                    const v1::TargetConfig& target,
                                                    std::optional<std::int64_t> original_dim,
                                                    const std::string& prefix) {
  std::vector<PseudoExtendedIssue> out;
  if (bounded_box(target)) return out;  // gamma^beta on a bounded box: q is proper
  const std::string p = prefix + ".";
  if (c.has_fixed_beta()) {
    if (c.fixed_beta() == 0.0)
      out.push_back({p + "fixed_beta",
                     "q(x) ∝ gamma(x)^0 is flat on an unbounded space, so the pseudo-extended "
                     "target (eq. 2) is improper: set fixed_beta > 0 or bound the target with "
                     "target.box_lower and target.box_upper",
                     num(0.0)});
    return out;
  }
  const double lo = c.has_beta_lower() ? c.beta_lower() : kDefaultBetaLower;
  if (lo != 0.0 || uses_reference_path(c)) return out;  // the reference path is proper at beta = 0
  // Z(beta) = integral of gamma(x)^beta dx grows like beta^(-d/2) as beta -> 0 for Gaussian tails
  // (faster for heavier tails), so the integral of Z(beta) g(beta) over (0, hi) diverges unless
  // g(beta) ~ beta^(a-1) with a > d/2. The default a (default_instrumental_a) satisfies it for
  // d >= 3; for d <= 2 it is the paper's flat g, a = 1, which does not in 2-D.
  const std::int64_t d = original_dim.value_or(2);
  const double a = c.beta_instrumental().has_a() ? c.beta_instrumental().a()
                                                 : default_instrumental_a(d);
  if (a > 0.5 * static_cast<double>(d)) return out;
  out.push_back(
      {p + "beta_lower",
       fmt::format("beta can reach 0 on an unbounded target, so the instrumental q(x, beta) ∝ "
                   "gamma(x)^beta g(beta) (eq. 7) is improper: Z(beta) = ∫ gamma(x)^beta dx "
                   "grows like beta^(-d/2) (d = {}{}) or faster as beta -> 0 and g's shape "
                   "a = {} <= d/2, so ∫ Z(beta) g(beta) dbeta diverges; the chain then drifts "
                   "to huge |x| and step sizes collapse. Set beta_lower > 0 (default {}), bound "
                   "the target (target.box_lower and target.box_upper), or use "
                   "beta_instrumental.a > d/2",
                   d, original_dim ? "" : ", assumed", a, kDefaultBetaLower),
       num(lo)});
  return out;
}

bool uses_reference_path(const v1::PseudoExtendedConfig& c) {
  return c.instrumental() == v1::PseudoExtendedConfig::REFERENCE_PATH ||
         (c.instrumental() == v1::PseudoExtendedConfig::INSTRUMENTAL_UNSET && c.has_reference());
}

v1::PseudoExtendedConfig::Instrumental default_instrumental(const v1::PseudoExtendedConfig& c,
                                                            const v1::TargetConfig& target) {
  if (c.instrumental() != v1::PseudoExtendedConfig::INSTRUMENTAL_UNSET) return c.instrumental();
  if (c.has_reference()) return v1::PseudoExtendedConfig::REFERENCE_PATH;
  const bool users_model = target.has_stan() || target.has_plugin();
  const bool standardised = c.has_standardise() && c.standardise();  // a tempered-path setting
  return users_model && !c.has_fixed_beta() && c.ranks_per_chain() <= 1 && !standardised
             ? v1::PseudoExtendedConfig::REFERENCE_PATH
             : v1::PseudoExtendedConfig::TEMPERED;
}

double default_instrumental_a(std::int64_t original_dim) {
  const double d = static_cast<double>(std::max<std::int64_t>(original_dim, 0));
  const double offset = std::clamp((d - 2.0) / 8.0, 0.0, 1.0);
  return std::max(1.0, 0.5 * d + offset);
}

void fill_dimension_defaults(v1::PseudoExtendedConfig& c, std::int64_t original_dim) {
  // On the reference path g's default is flat whatever the dimension (Z(beta) ≈ 1).
  if (c.has_fixed_beta() || c.beta_instrumental().has_a() || uses_reference_path(c)) return;
  c.mutable_beta_instrumental()->set_a(default_instrumental_a(original_dim));
}

namespace {

// g = Beta(a, b) with its defaults: a flat on the reference path (Z(beta) ≈ 1), else
// default_instrumental_a(d); b = 1.
BetaShape instrumental_shape(const v1::PseudoExtendedConfig& c, std::int64_t original_dim) {
  return shape_of(c.beta_instrumental(),
                  uses_reference_path(c) ? 1.0 : default_instrumental_a(original_dim));
}

}  // namespace

std::int64_t extended_dim(const v1::PseudoExtendedConfig& c, std::int64_t original_dim) {
  const std::int64_t n = c.n_pseudo();
  return n * original_dim + (c.has_fixed_beta() ? 0 : n);
}

std::vector<double> extended_inverse_metric(const v1::PseudoExtendedConfig& c,
                                            const std::vector<double>& target_metric,
                                            std::int64_t original_dim, bool dense) {
  const std::int64_t d = original_dim, n = c.n_pseudo(), dim = extended_dim(c, d);
  if (static_cast<std::int64_t>(target_metric.size()) != (dense ? d * d : d))
    throw ConfigError(fmt::format("sampler.pseudo_extended: a target metric of {} entries for a "
                                  "target of dimension {}",
                                  target_metric.size(), d));
  const auto g = instrumental_shape(c, d);
  const double eta_variance =
      c.has_fixed_beta() ? 0.0 : boost::math::trigamma(g.a) + boost::math::trigamma(g.b);
  const auto at = [dim](std::int64_t row, std::int64_t col) {
    return static_cast<std::size_t>(row * dim + col);
  };
  std::vector<double> out(static_cast<std::size_t>(dense ? dim * dim : dim), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t r = 0; r < d; ++r) {
      if (!dense) {
        out[static_cast<std::size_t>(i * d + r)] = target_metric[static_cast<std::size_t>(r)];
        continue;
      }
      for (std::int64_t k = 0; k < d; ++k)
        out[at(i * d + r, i * d + k)] = target_metric[static_cast<std::size_t>(r * d + k)];
    }
  for (std::int64_t e = n * d; e < dim; ++e)
    out[dense ? at(e, e) : static_cast<std::size_t>(e)] = eta_variance;
  return out;
}

PseudoExtendedOptions options_from_config(const v1::PseudoExtendedConfig& c,
                                          std::int64_t original_dim, const std::string& prefix) {
  const auto problems = config_problems(c, prefix);
  if (!problems.empty()) {
    std::string msg;
    for (const auto& pr : problems)
      msg += (msg.empty() ? "" : "\n") + pr.field_path + ": " + pr.reason +
             (pr.value ? " (got " + *pr.value + ")" : "");
    throw ConfigError(msg);
  }
  PseudoExtendedOptions o;
  o.n_pseudo = c.n_pseudo();
  if (c.has_fixed_beta()) {
    o.fixed_beta = c.fixed_beta();
    return o;
  }
  o.beta_lower = c.has_beta_lower() ? c.beta_lower() : kDefaultBetaLower;
  o.beta_upper = c.has_beta_upper() ? c.beta_upper() : kDefaultBetaUpper;
  if (c.has_beta_init()) o.beta_init = c.beta_init();
  o.beta_target = shape_of(c.beta_target());
  o.beta_instrumental = instrumental_shape(c, original_dim);
  return o;
}

ExtendedSampler make_pseudo_extended(const v1::PseudoExtendedConfig& config,
                                     targets::TargetPtr target, const InnerKernelFactory& inner,
                                     parallel::GroupCommPtr group,
                                     const std::optional<Standardisation>& standardise,
                                     const std::optional<ReferencePath>& reference) {
  if (!target) throw ConfigError("sampler.pseudo_extended: no target");
  const std::int64_t d = target->dim();
  if (reference && standardise)
    throw ConfigError("sampler.pseudo_extended: standardise and reference exclude each other");
  if (reference)
    target = std::make_shared<const ReferenceRatioTarget>(std::move(target), reference->density,
                                                          reference->log_zeta);
  auto pe = std::make_shared<const PseudoExtendedTarget>(
      std::move(target), options_from_config(config, d), std::move(group));
  ExtendedSampler s;
  std::shared_ptr<const ReferencePathPseudoExtended> reference_space;
  if (reference)
    s.space = reference_space =
        std::make_shared<const ReferencePathPseudoExtended>(pe, reference->density);
  else if (standardise)
    s.space = std::make_shared<const StandardisedPseudoExtended>(pe, standardise->centre,
                                                                 standardise->scale);
  else
    s.space = pe;
  s.kernel = inner(s.space);
  if (!s.kernel) throw ConfigError("sampler.pseudo_extended: no kernel is set (give hmc or nuts)");
  if (reference)  // pseudo-samples also jump between rho's modes (pseudo_extended_refresh.hpp)
    s.kernel = std::make_unique<ReferenceRefreshKernel>(std::move(s.kernel), reference_space);
  return s;
}

}  // namespace pemc::extended
