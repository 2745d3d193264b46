#include "config/samplers/nuts.hpp"

#include "config/sampler_kinds.hpp"
#include "config/samplers/all_kinds.hpp"
#include "config/samplers/metric.hpp"
#include "kernels/nuts.hpp"

namespace pemc::config {

namespace {

constexpr double kTargetAcceptNuts = kernels::kNutsDefaultTargetAccept;  // Stan's
constexpr int kMaxTreeDepth = 10;
constexpr double kMaxEnergyError = 1000.0;

}  // namespace

void fill_nuts_defaults(v1::NutsConfig& n, Placement where) {
  if (!n.has_max_tree_depth()) n.set_max_tree_depth(kMaxTreeDepth);
  if (!n.has_max_energy_error()) n.set_max_energy_error(kMaxEnergyError);
  fill_adaptation(*n.mutable_adaptation(), kTargetAcceptNuts);
  if (where == Placement::kTopLevel) fill_top_level_adaptation(*n.mutable_adaptation(), true);
}

void check_nuts(const v1::NutsConfig& n, const std::string& pre, std::optional<std::int64_t> dim,
                std::optional<std::int64_t> top_level_warmup, Problems& p) {
  check_step_size(n.has_step_size(), n.step_size(), n.adaptation(), pre, top_level_warmup, p);
  if (n.has_max_tree_depth())
    in_range(p, pre + ".max_tree_depth", n.max_tree_depth(), 1, kernels::kNutsMaxTreeDepthLimit);
  if (n.has_max_energy_error()) positive(p, pre + ".max_energy_error", n.max_energy_error());
  check_metric(n.metric(), n.inverse_metric(), pre, dim, p);
  check_adaptation(n.adaptation(), pre + ".adaptation", p);
  // A top-level sampler's pooled warmup is checked with its run (nuts_sampler_kind).
  if (!top_level_warmup) check_pooled_warmup(n.adaptation(), pre + ".adaptation", nullptr, n.metric(), p);
}

kernels::KernelPtr make_nuts_kernel(const v1::NutsConfig& n, targets::TargetPtr space,
                                    const std::string& field) {
  const int dim = space->dim();
  kernels::NutsOptions o;
  o.search_step_size = !n.has_step_size();
  o.step_size = o.search_step_size ? kStepSizeSearchStart : n.step_size();
  if (n.has_max_tree_depth()) o.max_tree_depth = n.max_tree_depth();
  if (n.has_max_energy_error()) o.max_energy_error = n.max_energy_error();
  o.adaptation = make_adaptation(n.adaptation(), kTargetAcceptNuts);
  auto metric = make_metric(n.metric(), v1::DIAGONAL, n.inverse_metric(), dim, field);
  return std::make_unique<kernels::NutsKernel>(std::move(space), std::move(metric), o);
}

SamplerKind nuts_sampler_kind() {
  return {
      .kind = v1::SamplerConfig::kNuts,
      .name = "nuts",
      .apply_defaults =
          [](v1::RunConfig& c) {
            auto& n = *c.mutable_sampler()->mutable_nuts();
            fill_nuts_defaults(n, Placement::kTopLevel);
            fill_pooled_default(*n.mutable_adaptation(), c,
                                n.metric() == v1::METRIC_UNSPECIFIED ? v1::DIAGONAL : n.metric());
          },
      .validate =
          [](const v1::RunConfig& c, std::optional<std::int64_t> dim, Problems& p) {
            const auto& n = c.sampler().nuts();
            check_nuts(n, "sampler.nuts", dim, c.warmup(), p);
            check_pooled_warmup(n.adaptation(), "sampler.nuts.adaptation", &c,
                                n.metric() == v1::METRIC_UNSPECIFIED ? v1::DIAGONAL : n.metric(), p);
          },
      .make =
          [](const v1::SamplerConfig& s, targets::TargetPtr target, parallel::GroupCommPtr,
             const SamplerContext&) {
            return SamplerSetup{target, make_nuts_kernel(s.nuts(), target, "sampler.nuts")};
          },
      .warnings =
          [](const v1::RunConfig& c, std::optional<std::int64_t>) {
            const auto& n = c.sampler().nuts();
            std::vector<Problem> out;
            if (n.adaptation().pooled()) return out;  // its own schedule (src/warmup/)
            if (auto w = short_warmup_warning(n.adaptation(), n.metric() != v1::UNIT, c.warmup(),
                                              "sampler.nuts"))
              out.push_back(*w);
            return out;
          },
  };
}

}  // namespace pemc::config
