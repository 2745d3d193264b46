#pragma once
// Config -> objects. The only place that maps the proto oneofs onto concrete targets and kernels.
#include <string>

#include "kernels/kernel.hpp"
#include "pemc/v1/config.pb.h"
#include "targets/target.hpp"

namespace pemc::config {

// Builds the target. Construction problems (a non-SPD covariance, a bad data file) surface as
// ConfigError/DataError naming the config field or the file.
targets::TargetPtr make_target(const pemc::v1::TargetConfig& config);

// Builds the kernel for `target` (dimension-dependent metric checks happen here).
kernels::KernelPtr make_kernel(const pemc::v1::SamplerConfig& config, targets::TargetPtr target);

std::string target_kind_name(const pemc::v1::TargetConfig& config);
std::string sampler_kind_name(const pemc::v1::SamplerConfig& config);

}  // namespace pemc::config
