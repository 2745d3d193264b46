// Random-walk Metropolis (RwmConfig): the `rwm` sampler.
#include "kernels/rwm.hpp"

#include "config/sampler_kinds.hpp"
#include "config/samplers/adaptation.hpp"
#include "config/samplers/all_kinds.hpp"

namespace pemc::config {

SamplerKind rwm_sampler_kind() {
  return {
      .kind = v1::SamplerConfig::kRwm,
      .name = "rwm",
      .apply_defaults =
          [](v1::RunConfig& c) {
            fill_adaptation(*c.mutable_sampler()->mutable_rwm()->mutable_adaptation(),
                            kernels::kRwmDefaultTargetAccept);
          },
      .validate =
          [](const v1::RunConfig& c, std::optional<std::int64_t>, Problems& p) {
            positive(p, "sampler.rwm.proposal_scale", c.sampler().rwm().proposal_scale());
            check_adaptation(c.sampler().rwm().adaptation(), "sampler.rwm.adaptation", p);
            check_pooled_warmup(c.sampler().rwm().adaptation(), "sampler.rwm.adaptation", nullptr,
                                v1::METRIC_UNSPECIFIED, p);
          },
      .make =
          [](const v1::SamplerConfig& s, targets::TargetPtr target, parallel::GroupCommPtr,
             const SamplerContext&) {
            kernels::RwmOptions o;
            o.proposal_scale = s.rwm().proposal_scale();
            o.adaptation = make_adaptation(s.rwm().adaptation(), kernels::kRwmDefaultTargetAccept);
            return SamplerSetup{target, std::make_unique<kernels::RwmKernel>(target, o)};
          },
  };
}

}  // namespace pemc::config
