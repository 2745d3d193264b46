#include "config/defaults.hpp"

#include <fmt/format.h>

#include "extended/pseudo_extended.hpp"

namespace pemc::config {

namespace {

using D = Defaults;

void fill_adaptation(pemc::v1::AdaptationConfig& a, double target_accept) {
  if (!a.has_target_accept()) a.set_target_accept(target_accept);
  if (!a.has_gamma()) a.set_gamma(D::kGamma);
  if (!a.has_t0()) a.set_t0(D::kT0);
  if (!a.has_kappa()) a.set_kappa(D::kKappa);
  if (!a.has_init_buffer()) a.set_init_buffer(D::kInitBuffer);
  if (!a.has_term_buffer()) a.set_term_buffer(D::kTermBuffer);
  if (!a.has_base_window()) a.set_base_window(D::kBaseWindow);
}

// Where an HMC/NUTS kernel runs. A top-level sampler adapts by default; a kernel inside a
// composite sampler does not: its warmup runs per temperature level or on a space whose
// conditional changes with the sampler's own variables, so its configs say what to adapt.
enum class Placement { kTopLevel, kLocal };

// A top-level kernel adapts its step size unless told otherwise, and its metric when it is
// NUTS (`adapt_metric`, which HMC's default unit metric ignores).
void fill_top_level_adaptation(pemc::v1::AdaptationConfig& a, bool adapt_metric) {
  if (!a.has_enabled()) a.set_enabled(true);
  if (!a.has_adapt_metric()) a.set_adapt_metric(adapt_metric);
}

void fill_hmc(pemc::v1::HmcConfig& h, Placement where) {
  fill_adaptation(*h.mutable_adaptation(), D::kTargetAcceptHmc);
  if (where == Placement::kTopLevel) fill_top_level_adaptation(*h.mutable_adaptation(), false);
}

void fill_nuts(pemc::v1::NutsConfig& n, Placement where) {
  if (!n.has_max_tree_depth()) n.set_max_tree_depth(D::kMaxTreeDepth);
  if (!n.has_max_energy_error()) n.set_max_energy_error(D::kMaxEnergyError);
  fill_adaptation(*n.mutable_adaptation(), D::kTargetAcceptNuts);
  if (where == Placement::kTopLevel) fill_top_level_adaptation(*n.mutable_adaptation(), true);
}

// The HMC/NUTS kernel inside a composite sampler: the same numeric defaults as a top-level one,
// but adaptation stays off unless enabled.
template <class C>
void fill_local_kernel(C& c) {
  if (c.has_hmc()) fill_hmc(*c.mutable_hmc(), Placement::kLocal);
  if (c.has_nuts()) fill_nuts(*c.mutable_nuts(), Placement::kLocal);
}

void fill_sampler(pemc::v1::SamplerConfig& s) {
  switch (s.kind_case()) {
    case pemc::v1::SamplerConfig::kHmc:
      fill_hmc(*s.mutable_hmc(), Placement::kTopLevel);
      break;
    case pemc::v1::SamplerConfig::kNuts:
      fill_nuts(*s.mutable_nuts(), Placement::kTopLevel);
      break;
    case pemc::v1::SamplerConfig::kRwm:
      fill_adaptation(*s.mutable_rwm()->mutable_adaptation(), D::kTargetAcceptRwm);
      break;
    case pemc::v1::SamplerConfig::kMala:
      fill_adaptation(*s.mutable_mala()->mutable_adaptation(), D::kTargetAcceptMala);
      break;
    case pemc::v1::SamplerConfig::kPseudoExtended:
      fill_local_kernel(*s.mutable_pseudo_extended());
      break;
    case pemc::v1::SamplerConfig::kContinuousTempering:
      fill_local_kernel(*s.mutable_continuous_tempering());
      // No base given: fit one to the target (any target with a gradient, Stan models included).
      if (!s.continuous_tempering().has_base())
        s.mutable_continuous_tempering()->mutable_base()->mutable_variational();
      break;
    case pemc::v1::SamplerConfig::kParallelTempering:
      fill_local_kernel(*s.mutable_parallel_tempering());
      break;
    case pemc::v1::SamplerConfig::kSimulatedTempering:
      fill_local_kernel(*s.mutable_simulated_tempering());
      break;
    case pemc::v1::SamplerConfig::kAnnealedImportance:
      fill_local_kernel(*s.mutable_annealed_importance());
      // AIS starts from a normalised reference: without one, a Gaussian fitted to the target.
      if (!s.annealed_importance().has_reference())
        s.mutable_annealed_importance()->mutable_reference()->mutable_fitted()->mutable_variational();
      break;
    case pemc::v1::SamplerConfig::KIND_NOT_SET:
      break;
  }
}

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

// Continuous-tempering bootstrap rounds: each round's warmup defaults to the run's (already
// defaulted) warmup; the refitted covariance is used as estimated.
void fill_ct_bootstrap(pemc::v1::RunConfig& cfg) {
  if (!cfg.sampler().has_continuous_tempering() ||
      !cfg.sampler().continuous_tempering().has_bootstrap())
    return;
  auto& b = *cfg.mutable_sampler()->mutable_continuous_tempering()->mutable_bootstrap();
  if (!b.has_warmup()) b.set_warmup(cfg.warmup());
  if (!b.has_covariance_scale()) b.set_covariance_scale(1.0);
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

  if (cfg.has_sampler()) fill_sampler(*cfg.mutable_sampler());
  fill_ct_bootstrap(cfg);
  if (cfg.has_target()) fill_target(*cfg.mutable_target());
}

std::vector<std::string> apply_dimension_defaults(pemc::v1::RunConfig& config,
                                                  std::int64_t target_dim) {
  std::vector<std::string> filled;
  if (config.sampler().has_pseudo_extended()) {
    auto& pe = *config.mutable_sampler()->mutable_pseudo_extended();
    const bool had_a = pe.beta_instrumental().has_a();
    extended::fill_dimension_defaults(pe, target_dim);
    if (!had_a && pe.beta_instrumental().has_a())
      filled.push_back(fmt::format(
          "sampler.pseudo_extended.beta_instrumental.a = {} (the default for the target's "
          "dimension d = {}: max(1, d/2 + min(1, max(0, (d - 2)/8))), so that the instrumental "
          "pseudo-samples spread over all temperatures; docs/pseudo-extended-defaults.md)",
          pe.beta_instrumental().a(), target_dim));
  }
  return filled;
}

}  // namespace pemc::config
