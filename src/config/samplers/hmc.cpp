#include "config/samplers/hmc.hpp"

#include "config/sampler_kinds.hpp"
#include "config/samplers/all_kinds.hpp"
#include "config/samplers/metric.hpp"
#include "kernels/hmc.hpp"

namespace pemc::config {

namespace {

// Target acceptance rate of HMC's step-size adaptation when the config leaves it unset.
constexpr double kTargetAcceptHmc = 0.65;
constexpr int kMaxLeapfrogSteps = 100'000;

}  // namespace

void fill_hmc_defaults(v1::HmcConfig& h, Placement where) {
  fill_adaptation(*h.mutable_adaptation(), kTargetAcceptHmc);
  if (where == Placement::kTopLevel) fill_top_level_adaptation(*h.mutable_adaptation(), false);
}

void check_hmc(const v1::HmcConfig& h, const std::string& pre, std::optional<std::int64_t> dim,
               std::optional<std::int64_t> top_level_warmup, Problems& p) {
  check_step_size(h.has_step_size(), h.step_size(), h.adaptation(), pre, top_level_warmup, p);
  in_range(p, pre + ".n_leapfrog", h.n_leapfrog(), 1, kMaxLeapfrogSteps);
  check_metric(h.metric(), h.inverse_metric(), pre, dim, p);
  check_adaptation(h.adaptation(), pre + ".adaptation", p);
  // A top-level sampler's pooled warmup is checked with its run (hmc_sampler_kind).
  if (!top_level_warmup) check_pooled_warmup(h.adaptation(), pre + ".adaptation", nullptr, h.metric(), p);
}

kernels::KernelPtr make_hmc_kernel(const v1::HmcConfig& h, targets::TargetPtr space,
                                   const std::string& field) {
  const int dim = space->dim();
  kernels::HmcOptions o;
  o.search_step_size = !h.has_step_size();
  o.step_size = o.search_step_size ? kStepSizeSearchStart : h.step_size();
  o.n_leapfrog = h.n_leapfrog();
  o.jitter_step_size = h.jitter_step_size();
  o.jitter_n_leapfrog = h.jitter_n_leapfrog();
  o.adaptation = make_adaptation(h.adaptation(), kTargetAcceptHmc);
  auto metric = make_metric(h.metric(), v1::UNIT, h.inverse_metric(), dim, field);
  return std::make_unique<kernels::HmcKernel>(std::move(space), std::move(metric), o);
}

SamplerKind hmc_sampler_kind() {
  return {
      .kind = v1::SamplerConfig::kHmc,
      .name = "hmc",
      .apply_defaults =
          [](v1::RunConfig& c) {
            auto& h = *c.mutable_sampler()->mutable_hmc();
            fill_hmc_defaults(h, Placement::kTopLevel);
            fill_pooled_default(*h.mutable_adaptation(), c,
                                h.metric() == v1::METRIC_UNSPECIFIED ? v1::UNIT : h.metric());
          },
      .validate =
          [](const v1::RunConfig& c, std::optional<std::int64_t> dim, Problems& p) {
            const auto& h = c.sampler().hmc();
            check_hmc(h, "sampler.hmc", dim, c.warmup(), p);
            check_pooled_warmup(h.adaptation(), "sampler.hmc.adaptation", &c,
                                h.metric() == v1::METRIC_UNSPECIFIED ? v1::UNIT : h.metric(), p);
          },
      .make =
          [](const v1::SamplerConfig& s, targets::TargetPtr target, parallel::GroupCommPtr,
             const SamplerContext&) {
            return SamplerSetup{target, make_hmc_kernel(s.hmc(), target, "sampler.hmc")};
          },
      .warnings =
          [](const v1::RunConfig& c, std::optional<std::int64_t>) {
            const auto& h = c.sampler().hmc();
            const bool adaptable = h.metric() == v1::DIAGONAL || h.metric() == v1::DENSE;
            std::vector<Problem> out;
            if (h.adaptation().pooled()) return out;  // its own schedule (src/warmup/)
            if (auto w = short_warmup_warning(h.adaptation(), adaptable, c.warmup(), "sampler.hmc"))
              out.push_back(*w);
            return out;
          },
  };
}

}  // namespace pemc::config
