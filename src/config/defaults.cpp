#include "config/defaults.hpp"

#include "config/modes.hpp"
#include "config/sampler_kinds.hpp"
#include "config/target_kinds.hpp"

namespace pemc::config {

namespace {

using D = Defaults;

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
  fill_modes_defaults(cfg);
  if (cfg.has_target())
    if (const auto* kind = find_target_kind(cfg.target().kind_case()); kind && kind->apply_defaults)
      kind->apply_defaults(*cfg.mutable_target());
}

std::vector<std::string> apply_dimension_defaults(pemc::v1::RunConfig& config,
                                                  std::int64_t target_dim) {
  const auto* kind = find_sampler_kind(config.sampler().kind_case());
  if (!kind || !kind->apply_dimension_defaults) return {};
  return kind->apply_dimension_defaults(config, target_dim);
}

}  // namespace pemc::config
