// Logistic regression with a regularised horseshoe prior (HorseshoeLogisticTarget).
#include "targets/horseshoe_logistic.hpp"

#include "config/file_checks.hpp"
#include "config/target_kinds.hpp"
#include "config/targets/all_kinds.hpp"

namespace pemc::config {

namespace {

// config.proto HorseshoeLogisticTarget. Plain proto3 fields: 0 means unset, which is outside their
// valid range.
constexpr double kTrainFraction = 0.8;
constexpr double kSigma = 2.0;
constexpr double kSlabScale = 2.0;
constexpr double kSlabDf = 3.0;
constexpr double kInterceptScale = 10.0;

void fill_horseshoe(v1::TargetConfig& t) {
  auto& h = *t.mutable_horseshoe_logistic();
  if (h.train_fraction() == 0) h.set_train_fraction(kTrainFraction);
  if (h.sigma() == 0) h.set_sigma(kSigma);
  if (h.slab_scale() == 0) h.set_slab_scale(kSlabScale);
  if (h.slab_df() == 0) h.set_slab_df(kSlabDf);
  if (h.intercept_scale() == 0) h.set_intercept_scale(kInterceptScale);
}

void check_horseshoe(const v1::HorseshoeLogisticTarget& h, Problems& p) {
  const std::string pre = "target.horseshoe_logistic";
  readable_file(p, pre + ".data_file", h.data_file());
  positive(p, pre + ".p0", h.p0());
  if (!(h.train_fraction() > 0 && h.train_fraction() < 1)) {
    p.add(pre + ".train_fraction", "must be in (0, 1)", num(h.train_fraction()));
  }
  positive(p, pre + ".sigma", h.sigma());
  positive(p, pre + ".slab_scale", h.slab_scale());
  positive(p, pre + ".slab_df", h.slab_df());
  positive(p, pre + ".intercept_scale", h.intercept_scale());
}

}  // namespace

TargetKind horseshoe_logistic_target_kind() {
  return {
      .kind = v1::TargetConfig::kHorseshoeLogistic,
      .name = "horseshoe_logistic",
      .validate = [](const v1::TargetConfig& t,
                     Problems& p) { check_horseshoe(t.horseshoe_logistic(), p); },
      .make = [](const v1::TargetConfig& t) -> targets::TargetPtr {
        return targets::make_horseshoe_logistic(t.horseshoe_logistic());
      },
      .apply_defaults = fill_horseshoe,
  };
}

}  // namespace pemc::config
