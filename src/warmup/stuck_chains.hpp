#pragma once
// Chains a pooled warmup restarts (docs/guide.md#pooled-warmup). A chain can start where the log
// density is far below the posterior's and so steep that dual averaging drives its step size to
// 1e-12 (arma11 from a uniform(-2, 2) start: log density -1e109, step size 1e-51 after the
// initial buffer). It then never reaches the posterior, costs up to 2^max_tree_depth gradients
// an iteration for the whole run, and its window draws pull the pooled metric towards the gap
// between it and the other chains.
//
// After a window, chain c is *stuck behind* chain h when both
//   - c's adapted step size is below kStuckStepRatio times h's, and
//   - every log density c had in the window lies below every one h had.
// The relation is transitive, so a stuck chain is behind some chain that is behind none; it
// restarts (keeping its own random stream) from the last state of one of those, chosen by its
// place among the stuck chains and the round. A separate mode does not look like this: a
// narrower mode has smaller steps but a higher log density, a wider one a lower density but
// larger steps.
#include <map>
#include <vector>

#include "warmup/pooled_messages.hpp"

namespace pemc::warmup {

inline constexpr double kStuckStepRatio = 1e-3;

struct ChainRestart {
  int chain_id = 0;
  int donor_id = 0;  // the chain whose state it restarts from
  double step_size = 0.0;
  double donor_step_size = 0.0;
  double max_log_density = 0.0;        // the stuck chain's, over the window
  double donor_min_log_density = 0.0;  // the donor's
};

// The chains among `reports` (one window round's reports) to restart after round `round`, in
// ascending chain id. Reports of failed chains, or without a finite window, take no part.
std::vector<ChainRestart> stuck_chain_restarts(const std::map<int, ChainRoundReport>& reports,
                                               int round);

}  // namespace pemc::warmup
