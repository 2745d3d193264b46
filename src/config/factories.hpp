#pragma once
// Config -> objects: the target and the sampler of a run. Each kind's factory is in its row of
// target_kinds / sampler_kinds (one file per kind under targets/ and samplers/).
#include <memory>
#include <string>

#include "kernels/kernel.hpp"
#include "modes/mode_set.hpp"
#include "parallel/group_comm.hpp"
#include "pemc/v1/config.pb.h"
#include "targets/target.hpp"

namespace pemc::config {

// Builds the target. Construction problems (a non-SPD covariance, a bad data file) surface as
// ConfigError/DataError naming the config field or the file.
targets::TargetPtr make_target(const pemc::v1::TargetConfig& config);

// What a chain runs: the space the kernel samples (the target itself, or an extended target built
// on it by pseudo-extended / tempering samplers) and the kernel on that space.
struct SamplerSetup {
  targets::TargetPtr space;
  kernels::KernelPtr kernel;
};

// What a sampler is built from besides its config and target: the run's mode search (modes/), for
// samplers whose reference, base or normalisation comes from the modes found. Config validation
// builds samplers before any search with modes::stand_in_mode_set.
struct SamplerContext {
  std::shared_ptr<const modes::ModeSet> modes;  // nullptr: the run has no search
  // Pseudo-extended's reference path builds rho from these instead of `modes` when given (a
  // pooled warmup's fit to its draws, warmup/reference_fit.hpp); the mode check keeps `modes`.
  std::shared_ptr<const modes::ModeSet> reference_modes;
};

// Builds the sampler for `target` (dimension-dependent metric checks happen here). `group` is the
// set of ranks running this chain together (nullptr = this rank alone); samplers whose chains do
// not span ranks ignore it. A sampler that uses the modes throws ConfigError without them.
SamplerSetup make_sampler(const pemc::v1::SamplerConfig& config, targets::TargetPtr target,
                          parallel::GroupCommPtr group = nullptr,
                          const SamplerContext& context = {});

// The run's modes from `context`, or a ConfigError naming `field` (the sampler's config path).
const modes::ModeSet& modes_of(const SamplerContext& context, const std::string& field);

// The `ranks_per_chain` of the configured sampler (a field of that name in the active sampler
// message), or 1 when the sampler has none.
int ranks_per_chain(const pemc::v1::SamplerConfig& config);

// A plain kernel (hmc or nuts) on `space`; `field` names the config path in errors. Composite
// samplers use it for their local kernel (samplers/local_kernel.hpp).
kernels::KernelPtr make_local_kernel(const pemc::v1::HmcConfig* hmc, const pemc::v1::NutsConfig* nuts,
                                     targets::TargetPtr space, const std::string& field);

std::string target_kind_name(const pemc::v1::TargetConfig& config);
std::string sampler_kind_name(const pemc::v1::SamplerConfig& config);

}  // namespace pemc::config
