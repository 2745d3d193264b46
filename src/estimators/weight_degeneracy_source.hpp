#pragma once
// A chain's state space whose draws are weighted samples that can degenerate (weight_degeneracy.hpp),
// as the runner sees it: optional, found by dynamic_cast on the space, so the runner watches the
// weights of any sampler that offers this without knowing which sampler it is (the pseudo-extended
// target implements it, extended/pseudo_extended_target.hpp).
//
// Each draw's weighted view (targets::WeightedView) then holds the N log weights the tracker
// expects and, when degeneracy_tracks_betas(), its N betas in `extra`.
#include <optional>

#include "estimators/weight_degeneracy.hpp"

namespace pemc::estimators {

class WeightDegeneracySource {
 public:
  virtual ~WeightDegeneracySource() = default;

  // A fresh tracker for this space's weights, or nullopt when there is nothing to watch (a single
  // weighted sample cannot degenerate).
  virtual std::optional<WeightDegeneracy> make_degeneracy_tracker() const = 0;

  // Whether the trackers get each draw's betas (false when every beta is the same constant, so
  // beta statistics would say nothing).
  virtual bool degeneracy_tracks_betas() const = 0;
};

}  // namespace pemc::estimators
