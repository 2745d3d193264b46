// Pseudo-extended MCMC (PseudoExtendedConfig, src/extended/pseudo_extended.hpp): the
// `pseudo_extended` sampler. Its option rules live with the sampler (extended::config_problems);
// this file adds the local kernel's and registers the kind.
#include "extended/pseudo_extended.hpp"

#include <fmt/format.h>

#include "config/sampler_kinds.hpp"
#include "config/samplers/adaptation.hpp"
#include "config/samplers/all_kinds.hpp"
#include "config/samplers/local_kernel.hpp"
#include "extended/mixture_base.hpp"
#include "targets/shifted.hpp"

namespace pemc::config {

namespace {

const std::string kPath = "sampler.pseudo_extended";

// The local kernel's adaptation and its metric kind (METRIC_UNSPECIFIED resolved), nullptr without
// a kernel.
const v1::AdaptationConfig* kernel_adaptation(const v1::PseudoExtendedConfig& c) {
  if (c.has_nuts()) return &c.nuts().adaptation();
  if (c.has_hmc()) return &c.hmc().adaptation();
  return nullptr;
}
v1::MetricKind kernel_metric(const v1::PseudoExtendedConfig& c) {
  if (c.has_hmc()) return c.hmc().metric() == v1::METRIC_UNSPECIFIED ? v1::UNIT : c.hmc().metric();
  return c.nuts().metric() == v1::METRIC_UNSPECIFIED ? v1::DIAGONAL : c.nuts().metric();
}

// Pooled warmup (src/warmup/pooled_round_config.hpp) warms the kernel up on the target itself,
// which fits only a space whose pseudo-samples have the target's scale: the reference path.
void check_pooled(const v1::RunConfig& run, const std::string& pre, Problems& p) {
  const auto& c = run.sampler().pseudo_extended();
  const auto* a = kernel_adaptation(c);
  if (!a) return;
  const std::string kernel = pre + (c.has_hmc() ? ".hmc" : ".nuts") + ".adaptation";
  if (a->pooled() && !extended::uses_reference_path(c))
    p.add(kernel + ".pooled",
          "pooled warmup of pseudo-extended needs the reference path (instrumental: "
          "REFERENCE_PATH, the default for a Stan model or plugin): it warms the kernel up on the "
          "target itself, whose scale the pseudo-samples have only there",
          "true");
  check_pooled_warmup(*a, kernel, &run, kernel_metric(c), p);
  const int given = c.has_hmc() ? c.hmc().inverse_metric_size() : c.nuts().inverse_metric_size();
  if (a->pooled() && given > 0)
    p.add(pre + (c.has_hmc() ? ".hmc" : ".nuts") + ".inverse_metric",
          "a pooled warmup estimates the metric on the target and lays it out over the extended "
          "space, so a given extended metric would be ignored: drop it, or set adaptation { "
          "pooled: false } to start from it",
          std::to_string(given) + " entries");
}

void check_pseudo_extended(const v1::RunConfig& run, const std::string& pre, Problems& p) {
  // The kernel's pooled warmup is checked with the run (check_pooled), not as a composite
  // sampler's kernel, which refuses it.
  v1::PseudoExtendedConfig c = run.sampler().pseudo_extended();
  for (auto* a : {c.has_nuts() ? c.mutable_nuts()->mutable_adaptation() : nullptr,
                  c.has_hmc() ? c.mutable_hmc()->mutable_adaptation() : nullptr})
    if (a) {
      a->clear_pooled();
      a->clear_pooled_window();
    }
  check_pooled(run, pre, p);
  if (c.has_standardise() && c.standardise() && (c.has_fixed_beta() || c.ranks_per_chain() > 1))
    p.add(pre + ".standardise",
          "needs sampled temperatures on one rank per chain (no fixed_beta, ranks_per_chain 1)",
          "true");
  for (auto& issue : extended::config_problems(c, pre)) {
    // The kernel's absence is reported by check_local_kernel_of with the same path.
    if (issue.field_path == pre + ".kernel") continue;
    p.add(issue.field_path, issue.reason, issue.value);
  }
  check_local_kernel_of(c, pre, p);
}

// beta_instrumental.a depends on the target's dimension (extended::default_instrumental_a).
std::vector<std::string> fill_dimension_defaults(v1::RunConfig& config, std::int64_t target_dim) {
  std::vector<std::string> filled;
  auto& pe = *config.mutable_sampler()->mutable_pseudo_extended();
  const bool had_a = pe.beta_instrumental().has_a();
  extended::fill_dimension_defaults(pe, target_dim);
  if (extended::uses_reference_path(pe))
    filled.push_back(
        "sampler.pseudo_extended.instrumental = REFERENCE_PATH (the pseudo-samples are tempered "
        "towards a Gaussian mixture over the modes found, with independence moves from it; the "
        "default for a Stan model or plugin: docs/pseudo-extended-defaults.md#the-reference-path)");
  if (!had_a && pe.beta_instrumental().has_a())
    filled.push_back(fmt::format(
        "sampler.pseudo_extended.beta_instrumental.a = {} (the default for the target's "
        "dimension d = {}: max(1, d/2 + min(1, max(0, (d - 2)/8))), so that the instrumental "
        "pseudo-samples spread over all temperatures; docs/pseudo-extended-defaults.md)",
        pe.beta_instrumental().a(), target_dim));
  return filled;
}

// The instrumental normalised by the best density the mode search found (normalise_log_density,
// pseudo_extended.proto); with a fixed beta the normalisation changes nothing and needs no search.
bool normalises(const v1::PseudoExtendedConfig& pe) {
  return !pe.has_fixed_beta() && (!pe.has_normalise_log_density() || pe.normalise_log_density());
}

// Standardised pseudo-samples (pseudo_extended_standardised.hpp): sampled beta on one rank, not
// on the reference path.
bool standardises(const v1::PseudoExtendedConfig& pe) {
  return !pe.has_fixed_beta() && pe.ranks_per_chain() <= 1 && !extended::uses_reference_path(pe) &&
         (!pe.has_standardise() || pe.standardise());
}

// The reference path's rho, a mixture over the run's modes (or over those a pooled warmup
// refitted), and the log zeta the target is divided by (pseudo_extended_reference.hpp).
extended::ReferencePath reference_path(const v1::PseudoExtendedConfig& pe,
                                       const targets::Target& target,
                                       const SamplerContext& context) {
  const std::string field = kPath + ".reference";
  const auto& modes = context.reference_modes ? *context.reference_modes : modes_of(context, field);
  const auto base = extended::mixture_base(pe.reference(), target, modes, field);
  return {base.density->copy_with_evaluation(densities::Density::Evaluation::kFast),
          normalises(pe) ? base.log_zeta : 0.0};
}

// The modes' mean (by Laplace share) and within-mode standard deviations.
extended::Standardisation standardisation(const SamplerContext& context) {
  const auto& modes = modes_of(context, kPath + ".standardise");
  const auto scale = mode_inverse_metric(context);
  if (!scale)
    throw NumericalError(kPath + ".standardise: the mode search found no mode to standardise the "
                         "pseudo-samples by (set standardise: false to sample without it)");
  const auto shares = modes.laplace_shares();
  Vector centre = Vector::Zero(modes.dim);
  for (std::size_t k = 0; k < modes.modes.size(); ++k) centre += shares[k] * modes.modes[k].location;
  return {centre, scale->cwiseSqrt()};
}

SamplerSetup make(const v1::SamplerConfig& s, targets::TargetPtr target,
                  parallel::GroupCommPtr group, const SamplerContext& context) {
  const auto& pe = s.pseudo_extended();
  std::optional<extended::ReferencePath> reference;
  if (extended::uses_reference_path(pe)) reference = reference_path(pe, *target, context);
  if (normalises(pe) && !reference) {  // the reference path divides by its log zeta instead
    const auto best = modes_of(context, kPath).best_log_density();
    if (!best)
      throw NumericalError(kPath + ": the mode search found no mode to normalise the target by "
                           "(set normalise_log_density: false to sample without it)");
    target = std::make_shared<targets::ShiftedTarget>(std::move(target), *best);
  }
  // The space is (x_1, ..., x_N, eta_1, ..., eta_N): the modes' scales for every pseudo-sample,
  // unit scale for the etas; standardised pseudo-samples have unit scale already.
  const bool standardised = standardises(pe);
  const MetricLayout layout = [n = pe.n_pseudo(), standardised](const Vector& diagonal,
                                                               int space_dim) {
    Vector out = Vector::Ones(space_dim);
    if (standardised) return out;
    for (int i = 0; i < n && (i + 1) * diagonal.size() <= space_dim; ++i)
      out.segment(i * diagonal.size(), diagonal.size()) = diagonal;
    return out;
  };
  std::optional<extended::Standardisation> standardise;
  if (standardised) standardise = standardisation(context);
  auto made = extended::make_pseudo_extended(
      pe, target, local_kernel_maker_of(pe, kPath, context, layout), group, standardise,
      reference);
  return SamplerSetup{std::move(made.space), std::move(made.kernel)};
}

}  // namespace

SamplerKind pseudo_extended_sampler_kind() {
  return {
      .kind = v1::SamplerConfig::kPseudoExtended,
      .name = "pseudo_extended",
      .apply_defaults =
          [](v1::RunConfig& c) {
            auto& pe = *c.mutable_sampler()->mutable_pseudo_extended();
            const bool default_kernel = !pe.has_nuts() && !pe.has_hmc();
            fill_local_kernel_defaults_of(pe);
            pe.set_instrumental(extended::default_instrumental(pe, c.target()));  // before standardise
            if (!pe.has_fixed_beta() && !pe.has_normalise_log_density())
              pe.set_normalise_log_density(true);
            if (!pe.has_standardise()) pe.set_standardise(standardises(pe));
            if (extended::uses_reference_path(pe)) {
              auto& a = *(pe.has_hmc() ? pe.mutable_hmc()->mutable_adaptation()
                                       : pe.mutable_nuts()->mutable_adaptation());
              // The default kernel pools its warmup wherever a pooled warmup can run, its metric
              // then coming from the chains' draws on the target; elsewhere it keeps the modes'.
              // A given extended metric is the user's start: no pooled default replaces it.
              const int given = pe.has_hmc() ? pe.hmc().inverse_metric_size()
                                             : pe.nuts().inverse_metric_size();
              if (given > 0 && !a.has_pooled()) a.set_pooled(false);
              if (default_kernel) {
                auto pooling = a;
                pooling.set_adapt_metric(true);
                fill_pooled_default(pooling, c, kernel_metric(pe));
                if (pooling.pooled()) a.set_adapt_metric(true);
              }
              fill_pooled_default(a, c, kernel_metric(pe));
            }
          },
      .validate =
          [](const v1::RunConfig& c, std::optional<std::int64_t>, Problems& p) {
            check_pseudo_extended(c, kPath, p);
          },
      // The chain's pseudo-samples are evaluated in blocks over `group`; the inner HMC/NUTS kernel
      // runs on the extended space.
      .make = make,
      .warnings =
          [](const v1::RunConfig& c, std::optional<std::int64_t> dim) {
            std::vector<Problem> out;
            for (auto& w : extended::propriety_warnings(c.sampler().pseudo_extended(), c.target(),
                                                        dim, kPath))
              out.push_back({w.field_path, w.reason, w.value});
            return out;
          },
      .apply_dimension_defaults = fill_dimension_defaults,
      .uses_modes =
          [](const v1::RunConfig& c) {
            const auto& pe = c.sampler().pseudo_extended();
            return normalises(pe) || standardises(pe) || extended::uses_reference_path(pe);
          },
  };
}

}  // namespace pemc::config
