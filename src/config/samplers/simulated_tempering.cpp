// Simulated tempering (SimulatedTemperingConfig, src/tempering/simulated_tempering.hpp): the
// `simulated_tempering` sampler, on the (x, k) space.
#include "config/sampler_kinds.hpp"
#include "config/samplers/all_kinds.hpp"
#include "config/samplers/local_kernel.hpp"
#include "config/samplers/tempering_checks.hpp"
#include "config/samplers/tempering_reference_fit.hpp"
#include "tempering/from_config.hpp"

namespace pemc::config {

namespace {

const std::string kPath = "sampler.simulated_tempering";

void check_simulated_tempering(const v1::SimulatedTemperingConfig& c, const std::string& pre,
                               Problems& p) {
  check_local_kernel_of(c, pre, p);
  if (c.has_reference()) check_reference(c.reference(), pre + ".reference", p);
  if (c.power_path() && c.has_reference())
    p.add(pre + ".power_path", "the power path has no reference: remove `reference` or this",
          "true");
  check_ladder(c.ladder(), pre + ".ladder", c.has_reference(), p);
  optional_at_least(p, pre + ".n_local_steps", c.has_n_local_steps(), c.n_local_steps(), 1);
  const auto& l = c.ladder();
  const int levels =
      l.kind() == v1::TemperingLadderConfig::EXPLICIT ? l.betas_size() : l.n_levels();
  if (c.log_weights_size() > 0 && c.log_weights_size() != levels)
    p.add(pre + ".log_weights", "needs one weight per level (" + num(std::int64_t{levels}) + ")",
          entries(c.log_weights_size()));
  optional_at_least(p, pre + ".first_pilot_length", c.has_first_pilot_length(),
                    c.first_pilot_length(), 1);
  optional_at_least(p, pre + ".n_kernel_bins", c.has_n_kernel_bins(), c.n_kernel_bins(), 1);
  optional_at_least(p, pre + ".n_batches", c.has_n_batches(), c.n_batches(), 2);
}

// Defaults (tempering.proto): NUTS adapting; without a reference a mixture fitted to the run's
// modes (power_path: true keeps the power path); without a ladder 16 levels and, with a warmup,
// the level weights adapted in pilot phases.
constexpr int kDefaultLevels = 16;

void fill_defaults(v1::RunConfig& run) {
  auto& c = *run.mutable_sampler()->mutable_simulated_tempering();
  fill_local_kernel_defaults_of(c);
  if (!c.has_reference() && !c.power_path())
    c.mutable_reference()->mutable_fitted()->mutable_mixture();
  if (c.has_reference() && c.reference().has_fitted() &&
      c.reference().fitted().kind_case() == v1::BaseDensityConfig::KIND_NOT_SET)
    c.mutable_reference()->mutable_fitted()->mutable_mixture();
  if (!c.has_ladder()) {
    c.mutable_ladder()->set_n_levels(kDefaultLevels);
    if (!c.adapt_weights() && run.warmup() > 0) c.set_adapt_weights(true);
  }
}

}  // namespace

SamplerKind simulated_tempering_sampler_kind() {
  return {
      .kind = v1::SamplerConfig::kSimulatedTempering,
      .name = "simulated_tempering",
      .apply_defaults = fill_defaults,
      .validate =
          [](const v1::RunConfig& c, std::optional<std::int64_t>, Problems& p) {
            check_simulated_tempering(c.sampler().simulated_tempering(), kPath, p);
          },
      .make =
          [](const v1::SamplerConfig& s, targets::TargetPtr target, parallel::GroupCommPtr,
             const SamplerContext& context) {
            const auto& config = s.simulated_tempering();
            auto made = tempering::make_simulated_tempering(
                config, target, local_kernel_maker_of(config, kPath, context, same_layout), reference_fitter(context));
            return SamplerSetup{std::move(made.space), std::move(made.kernel)};
          },
      .uses_modes =
          [](const v1::RunConfig& c) {
            return reference_uses_modes(c.sampler().simulated_tempering().reference());
          },
  };
}

}  // namespace pemc::config
