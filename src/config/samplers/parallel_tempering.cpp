// Parallel tempering (ParallelTemperingConfig, src/tempering/parallel_tempering.hpp): the
// `parallel_tempering` sampler.
#include "config/sampler_kinds.hpp"
#include "config/samplers/all_kinds.hpp"
#include "config/samplers/local_kernel.hpp"
#include "config/samplers/tempering_checks.hpp"
#include "config/samplers/tempering_reference_fit.hpp"
#include "tempering/from_config.hpp"

namespace pemc::config {

namespace {

const std::string kPath = "sampler.parallel_tempering";

// Defaults (tempering.proto): without a reference, stabilised PT — a mixture reference fitted to
// the run's modes with the power-path leg beside it — unless power_path asks for the power path
// alone; NUTS adapting; the ladder re-spaced in warmup and, when no ladder is given, the number of
// replicas chosen from the barrier.
constexpr int kDefaultLevels = 8;

void fill_defaults(v1::RunConfig& run) {
  auto& c = *run.mutable_sampler()->mutable_parallel_tempering();
  fill_local_kernel_defaults_of(c);
  if (!c.has_reference() && !c.power_path()) {
    c.mutable_reference()->mutable_fitted()->mutable_mixture();
    if (!c.has_fixed_leg()) c.set_fixed_leg(true);
  }
  if (c.has_reference() && c.reference().has_fitted() &&
      c.reference().fitted().kind_case() == v1::BaseDensityConfig::KIND_NOT_SET)
    c.mutable_reference()->mutable_fitted()->mutable_mixture();
  if (!c.has_fixed_leg()) c.set_fixed_leg(false);
  if (!c.has_ladder()) {
    c.mutable_ladder()->set_n_levels(kDefaultLevels);
    if (!c.has_choose_replicas()) c.set_choose_replicas(run.warmup() > 0);
  }
  if (!c.has_adapt_schedule()) c.set_adapt_schedule(run.warmup() > 0);
  if (!c.has_choose_replicas()) c.set_choose_replicas(false);
  if (c.fixed_leg() && !c.has_fixed_ladder()) {
    auto& f = *c.mutable_fixed_ladder();
    f.set_kind(v1::TemperingLadderConfig::GEOMETRIC);
    f.set_n_levels(c.ladder().kind() == v1::TemperingLadderConfig::EXPLICIT
                       ? c.ladder().betas_size()
                       : c.ladder().n_levels());
  }
}

void check_parallel_tempering(const v1::ParallelTemperingConfig& c, const std::string& pre,
                              Problems& p) {
  check_local_kernel_of(c, pre, p);
  if (c.has_reference()) check_reference(c.reference(), pre + ".reference", p);
  if (c.power_path() && c.has_reference())
    p.add(pre + ".power_path", "the power path has no reference: remove `reference` or this",
          "true");
  if (c.fixed_leg() && !c.has_reference())
    p.add(pre + ".fixed_leg",
          "the fixed leg runs beside a reference leg: give a reference (or leave both unset)",
          "true");
  if (c.has_fixed_ladder()) check_ladder(c.fixed_ladder(), pre + ".fixed_ladder", false, p);
  check_ladder(c.ladder(), pre + ".ladder", c.has_reference(), p);
  optional_at_least(p, pre + ".n_local_steps", c.has_n_local_steps(), c.n_local_steps(), 1);
  if (c.choose_replicas() && !c.adapt_schedule())
    p.add(pre + ".choose_replicas",
          "needs adapt_schedule: true (K is chosen from the adapted barrier)");
  optional_positive(p, pre + ".replicas_per_barrier", c.has_replicas_per_barrier(),
                    c.replicas_per_barrier());
  optional_at_least(p, pre + ".min_replicas", c.has_min_replicas(), c.min_replicas(), 2);
  const int lo = c.has_min_replicas() ? c.min_replicas() : 3;
  if (c.has_max_replicas() && c.max_replicas() < lo)
    p.add(pre + ".max_replicas", "must be >= min_replicas (" + num(std::int64_t{lo}) + ")",
          num(std::int64_t{c.max_replicas()}));
  if (c.ranks_per_chain() < 0)
    p.add(pre + ".ranks_per_chain", "must be >= 1 (0 means 1)",
          num(std::int64_t{c.ranks_per_chain()}));
  optional_at_least(p, pre + ".n_batches", c.has_n_batches(), c.n_batches(), 2);
}

}  // namespace

SamplerKind parallel_tempering_sampler_kind() {
  return {
      .kind = v1::SamplerConfig::kParallelTempering,
      .name = "parallel_tempering",
      .apply_defaults = fill_defaults,
      .validate =
          [](const v1::RunConfig& c, std::optional<std::int64_t>, Problems& p) {
            check_parallel_tempering(c.sampler().parallel_tempering(), kPath, p);
          },
      // One local kernel per temperature, replicas spread over `group`. The kernel keeps the local
      // kernel maker to rebuild its level kernels when warmup resizes the ladder.
      .make =
          [](const v1::SamplerConfig& s, targets::TargetPtr target, parallel::GroupCommPtr group,
             const SamplerContext& context) {
            const auto& config = s.parallel_tempering();
            auto made = tempering::make_parallel_tempering(
                config, target, local_kernel_maker_of(config, kPath, context, same_layout), group,
                reference_fitter(context));
            return SamplerSetup{std::move(made.space), std::move(made.kernel)};
          },
      .uses_modes =
          [](const v1::RunConfig& c) {
            return reference_uses_modes(c.sampler().parallel_tempering().reference());
          },
  };
}

}  // namespace pemc::config
