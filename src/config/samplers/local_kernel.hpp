#pragma once
// The local kernel of a composite sampler (pseudo-extended, continuous, parallel and simulated
// tempering, AIS): the HMC or NUTS message inside it. Its space is not the target's (extended,
// tempered or augmented), so dimension-dependent metric checks are left to the sampler's factory,
// and it adapts only when its config says so (Placement::kLocal).
#include <functional>
#include <optional>
#include <string>

#include "config/factories.hpp"
#include "config/problems.hpp"
#include "kernels/kernel.hpp"
#include "pemc/v1/config.pb.h"
#include "targets/target.hpp"

namespace pemc::config {

void fill_local_kernel_defaults(v1::HmcConfig* hmc, v1::NutsConfig* nuts);

// `pre` is the composite sampler's path; a missing kernel is a problem at `pre`.
void check_local_kernel(const v1::HmcConfig* hmc, const v1::NutsConfig* nuts,
                        const std::string& pre, Problems& p);

using LocalKernelMaker = std::function<kernels::KernelPtr(targets::TargetPtr space)>;

// The same for a composite sampler message `c` with optional `hmc` and `nuts` fields. The kernel
// maker (make_local_kernel, factories.hpp) owns copies of the kernel configs, so it may outlive `c`
// (parallel tempering keeps it to rebuild its level kernels when warmup resizes the ladder).
// The local kernel when a composite sampler gives none: NUTS from step size 0.1, adapting its step
// size in warmup, with the diagonal metric the run's modes give (below) rather than one adapted
// from draws that may jump between modes (what `parallel_tempering {}` and the other composite
// samplers run with their defaults).
inline constexpr double kDefaultLocalStepSize = 0.1;
void fill_default_local_kernel(v1::NutsConfig& nuts);

// The within-mode scales of the run's modes: sum_k s_k diag(Sigma_k) over the modes' Laplace
// covariances Sigma_k and shares s_k; nullopt without modes. A local kernel that moves within
// modes (while its sampler moves between them) starts from this diagonal inverse metric when its
// config gives none (and a DIAGONAL or unspecified NUTS metric, or a DIAGONAL HMC one).
std::optional<Vector> mode_inverse_metric(const SamplerContext& context);

// How a sampler's space holds the target's coordinates: the space's inverse metric diagonal from
// the target's (space_dim entries). Same dimension: the target's own.
using MetricLayout = std::function<Vector(const Vector& target_diagonal, int space_dim)>;
Vector same_layout(const Vector& target_diagonal, int space_dim);

template <class C>
void fill_local_kernel_defaults_of(C& c) {
  if (!c.has_hmc() && !c.has_nuts()) fill_default_local_kernel(*c.mutable_nuts());
  fill_local_kernel_defaults(c.has_hmc() ? c.mutable_hmc() : nullptr,
                             c.has_nuts() ? c.mutable_nuts() : nullptr);
}

template <class C>
void check_local_kernel_of(const C& c, const std::string& pre, Problems& p) {
  check_local_kernel(c.has_hmc() ? &c.hmc() : nullptr, c.has_nuts() ? &c.nuts() : nullptr, pre, p);
}

template <class C>
LocalKernelMaker local_kernel_maker_of(const C& c, const std::string& field) {
  return [hmc = c.hmc(), nuts = c.nuts(), has_hmc = c.has_hmc(), has_nuts = c.has_nuts(),
          field](targets::TargetPtr space) {
    return make_local_kernel(has_hmc ? &hmc : nullptr, has_nuts ? &nuts : nullptr, std::move(space),
                             field);
  };
}

// The same, the kernel starting from the modes' metric (mode_inverse_metric, laid out by
// `layout`) where its config gives none.
template <class C>
LocalKernelMaker local_kernel_maker_of(const C& c, const std::string& field,
                                       const SamplerContext& context, MetricLayout layout) {
  const auto diagonal = mode_inverse_metric(context);
  if (!diagonal) return local_kernel_maker_of(c, field);
  return [hmc = c.hmc(), nuts = c.nuts(), has_hmc = c.has_hmc(), has_nuts = c.has_nuts(), field,
          diagonal = *diagonal, layout](targets::TargetPtr space) {
    auto h = hmc;
    auto n = nuts;
    const Vector metric = layout(diagonal, space->dim());
    if (has_nuts && n.inverse_metric().empty() &&
        (n.metric() == v1::METRIC_UNSPECIFIED || n.metric() == v1::DIAGONAL)) {
      n.set_metric(v1::DIAGONAL);
      n.mutable_inverse_metric()->Assign(metric.data(), metric.data() + metric.size());
    }
    if (has_hmc && h.inverse_metric().empty() && h.metric() == v1::DIAGONAL)
      h.mutable_inverse_metric()->Assign(metric.data(), metric.data() + metric.size());
    return make_local_kernel(has_hmc ? &h : nullptr, has_nuts ? &n : nullptr, std::move(space),
                             field);
  };
}

}  // namespace pemc::config
