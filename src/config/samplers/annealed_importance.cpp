// Annealed importance sampling (AnnealedImportanceConfig, src/tempering/annealed_importance.hpp):
// the `annealed_importance` sampler; one iteration is one annealing run.
#include "config/sampler_kinds.hpp"
#include "config/samplers/all_kinds.hpp"
#include "config/samplers/local_kernel.hpp"
#include "config/samplers/tempering_checks.hpp"
#include "config/samplers/tempering_reference_fit.hpp"
#include "tempering/from_config.hpp"

namespace pemc::config {

namespace {

const std::string kPath = "sampler.annealed_importance";
constexpr int kDefaultLevels = 200;  // annealing levels when no ladder is given

void check_annealed_importance(const v1::AnnealedImportanceConfig& c, const std::string& pre,
                               Problems& p) {
  check_local_kernel_of(c, pre, p);
  if (!c.has_reference()) {
    p.add(pre + ".reference", "required: AIS anneals from a normalised reference (beta_0 = 0)");
  } else {
    check_reference(c.reference(), pre + ".reference", p);
  }
  check_ladder(c.ladder(), pre + ".ladder", true, p);
  const auto& l = c.ladder();
  if (l.kind() == v1::TemperingLadderConfig::EXPLICIT && l.betas_size() > 0 && l.betas(0) != 0.0)
    p.add(el(pre + ".ladder.betas", 0), "AIS starts at the reference: must be 0", num(l.betas(0)));
  if (l.kind() != v1::TemperingLadderConfig::EXPLICIT && l.has_beta_min() && l.beta_min() != 0.0 &&
      l.kind() != v1::TemperingLadderConfig::GEOMETRIC)
    p.add(pre + ".ladder.beta_min", "AIS starts at the reference: must be 0", num(l.beta_min()));
  optional_at_least(p, pre + ".n_local_steps", c.has_n_local_steps(), c.n_local_steps(), 1);
  optional_at_least(p, pre + ".n_kernel_bins", c.has_n_kernel_bins(), c.n_kernel_bins(), 1);
}

}  // namespace

SamplerKind annealed_importance_sampler_kind() {
  return {
      .kind = v1::SamplerConfig::kAnnealedImportance,
      .name = "annealed_importance",
      .apply_defaults =
          [](v1::RunConfig& c) {
            fill_local_kernel_defaults_of(*c.mutable_sampler()->mutable_annealed_importance());
            // AIS starts from a normalised reference: without one, a mixture over the run's modes.
            auto& ais = *c.mutable_sampler()->mutable_annealed_importance();
            if (!ais.has_reference() || (ais.reference().has_fitted() &&
                                         ais.reference().fitted().kind_case() ==
                                             v1::BaseDensityConfig::KIND_NOT_SET))
              ais.mutable_reference()->mutable_fitted()->mutable_mixture();
            if (!ais.has_ladder()) {
              ais.mutable_ladder()->set_kind(v1::TemperingLadderConfig::SIGMOIDAL);
              ais.mutable_ladder()->set_n_levels(kDefaultLevels);
            }
          },
      .validate =
          [](const v1::RunConfig& c, std::optional<std::int64_t>, Problems& p) {
            check_annealed_importance(c.sampler().annealed_importance(), kPath, p);
          },
      .make =
          [](const v1::SamplerConfig& s, targets::TargetPtr target, parallel::GroupCommPtr,
             const SamplerContext& context) {
            const auto& config = s.annealed_importance();
            auto made = tempering::make_annealed_importance(
                config, target, local_kernel_maker_of(config, kPath, context, same_layout), reference_fitter(context));
            return SamplerSetup{std::move(made.space), std::move(made.kernel)};
          },
      .uses_modes =
          [](const v1::RunConfig& c) {
            return reference_uses_modes(c.sampler().annealed_importance().reference());
          },
  };
}

}  // namespace pemc::config
