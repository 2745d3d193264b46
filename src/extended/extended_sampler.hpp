#pragma once
// What an extended-space sampler (pseudo-extended, continuous tempering) hands to the chain driver:
// the space its kernel samples and the kernel. The inner local kernel (HMC/NUTS from the config)
// is built by the caller's factory, so this module does not depend on config/.
#include <functional>

#include "kernels/kernel.hpp"
#include "targets/target.hpp"

namespace pemc::extended {

struct ExtendedSampler {
  targets::TargetPtr space;
  kernels::KernelPtr kernel;
};

// Builds the configured local kernel (HMC or NUTS) on a given space.
using InnerKernelFactory = std::function<kernels::KernelPtr(targets::TargetPtr space)>;

}  // namespace pemc::extended
