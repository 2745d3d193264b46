#include "config/factories.hpp"

#include "config/sampler_kinds.hpp"
#include "config/target_kinds.hpp"
#include "core/error.hpp"
#include "targets/boxed.hpp"

namespace pemc::config {
namespace {

targets::TargetPtr make_unboxed_target(const v1::TargetConfig& config) {
  if (config.kind_case() == v1::TargetConfig::KIND_NOT_SET)
    throw ConfigError("target: no target kind is set");
  const auto* kind = find_target_kind(config.kind_case());
  if (!kind)
    throw ConfigError("target." + target_kind_name(config) + ": not available in this build");
  return kind->make(config);
}

}  // namespace

targets::TargetPtr make_target(const v1::TargetConfig& config) {
  return targets::apply_box(make_unboxed_target(config), config);
}

SamplerSetup make_sampler(const v1::SamplerConfig& config, targets::TargetPtr target,
                          parallel::GroupCommPtr group, const SamplerContext& context) {
  if (!group) group = std::make_shared<parallel::SerialGroup>();
  if (config.kind_case() == v1::SamplerConfig::KIND_NOT_SET)
    throw ConfigError("sampler: no sampler kind is set");
  const auto* kind = find_sampler_kind(config.kind_case());
  if (!kind)
    throw ConfigError("sampler." + sampler_kind_name(config) + ": not available in this build");
  return kind->make(config, std::move(target), std::move(group), context);
}

const modes::ModeSet& modes_of(const SamplerContext& context, const std::string& field) {
  if (!context.modes)
    throw ConfigError(field + ": builds on the run's mode search (config `modes`), which did not "
                      "run for this sampler");
  return *context.modes;
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
