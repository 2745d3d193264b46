#pragma once
// Shared by the continuous-tempering unit tests: the inner HMC kernel factory on the unit metric.
#include <memory>

#include "extended/continuous_tempering.hpp"
#include "hmc/metric.hpp"
#include "kernels/hmc.hpp"

namespace pemc::testing {

// HMC with step size `step` and `n_leapfrog` steps (both jittered unless jitter = false).
inline extended::InnerKernelFactory hmc_factory(double step, int n_leapfrog, bool jitter = true) {
  return [=](targets::TargetPtr space) -> kernels::KernelPtr {
    kernels::HmcOptions o;
    o.step_size = step;
    o.n_leapfrog = n_leapfrog;
    o.jitter_step_size = jitter;
    o.jitter_n_leapfrog = jitter;
    return std::make_unique<kernels::HmcKernel>(space, hmc::Metric::unit(space->dim()), o);
  };
}

}  // namespace pemc::testing
