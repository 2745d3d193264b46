#pragma once
// What a chain's summary says about its post-warmup transitions beyond counts the driver keeps
// itself (records.proto ChainSummary.n_max_tree_depth, e_bfmi): the transitions whose NUTS tree
// reached the configured maximum depth, and the E-BFMI of the model's Hamiltonian energy
// (estimators/ebfmi.hpp), each only for the samplers whose draws record it
// (config/sampler_columns.hpp configured_max_tree_depth, records_model_energy). Every post-warmup
// transition counts, written or thinned away, as for n_divergent. Its sums go into chain
// checkpoints, so a resumed chain reports what the uninterrupted one does.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "estimators/ebfmi.hpp"
#include "kernels/kernel.hpp"
#include "pemc/v1/config.pb.h"
#include "pemc/v1/records.pb.h"

namespace pemc::runner {

class TransitionHealth {
 public:
  explicit TransitionHealth(const pemc::v1::SamplerConfig& sampler);

  // One post-warmup transition's statistics.
  void add(const kernels::TransitionStats& stats);
  // Sets the summary's n_max_tree_depth and e_bfmi where the sampler has them (and E-BFMI is
  // defined: at least 2 finite, not all equal energies).
  void write(pemc::v1::ChainSummary& summary) const;

  // The sums (ChainCheckpoint.transition_health); empty for a sampler with neither statistic.
  std::vector<double> save() const;
  // From save() of a chain of the same sampler. DataError for sums of another shape.
  void restore(std::span<const double> sums);
  // A chain resumed after its sampling began from a checkpoint without the sums (written by a
  // pemc that did not save them): the statistics are not known, and write() leaves them unset.
  void mark_unknown() { unknown_ = true; }

 private:
  std::optional<int> max_tree_depth_;
  bool energy_ = false;
  std::int64_t n_max_tree_depth_ = 0;
  bool energy_finite_ = true;  // false from the first non-finite energy on: E-BFMI undefined
  estimators::EbfmiAccumulator ebfmi_;
  bool unknown_ = false;
};

}  // namespace pemc::runner
