#pragma once
// Config (tempering.proto) -> tempering samplers. The local kernel comes from the caller's factory
// (config/factories.cpp), so this module does not depend on config/.
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "parallel/group_comm.hpp"
#include "pemc/v1/tempering.pb.h"
#include "targets/target.hpp"
#include "tempering/parallel_tempering.hpp"
#include "tempering/tempered_target.hpp"

namespace pemc::tempering {

// The reference of a tempering path for a target of dimension dim; `field` names the config path
// in errors (e.g. "sampler.parallel_tempering.reference"). Throws ConfigError / IoError / DataError.
ReferencePtr make_reference(const pemc::v1::TemperingReferenceConfig& config, int dim,
                            const std::string& field);
// The same, and a `fitted` reference: the base density continuous tempering would build for
// `target` (extended/base_density_fit.hpp), its log zeta recorded with it (Reference::log_zeta).
ReferencePtr make_reference(const pemc::v1::TemperingReferenceConfig& config,
                            const targets::Target& target, const std::string& field);

// The ladder described by `config` (see TemperingLadderConfig). KIND_UNSPECIFIED becomes
// default_kind. Throws ConfigError naming `field`.
std::vector<double> make_ladder(const pemc::v1::TemperingLadderConfig& config, bool has_reference,
                                pemc::v1::TemperingLadderConfig::Kind default_kind,
                                const std::string& field);

struct TemperingSampler {
  targets::TargetPtr space;  // the chain's state space (the target for PT)
  kernels::KernelPtr kernel;
};

TemperingSampler make_parallel_tempering(const pemc::v1::ParallelTemperingConfig& config,
                                         targets::TargetPtr target,
                                         const LocalKernelFactory& factory,
                                         parallel::GroupCommPtr group);
TemperingSampler make_simulated_tempering(const pemc::v1::SimulatedTemperingConfig& config,
                                          targets::TargetPtr target,
                                          const LocalKernelFactory& factory);
TemperingSampler make_annealed_importance(const pemc::v1::AnnealedImportanceConfig& config,
                                          targets::TargetPtr target,
                                          const LocalKernelFactory& factory);

}  // namespace pemc::tempering
