#pragma once
// Config (tempering.proto) -> tempering samplers. The local kernel and the fit of a `fitted`
// reference come from the caller (config/samplers/*), so this module depends neither on config/
// nor on the module that fits base densities.
#include <functional>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "parallel/group_comm.hpp"
#include "pemc/v1/tempering.pb.h"
#include "targets/target.hpp"
#include "tempering/parallel_tempering.hpp"
#include "tempering/reference.hpp"
#include "tempering/tempered_target.hpp"

namespace pemc::tempering {

// Fits a `fitted` reference (TemperingReferenceConfig.fitted) for `target`; `field` names the
// config path in errors. The density it returns may use either Evaluation: make_reference
// switches it to kShared. Throws ConfigError / IoError / DataError.
using ReferenceFitter = std::function<Reference(
    const pemc::v1::BaseDensityConfig& config, const targets::Target& target,
    const std::string& field)>;

// The reference of a tempering path for a target of dimension dim; `field` names the config path
// in errors (e.g. "sampler.parallel_tempering.reference"). Throws ConfigError / IoError / DataError.
ReferencePtr make_reference(const pemc::v1::TemperingReferenceConfig& config, int dim,
                            const std::string& field);
// The same, and a `fitted` reference: what `fit` makes of config.fitted for `target`, its log zeta
// recorded with it (Reference::log_zeta). An empty `fit` rejects `fitted` with a ConfigError.
ReferencePtr make_reference(const pemc::v1::TemperingReferenceConfig& config,
                            const targets::Target& target, const std::string& field,
                            const ReferenceFitter& fit);

// The ladder described by `config` (see TemperingLadderConfig). KIND_UNSPECIFIED becomes
// default_kind. Throws ConfigError naming `field`.
std::vector<double> make_ladder(const pemc::v1::TemperingLadderConfig& config, bool has_reference,
                                pemc::v1::TemperingLadderConfig::Kind default_kind,
                                const std::string& field);

struct TemperingSampler {
  targets::TargetPtr space;  // the chain's state space (the target for PT)
  kernels::KernelPtr kernel;
};

// `fit_reference` fits a `fitted` reference (see make_reference).
TemperingSampler make_parallel_tempering(const pemc::v1::ParallelTemperingConfig& config,
                                         targets::TargetPtr target,
                                         const LocalKernelFactory& factory,
                                         parallel::GroupCommPtr group,
                                         const ReferenceFitter& fit_reference);
TemperingSampler make_simulated_tempering(const pemc::v1::SimulatedTemperingConfig& config,
                                          targets::TargetPtr target,
                                          const LocalKernelFactory& factory,
                                          const ReferenceFitter& fit_reference);
TemperingSampler make_annealed_importance(const pemc::v1::AnnealedImportanceConfig& config,
                                          targets::TargetPtr target,
                                          const LocalKernelFactory& factory,
                                          const ReferenceFitter& fit_reference);

}  // namespace pemc::tempering
