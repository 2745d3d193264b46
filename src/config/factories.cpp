#include "config/factories.hpp"

#include "config/sampler_kinds.hpp"
#include "core/error.hpp"
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

SamplerSetup make_sampler(const v1::SamplerConfig& config, targets::TargetPtr target,
                          parallel::GroupCommPtr group) {
  if (!group) group = std::make_shared<parallel::SerialGroup>();
  if (config.kind_case() == v1::SamplerConfig::KIND_NOT_SET)
    throw ConfigError("sampler: no sampler kind is set");
  const auto* kind = find_sampler_kind(config.kind_case());
  if (!kind)
    throw ConfigError("sampler." + sampler_kind_name(config) + ": not available in this build");
  return kind->make(config, std::move(target), std::move(group));
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
