#include "config/factories.hpp"

#include "config/defaults.hpp"
#include "core/error.hpp"
#include "extended/continuous_tempering.hpp"
#include "extended/repeated_transition_kernel.hpp"
#include "extended/pseudo_extended.hpp"
#include "kernels/hmc.hpp"
#include "kernels/mala.hpp"
#include "kernels/nuts.hpp"
#include "kernels/rwm.hpp"
#include "targets/banana.hpp"
#include "targets/boltzmann.hpp"
#include "targets/boxed.hpp"
#include "targets/correlated_gaussian.hpp"
#include "targets/flower.hpp"
#include "targets/funnel.hpp"
#include "targets/gaussian.hpp"
#include "targets/horseshoe_logistic.hpp"
#include "targets/mixture.hpp"
#include "targets/plugin.hpp"
#include "targets/radon.hpp"
#include "stan_target/stan_target.hpp"
#include "tempering/from_config.hpp"

namespace pemc::config {
namespace {

Vector to_vector(const google::protobuf::RepeatedField<double>& r) {
  Vector v(r.size());
  for (int i = 0; i < r.size(); ++i) v[i] = r[i];
  return v;
}

targets::TargetPtr make_gaussian(const v1::GaussianTarget& g) {
  const Vector mean = to_vector(g.mean());
  const auto d = mean.size();
  Matrix cov = Matrix::Identity(d, d);
  if (g.covariance_size() > 0) {
    if (g.covariance_size() != d * d)
      throw ConfigError("target.gaussian.covariance: expected " + std::to_string(d * d) +
                        " numbers (dim x dim), got " + std::to_string(g.covariance_size()));
    cov = Eigen::Map<const Matrix>(g.covariance().data(), d, d).transpose();
  } else if (g.variance_size() > 0) {
    if (g.variance_size() != d)
      throw ConfigError("target.gaussian.variance: expected " + std::to_string(d) +
                        " numbers, got " + std::to_string(g.variance_size()));
    cov = to_vector(g.variance()).asDiagonal();
  }
  try {
    return std::make_shared<targets::Gaussian>(mean, cov);
  } catch (const NumericalError& e) {
    throw ConfigError(std::string("target.gaussian: ") + e.what());
  }
}

hmc::Metric make_metric(v1::MetricKind kind, v1::MetricKind default_kind,
                        const google::protobuf::RepeatedField<double>& inverse, int dim,
                        const std::string& field) {
  if (kind == v1::METRIC_UNSPECIFIED) kind = default_kind;
  try {
    switch (kind) {
      case v1::DIAGONAL:
        if (inverse.empty()) return hmc::Metric::diagonal(Vector::Ones(dim));
        if (inverse.size() != dim)
          throw ConfigError(field + ".inverse_metric: a diagonal metric needs " +
                            std::to_string(dim) + " numbers, got " + std::to_string(inverse.size()));
        return hmc::Metric::diagonal(to_vector(inverse));
      case v1::DENSE:
        if (inverse.empty()) return hmc::Metric::dense(Matrix::Identity(dim, dim));
        if (inverse.size() != dim * dim)
          throw ConfigError(field + ".inverse_metric: a dense metric needs " +
                            std::to_string(dim * dim) + " numbers, got " +
                            std::to_string(inverse.size()));
        return hmc::Metric::dense(Eigen::Map<const Matrix>(inverse.data(), dim, dim).transpose());
      default:
        if (!inverse.empty())
          throw ConfigError(field + ".inverse_metric: given, but the metric is UNIT");
        return hmc::Metric::unit(dim);
    }
  } catch (const NumericalError& e) {
    throw ConfigError(field + ": " + e.what());
  }
}

std::optional<adapt::WarmupAdapterOptions> make_adaptation(const v1::AdaptationConfig& a,
                                                           double default_target) {
  if (!a.enabled()) return std::nullopt;
  adapt::WarmupAdapterOptions o;
  o.step_size.target_accept = a.has_target_accept() ? a.target_accept() : default_target;
  if (a.has_gamma()) o.step_size.gamma = a.gamma();
  if (a.has_t0()) o.step_size.t0 = a.t0();
  if (a.has_kappa()) o.step_size.kappa = a.kappa();
  o.adapt_metric = a.adapt_metric();
  if (a.has_init_buffer()) o.init_buffer = a.init_buffer();
  if (a.has_term_buffer()) o.term_buffer = a.term_buffer();
  if (a.has_base_window()) o.base_window = a.base_window();
  return o;
}

}  // namespace

namespace {

targets::TargetPtr make_unboxed_target(const v1::TargetConfig& config) {
  switch (config.kind_case()) {
    case v1::TargetConfig::kGaussian: return make_gaussian(config.gaussian());
    case v1::TargetConfig::kCorrelatedGaussian:
      return targets::make_correlated_gaussian(config.correlated_gaussian());
    case v1::TargetConfig::kMixture: return targets::make_mixture(config.mixture());
    case v1::TargetConfig::kBanana: return targets::make_banana(config.banana());
    case v1::TargetConfig::kFlower: return targets::make_flower(config.flower());
    case v1::TargetConfig::kFunnel: return targets::make_funnel(config.funnel());
    case v1::TargetConfig::kHorseshoeLogistic:
      return targets::make_horseshoe_logistic(config.horseshoe_logistic());
    case v1::TargetConfig::kRadon: return targets::make_radon(config.radon());
    case v1::TargetConfig::kBoltzmann: return targets::make_boltzmann(config.boltzmann());
    case v1::TargetConfig::kPlugin: return targets::make_plugin(config.plugin());
    case v1::TargetConfig::kStan: return stan_target::make_stan_target(config.stan());
    case v1::TargetConfig::KIND_NOT_SET:
      throw ConfigError("target: no target kind is set");
    default:
      throw ConfigError("target." + target_kind_name(config) + ": not available in this build");
  }
}

}  // namespace

targets::TargetPtr make_target(const v1::TargetConfig& config) {
  return targets::apply_box(make_unboxed_target(config), config);
}

kernels::KernelPtr make_local_kernel(const v1::HmcConfig* hmc, const v1::NutsConfig* nuts,
                                     targets::TargetPtr space, const std::string& field) {
  const int dim = space->dim();
  if (hmc) {
    kernels::HmcOptions o;
    o.search_step_size = !hmc->has_step_size();
    o.step_size = o.search_step_size ? Defaults::kStepSizeSearchStart : hmc->step_size();
    o.n_leapfrog = hmc->n_leapfrog();
    o.jitter_step_size = hmc->jitter_step_size();
    o.jitter_n_leapfrog = hmc->jitter_n_leapfrog();
    o.adaptation = make_adaptation(hmc->adaptation(), Defaults::kTargetAcceptHmc);
    auto metric = make_metric(hmc->metric(), v1::UNIT, hmc->inverse_metric(), dim, field + ".hmc");
    return std::make_unique<kernels::HmcKernel>(std::move(space), std::move(metric), o);
  }
  if (nuts) {
    kernels::NutsOptions o;
    o.search_step_size = !nuts->has_step_size();
    o.step_size = o.search_step_size ? Defaults::kStepSizeSearchStart : nuts->step_size();
    if (nuts->has_max_tree_depth()) o.max_tree_depth = nuts->max_tree_depth();
    if (nuts->has_max_energy_error()) o.max_energy_error = nuts->max_energy_error();
    o.adaptation = make_adaptation(nuts->adaptation(), Defaults::kTargetAcceptNuts);
    auto metric =
        make_metric(nuts->metric(), v1::DIAGONAL, nuts->inverse_metric(), dim, field + ".nuts");
    return std::make_unique<kernels::NutsKernel>(std::move(space), std::move(metric), o);
  }
  throw ConfigError(field + ": no kernel is set (give hmc or nuts)");
}

SamplerSetup make_sampler(const v1::SamplerConfig& config, targets::TargetPtr target,
                          parallel::GroupCommPtr group) {
  if (!group) group = std::make_shared<parallel::SerialGroup>();
  switch (config.kind_case()) {
    case v1::SamplerConfig::kHmc:
      return {target, make_local_kernel(&config.hmc(), nullptr, target, "sampler")};
    case v1::SamplerConfig::kNuts:
      return {target, make_local_kernel(nullptr, &config.nuts(), target, "sampler")};
    case v1::SamplerConfig::kRwm: {
      kernels::RwmOptions o;
      o.proposal_scale = config.rwm().proposal_scale();
      o.adaptation = make_adaptation(config.rwm().adaptation(), Defaults::kTargetAcceptRwm);
      return {target, std::make_unique<kernels::RwmKernel>(target, o)};
    }
    case v1::SamplerConfig::kMala: {
      kernels::MalaOptions o;
      o.step_size = config.mala().step_size();
      o.adaptation = make_adaptation(config.mala().adaptation(), Defaults::kTargetAcceptMala);
      return {target, std::make_unique<kernels::MalaKernel>(target, o)};
    }
    case v1::SamplerConfig::kPseudoExtended: {
      // Pseudo-extended (src/extended/pseudo_extended.hpp): the chain's pseudo-samples are
      // evaluated in blocks over `group`; the inner HMC/NUTS kernel runs on the extended space.
      const auto& pe = config.pseudo_extended();
      auto inner = [&pe](targets::TargetPtr space) {
        return make_local_kernel(pe.has_hmc() ? &pe.hmc() : nullptr,
                                 pe.has_nuts() ? &pe.nuts() : nullptr, std::move(space),
                                 "sampler.pseudo_extended");
      };
      auto s = extended::make_pseudo_extended(pe, target, inner, group);
      return {std::move(s.space), std::move(s.kernel)};
    }
    case v1::SamplerConfig::kContinuousTempering: {
      // Continuous tempering (src/extended/continuous_tempering.hpp): the inner HMC/NUTS kernel
      // runs on the (x, u) space (JOINT) or on x | beta (GIBBS, wrapped in the Gibbs kernel).
      const auto& ct = config.continuous_tempering();
      auto inner = [&ct](targets::TargetPtr space) {
        return make_local_kernel(ct.has_hmc() ? &ct.hmc() : nullptr,
                                 ct.has_nuts() ? &ct.nuts() : nullptr, std::move(space),
                                 "sampler.continuous_tempering");
      };
      auto s = extended::make_continuous_tempering(ct, target, inner);
      if (ct.has_sweeps_per_draw() && ct.sweeps_per_draw() != 1)
        s.kernel = std::make_unique<extended::RepeatedTransitionKernel>(std::move(s.kernel),
                                                                        ct.sweeps_per_draw());
      return {std::move(s.space), std::move(s.kernel)};
    }
    case v1::SamplerConfig::kParallelTempering: {
      // Parallel tempering (src/tempering/parallel_tempering.hpp): one local kernel per
      // temperature, replicas spread over `group`. The factory is kept by the kernel (it rebuilds
      // the level kernels when warmup resizes the ladder), so it owns copies of the configs.
      const auto& pt = config.parallel_tempering();
      auto local = [hmc = pt.hmc(), nuts = pt.nuts(), has_hmc = pt.has_hmc(),
                    has_nuts = pt.has_nuts()](targets::TargetPtr space) {
        return make_local_kernel(has_hmc ? &hmc : nullptr, has_nuts ? &nuts : nullptr,
                                 std::move(space), "sampler.parallel_tempering");
      };
      auto s = tempering::make_parallel_tempering(pt, target, local, group);
      return {std::move(s.space), std::move(s.kernel)};
    }
    case v1::SamplerConfig::kSimulatedTempering: {
      // Simulated tempering (src/tempering/simulated_tempering.hpp) on the (x, k) space.
      const auto& st = config.simulated_tempering();
      auto local = [&st](targets::TargetPtr space) {
        return make_local_kernel(st.has_hmc() ? &st.hmc() : nullptr,
                                 st.has_nuts() ? &st.nuts() : nullptr, std::move(space),
                                 "sampler.simulated_tempering");
      };
      auto s = tempering::make_simulated_tempering(st, target, local);
      return {std::move(s.space), std::move(s.kernel)};
    }
    case v1::SamplerConfig::kAnnealedImportance: {
      // AIS (src/tempering/annealed_importance.hpp): one iteration = one annealing run.
      const auto& ais = config.annealed_importance();
      auto local = [&ais](targets::TargetPtr space) {
        return make_local_kernel(ais.has_hmc() ? &ais.hmc() : nullptr,
                                 ais.has_nuts() ? &ais.nuts() : nullptr, std::move(space),
                                 "sampler.annealed_importance");
      };
      auto s = tempering::make_annealed_importance(ais, target, local);
      return {std::move(s.space), std::move(s.kernel)};
    }
    case v1::SamplerConfig::KIND_NOT_SET:
      throw ConfigError("sampler: no sampler kind is set");
    default:
      throw ConfigError("sampler." + sampler_kind_name(config) + ": not available in this build");
  }
}

int ranks_per_chain(const v1::SamplerConfig& config) {
  const auto* kind = v1::SamplerConfig::descriptor()->FindFieldByNumber(config.kind_case());
  if (!kind || kind->type() != google::protobuf::FieldDescriptor::TYPE_MESSAGE) return 1;
  const auto& message = config.GetReflection()->GetMessage(config, kind);
  const auto* field = message.GetDescriptor()->FindFieldByName("ranks_per_chain");
  if (!field || field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_INT32) return 1;
  return std::max(1, message.GetReflection()->GetInt32(message, field));
}

std::string target_kind_name(const v1::TargetConfig& config) {
  const auto* field = v1::TargetConfig::descriptor()->FindFieldByNumber(config.kind_case());
  return field ? field->name() : "none";
}

std::string sampler_kind_name(const v1::SamplerConfig& config) {
  const auto* field = v1::SamplerConfig::descriptor()->FindFieldByNumber(config.kind_case());
  return field ? field->name() : "none";
}

}  // namespace pemc::config
