#pragma once
// A chain's gradient counts in today's units, from its footer summary (records.proto ChainSummary):
// n_gradient_evals counts the TARGET's gradient evaluations, n_extended_gradient_evals those of
// the sampler's own potential (pseudo-extended: one per extended leapfrog step, each n_pseudo
// target gradients).
//
// Files written before n_extended_gradient_evals existed have 0 there and counted a
// pseudo-extended chain's extended evaluations in n_gradient_evals (one per extended step, not N):
// such a summary (extended 0, n_gradient_evals > 0) is converted here, the target counts being
// n_pseudo times the old ones (n_pseudo from the run's config). Every other sampler counted target
// gradients already (parallel tempering every replica's, continuous tempering one per extended
// evaluation), so its old counts are both.
#include <cstdint>

#include "pemc/v1/config.pb.h"
#include "pemc/v1/records.pb.h"

namespace pemc::report {

struct GradientCounts {
  std::int64_t target = 0, target_warmup = 0;      // n_gradient_evals(_warmup)
  std::int64_t extended = 0, extended_warmup = 0;  // n_extended_gradient_evals(_warmup)
  bool converted = false;                          // from a file written before the field
};

GradientCounts gradient_counts(const v1::ChainSummary& summary, const v1::RunConfig& run);

}  // namespace pemc::report
