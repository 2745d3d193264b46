#pragma once
// How the log weights of a draw's weighted samples (extra_states, one log weight each) combine,
// one rule for every report (summaries, diagnostics, plots). Only pseudo-extended normalises
// within each draw (Theorem 2.1: the N pseudo-samples of one draw share its unit weight).
// Continuous tempering (eq. 21), simulated tempering (thesis eq. 2.73) and AIS weights are
// global: normalising them per draw would give every draw weight 1. A file that does not name its
// sampler (older or hand-made files) is read by shape: several weighted samples per draw are
// pseudo-samples, a single one is a global weight.
#include <string_view>

namespace pemc::report {

inline bool weights_within_draw(std::string_view sampler, int n_samples) {
  if (sampler == "pseudo_extended") return true;
  return sampler.empty() && n_samples > 1;
}

}  // namespace pemc::report
