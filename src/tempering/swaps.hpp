#pragma once
// Replica exchange between neighbouring temperatures, as a pure function of O(1) numbers per
// replica, so that every member of a group makes the same decisions (Pigeons' design).
//
// Replicas exchange *temperatures*: replica a at level i (beta_i) and b at level i+1 swap levels
// with probability min(1, alpha),
//     log alpha = log pi_{beta_i}(x_b) + log pi_{beta_{i+1}}(x_a) - log pi_{beta_i}(x_a)
//                 - log pi_{beta_{i+1}}(x_b) = (beta_{i+1} - beta_i)(V(x_b) - V(x_a)),
// with V = phi - psi (the path's normalisers cancel). Only V of each replica is needed.
//
// Schemes (Syed et al. 2021): in a round either the even pairs (0,1), (2,3), ... or the odd pairs
// (1,2), (3,4), ... are proposed. Deterministic even/odd (DEO, non-reversible) alternates with
// the round number; stochastic even/odd (SEO, reversible) picks the parity with a fair coin.
#include <cstdint>
#include <vector>

#include "pemc/v1/checkpoint.pb.h"

#include "rng/stream.hpp"

namespace pemc::tempering {

enum class SwapScheme { kDeterministicEvenOdd, kStochasticEvenOdd };

// log alpha for the replicas at levels (i, i+1): (beta_hi - beta_lo)(v_hi - v_lo), where v_hi is
// V of the replica at the higher beta (level i+1). NaN (from a non-finite V) counts as -inf.
double swap_log_ratio(double beta_lo, double beta_hi, double v_lo, double v_hi);

struct SwapOutcome {
  std::vector<double> accept_prob;  // min(1, alpha) for *every* neighbour pair (K - 1)
  std::vector<char> proposed;       // pair i proposed this round
  std::vector<char> accepted;       // pair i swapped
};

// One swap round. v: V per replica (indexed by replica). replica_at: level -> replica and
// level_of: replica -> level are updated in place. Draws from `stream` (SEO: the coin first; then
// one uniform per proposed pair in ascending pair order).
SwapOutcome swap_round(const std::vector<double>& betas, const std::vector<double>& v,
                       std::vector<int>& replica_at, std::vector<int>& level_of, SwapScheme scheme,
                       std::int64_t round, rng::Stream& stream);

// Stabilised PT's two paths on one line of levels (parallel_tempering.hpp): pairs
// 0 .. first_fixed_pair - 1 lie on the reference path (V = phi - psi: v), the pairs from
// first_fixed_pair on on the power path (V = phi: v_fixed); every pair's two levels lie on one
// path, so the same formula applies with that path's V. Betas need not ascend along the line (the
// power leg descends from the target). first_fixed_pair = K - 1 is swap_round above.
SwapOutcome swap_round(const std::vector<double>& betas, const std::vector<double>& v,
                       const std::vector<double>& v_fixed, int first_fixed_pair,
                       std::vector<int>& replica_at, std::vector<int>& level_of, SwapScheme scheme,
                       std::int64_t round, rng::Stream& stream);

// Round trips (Syed et al. 2021, Section 3.4): a replica completes one when it reaches level 0
// after having visited the top level K-1 since its previous visit to level 0.
class RoundTripCounter {
 public:
  explicit RoundTripCounter(int n_replicas = 0) { reset(n_replicas); }
  void reset(int n_replicas);
  // After a round: the current level of every replica.
  void observe(const std::vector<int>& level_of, int n_levels);
  std::int64_t round_trips() const { return trips_; }
  // The fewest round trips any one replica completed.
  std::int64_t min_replica_round_trips() const;
  void save_state(pemc::v1::KernelState& s) const;
  void restore_state(const pemc::v1::KernelState& s);

 private:
  // 0: not yet at the bottom; 1: last extreme seen was the bottom; 2: top seen after the bottom.
  std::vector<char> phase_;
  std::int64_t trips_ = 0;
  std::vector<std::int64_t> per_replica_;
};

}  // namespace pemc::tempering
