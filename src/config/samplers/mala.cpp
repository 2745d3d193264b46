// Metropolis-adjusted Langevin (MalaConfig): the `mala` sampler.
#include "kernels/mala.hpp"

#include "config/sampler_kinds.hpp"
#include "config/samplers/adaptation.hpp"
#include "config/samplers/all_kinds.hpp"

namespace pemc::config {

SamplerKind mala_sampler_kind() {
  return {
      .kind = v1::SamplerConfig::kMala,
      .name = "mala",
      .apply_defaults =
          [](v1::RunConfig& c) {
            fill_adaptation(*c.mutable_sampler()->mutable_mala()->mutable_adaptation(),
                            kernels::kMalaDefaultTargetAccept);
          },
      .validate =
          [](const v1::RunConfig& c, std::optional<std::int64_t>, Problems& p) {
            positive(p, "sampler.mala.step_size", c.sampler().mala().step_size());
            check_adaptation(c.sampler().mala().adaptation(), "sampler.mala.adaptation", p);
            check_pooled_warmup(c.sampler().mala().adaptation(), "sampler.mala.adaptation", nullptr,
                                v1::METRIC_UNSPECIFIED, p);
          },
      .make =
          [](const v1::SamplerConfig& s, targets::TargetPtr target, parallel::GroupCommPtr,
             const SamplerContext&) {
            kernels::MalaOptions o;
            o.step_size = s.mala().step_size();
            o.adaptation =
                make_adaptation(s.mala().adaptation(), kernels::kMalaDefaultTargetAccept);
            return SamplerSetup{target, std::make_unique<kernels::MalaKernel>(target, o)};
          },
  };
}

}  // namespace pemc::config
