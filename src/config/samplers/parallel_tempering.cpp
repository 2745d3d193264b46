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

void check_parallel_tempering(const v1::ParallelTemperingConfig& c, const std::string& pre,
                              Problems& p) {
  check_local_kernel_of(c, pre, p);
  if (c.has_reference()) check_reference(c.reference(), pre + ".reference", p);
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
      .apply_defaults =
          [](v1::RunConfig& c) {
            fill_local_kernel_defaults_of(*c.mutable_sampler()->mutable_parallel_tempering());
          },
      .validate =
          [](const v1::RunConfig& c, std::optional<std::int64_t>, Problems& p) {
            check_parallel_tempering(c.sampler().parallel_tempering(), kPath, p);
          },
      // One local kernel per temperature, replicas spread over `group`. The kernel keeps the local
      // kernel maker to rebuild its level kernels when warmup resizes the ladder.
      .make =
          [](const v1::SamplerConfig& s, targets::TargetPtr target, parallel::GroupCommPtr group) {
            const auto& config = s.parallel_tempering();
            auto made = tempering::make_parallel_tempering(
                config, target, local_kernel_maker_of(config, kPath), group,
                fit_tempering_reference);
            return SamplerSetup{std::move(made.space), std::move(made.kernel)};
          },
  };
}

}  // namespace pemc::config
