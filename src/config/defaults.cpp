#include "config/defaults.hpp"

#include "config/sampler_kinds.hpp"

namespace pemc::config {

namespace {

using D = Defaults;

void fill_target(pemc::v1::TargetConfig& t) {
  switch (t.kind_case()) {
    case pemc::v1::TargetConfig::kBanana: {
      auto& b = *t.mutable_banana();
      if (!b.has_b()) b.set_b(D::kBananaB);
      if (!b.has_v()) b.set_v(D::kBananaV);
      break;
    }
    case pemc::v1::TargetConfig::kFlower: {
      auto& f = *t.mutable_flower();
      if (!f.has_radius()) f.set_radius(D::kFlowerRadius);
      if (!f.has_amplitude()) f.set_amplitude(D::kFlowerAmplitude);
      if (!f.has_petals()) f.set_petals(D::kFlowerPetals);
      if (!f.has_sd()) f.set_sd(D::kFlowerSd);
      break;
    }
    case pemc::v1::TargetConfig::kFunnel: {
      auto& f = *t.mutable_funnel();
      if (!f.has_v_scale()) f.set_v_scale(D::kFunnelVScale);
      break;
    }
    case pemc::v1::TargetConfig::kBoltzmann: {
      auto& b = *t.mutable_boltzmann();
      if (b.has_generated()) {
        auto& g = *b.mutable_generated();
        if (g.weight_scale_hi() == 0) g.set_weight_scale_hi(D::kBoltzmannWeightScaleHi);
        if (g.weight_scale_lo() == 0) g.set_weight_scale_lo(D::kBoltzmannWeightScaleLo);
        if (g.bias_scale() == 0) g.set_bias_scale(D::kBoltzmannBiasScale);
      }
      if (b.max_enumeration_units() == 0) {
        b.set_max_enumeration_units(D::kBoltzmannMaxEnumerationUnits);
      }
      break;
    }
    case pemc::v1::TargetConfig::kHorseshoeLogistic: {
      auto& h = *t.mutable_horseshoe_logistic();
      if (h.train_fraction() == 0) h.set_train_fraction(D::kHorseshoeTrainFraction);
      if (h.sigma() == 0) h.set_sigma(D::kHorseshoeSigma);
      if (h.slab_scale() == 0) h.set_slab_scale(D::kHorseshoeSlabScale);
      if (h.slab_df() == 0) h.set_slab_df(D::kHorseshoeSlabDf);
      if (h.intercept_scale() == 0) h.set_intercept_scale(D::kHorseshoeInterceptScale);
      break;
    }
    default:
      break;
  }
}

}  // namespace

void apply_defaults(LoadedConfig& c) {
  auto& cfg = c.config;
  if (cfg.name().empty()) cfg.set_name(c.path.stem().string());
  if (!cfg.has_warmup()) cfg.set_warmup(D::kWarmup);
  if (cfg.chains_per_seed() == 0) cfg.set_chains_per_seed(D::kChainsPerSeed);

  auto& out = *cfg.mutable_output();
  if (!out.has_thin()) out.set_thin(D::kThin);
  if (!out.has_flush_every()) out.set_flush_every(D::kFlushEvery);

  auto& log = *cfg.mutable_logging();
  if (!log.has_progress_interval_seconds()) {
    log.set_progress_interval_seconds(D::kProgressIntervalSeconds);
  }

  if (cfg.init().kind_case() == pemc::v1::InitConfig::KIND_NOT_SET) {
    cfg.mutable_init()->set_uniform_radius(D::kInitUniformRadius);
  }

  if (cfg.has_sampler())
    if (const auto* kind = find_sampler_kind(cfg.sampler().kind_case())) kind->apply_defaults(cfg);
  if (cfg.has_target()) fill_target(*cfg.mutable_target());
}

std::vector<std::string> apply_dimension_defaults(pemc::v1::RunConfig& config,
                                                  std::int64_t target_dim) {
  const auto* kind = find_sampler_kind(config.sampler().kind_case());
  if (!kind || !kind->apply_dimension_defaults) return {};
  return kind->apply_dimension_defaults(config, target_dim);
}

}  // namespace pemc::config
