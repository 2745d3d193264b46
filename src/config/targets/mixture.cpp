// A mixture of Gaussians (MixtureTarget): a preset (BIMODAL_1D, KOU_A, KOU_B) or components.
#include "targets/mixture.hpp"

#include "config/limits.hpp"
#include "config/target_kinds.hpp"
#include "config/targets/all_kinds.hpp"

namespace pemc::config {

namespace {

void check_mixture(const v1::MixtureTarget& m, Problems& p) {
  const std::string pre = "target.mixture";
  const bool preset = m.preset() != v1::MixtureTarget::PRESET_UNSPECIFIED;
  if (preset && m.components_size() > 0) {
    p.add(pre + ".components", "give either a preset or components, not both",
          entries(m.components_size()) + " with preset " +
              v1::MixtureTarget::Preset_Name(m.preset()));
    return;
  }
  if (!preset && m.components_size() == 0) {
    p.add(pre, "required: a preset (BIMODAL_1D, KOU_A, KOU_B) or at least one component");
    return;
  }
  if (m.components_size() > kMaxDimension) {
    p.add(pre + ".components", "more components than the limit " + num(kMaxDimension),
          num(std::int64_t{m.components_size()}));
    return;
  }
  const std::int64_t dim = m.components_size() > 0 ? m.components(0).mean_size() : 0;
  for (int k = 0; k < m.components_size(); ++k) {
    const auto& c = m.components(k);
    const std::string cp = el(pre + ".components", k);
    positive(p, cp + ".weight", c.weight());
    const std::int64_t dk = c.mean_size();
    if (dk == 0) {
      p.add(cp + ".mean", "required: the component mean (dimension 0 is not allowed)");
      continue;
    }
    if (dk > kMaxDimension) {
      p.add(cp + ".mean", "dimension above the limit " + num(kMaxDimension), entries(dk));
      continue;
    }
    if (k > 0 && dim > 0 && dk != dim) {
      p.add(cp + ".mean",
            "all components need the same dimension: components[0].mean has " + entries(dim),
            entries(dk));
    }
    const bool iso = c.has_variance();
    const bool diag = c.diag_variance_size() > 0;
    if (iso && diag) {
      p.add(cp + ".diag_variance", "give either variance (isotropic) or diag_variance, not both");
    } else if (!iso && !diag) {
      p.add(cp, "required: variance (isotropic, > 0) or diag_variance (" + entries(dk) + " > 0)");
    } else if (iso) {
      positive(p, cp + ".variance", c.variance());
    } else if (c.diag_variance_size() != dk) {
      p.add(cp + ".diag_variance", "must have " + entries(dk) + " (the component mean's size)",
            entries(c.diag_variance_size()));
    } else {
      all_positive(p, cp + ".diag_variance", c.diag_variance());
    }
  }
}

// A preset's dimension, or the first component's.
std::int64_t mixture_dimension(const v1::TargetConfig& t) {
  const auto& m = t.mixture();
  switch (m.preset()) {
    case v1::MixtureTarget::BIMODAL_1D:
      return 1;
    case v1::MixtureTarget::KOU_A:
    case v1::MixtureTarget::KOU_B:
      return 2;
    default:
      return m.components_size() > 0 ? m.components(0).mean_size() : 0;
  }
}

}  // namespace

TargetKind mixture_target_kind() {
  return {
      .kind = v1::TargetConfig::kMixture,
      .name = "mixture",
      .validate = [](const v1::TargetConfig& t, Problems& p) { check_mixture(t.mixture(), p); },
      .make = [](const v1::TargetConfig& t) -> targets::TargetPtr {
        return targets::make_mixture(t.mixture());
      },
      .dimension = mixture_dimension,
  };
}

}  // namespace pemc::config
