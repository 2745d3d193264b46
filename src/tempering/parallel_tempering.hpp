#pragma once
// Parallel tempering as a Kernel: one transition = one PT round.
//
// K replicas live at inverse temperatures beta_0 < ... < beta_{K-1} = 1 of the path
// pi_beta ∝ exp(-beta phi - (1 - beta) psi) (tempered_target.hpp). A round:
//   1. every replica takes n_local_steps steps of its level's local kernel (HMC/NUTS/RWM/MALA, one
//      kernel per *level*, so step sizes are adapted per temperature); at beta_0 = 0 with a
//      reference the replica instead gets an exact independent draw from the reference;
//   2. swaps between neighbouring levels (swaps.hpp), deterministic even/odd (non-reversible) or
//      stochastic even/odd (reversible). Replicas exchange temperatures, not states;
//   3. the state of the replica now at beta = 1 is returned, so every draw is a target draw.
//
// Distribution over the ranks of a chain (parallel::GroupComm): member m owns the contiguous block
// of replica indices group->my_block(K) and runs only their local steps. Per round the group
// exchanges, per replica, a fixed handful of numbers (V = phi - psi, work and acceptance counts)
// with one allgather — O(1) values per replica, one collective per round — and every member then
// makes the same swap decisions from the same numbers. The member owning the replica at beta = 1
// broadcasts its state (x, phi, grad phi: 2d + 1 values) so every member returns the same draw.
// During warmup the allgather also carries each replica's x and per-step acceptance statistics
// (O(d + n_local_steps) per replica, warmup only): every member replays the same adaptation of
// every level's kernel, and resizing the ladder can seed new replicas from any old one.
//
// Random numbers, independent of the layout: the transition stream (keyed by seed, chain, round)
// gives one 64-bit sub-seed s per round (its first draw). Replica r's local step j uses
// rng::Stream(s, Domain::kTransition, r, j); the swap decisions use rng::Stream(s, Domain::kSwap,
// 0, 0). Every replica's arithmetic happens on whichever member owns it, identically, so draws and
// swap decisions are bit-identical for any number of ranks.
//
// Warmup (Syed et al. 2021; Pigeons): the ladder is re-spaced between tuning rounds of doubling
// length (1, 2, 4, ... PT rounds) from the swap rejection rates of the tuning round just finished
// (schedule.hpp: equalise_barrier); with choose_replicas the number of replicas is set to
// ceil(c Lambda) + 1 (replicas_for_barrier) at the end of tuning rounds of >= 16 PT rounds that
// finish in the first half of the warmup. A resize rebuilds the level kernels (their step-size
// adaptation restarts) and seeds replica j from the old replica whose beta is nearest to beta'_j.
// A last re-spacing happens at the end of warmup if >= 16 rounds passed since the previous one.
//
// Stabilised PT (Surjanovic, Syed, Bouchard-Côté & Campbell, NeurIPS 2022; fixed_betas given): a
// second leg of levels on the power path exp(-beta phi) beside the reference leg. The legs share
// the target level beta = 1 and form one line of levels,
//     reference leg: beta_0 = 0 < ... < 1 (the target)  then  power leg: 1 > ... > beta_min,
// on which replicas travel by the same even/odd swaps: every neighbouring pair lies on one path,
// so its swap uses that path's V (phi - psi on the reference leg, phi on the power leg;
// swaps.hpp). A reference that misses a mode (a mixture over the modes a search found, fitted to
// one mode) cannot trap the chain: the power leg's flat end reaches every mode. Its levels' local
// kernels run on beta phi alone; each replica keeps psi too, for when it crosses to the other leg.
// The ladder adaptation re-spaces each leg from its own rejection rates (and, with
// choose_replicas, sizes each from its own barrier); log Z comes from the reference leg's stepping
// stones; round trips run end to end (reference bottom to power bottom and back).
//
// Estimates (report_estimates; post-warmup rounds only):
//   n_replicas, rounds, round_trips, round_trip_rate (= round_trips / rounds),
//   round_trips_min_replica (the fewest any one replica made: 0 = a replica never left the mode it
//   was in; estimators/log_z_trust.hpp),
//   barrier (Lambda = sum of post-warmup mean rejection probabilities), barrier_warmup (the last
//   warmup estimate), swap_accept_<i> (mean acceptance probability of pair (i, i+1)), beta_<i>,
//   log_z_forward / log_z_reverse (stepping stone, both directions) and log_z (their mean) with
//   batch-means standard errors *_se over log_z_batches full batches. These estimate
//   log Z(1) - log Z(beta_0), which is log Z when a normalised reference is used with beta_0 = 0
//   (on the power path they are named log_z_ratio_*). comm_wall_seconds / local_wall_seconds:
//   time in group collectives vs. local steps (rank-dependent, informational).
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "parallel/group_comm.hpp"
#include "tempering/batched_log_sums.hpp"
#include "tempering/replica_row.hpp"
#include "tempering/swaps.hpp"
#include "tempering/tempered_target.hpp"

namespace pemc::tempering {

// Builds a local kernel on a given space (the configured HMC/NUTS/RWM/MALA).
using LocalKernelFactory = std::function<kernels::KernelPtr(targets::TargetPtr space)>;

struct ParallelTemperingOptions {
  std::vector<double> betas;  // initial ladder: strictly ascending, last = 1; beta_0 > 0 without a
                              // reference
  SwapScheme scheme = SwapScheme::kDeterministicEvenOdd;
  int n_local_steps = 1;      // >= 1
  bool adapt_schedule = true; // during warmup
  bool choose_replicas = false;  // K from the barrier (needs adapt_schedule)
  double replicas_per_barrier = 2.0;  // c in K = ceil(c Lambda) + 1
  int min_replicas = 3;
  int max_replicas = 64;
  int n_batches = 32;         // batch-means batches for the log Z standard errors
  // At beta = 0 with a reference, replace the local steps by one exact independent draw from the
  // reference (it leaves pi_0 = exp(-psi) invariant; Pigeons' iid reference explorer): every
  // visit of the bottom level regenerates the replica.
  bool exact_reference_draws = true;
  // Stabilised PT (see the top of this file): the power leg's ladder, strictly ascending in (0, 1],
  // ending at 1 (the shared target level). Empty: one leg. Needs a reference.
  std::vector<double> fixed_betas;
};

class ParallelTemperingKernel final : public kernels::Kernel {
 public:
  // Throws ConfigError for an invalid ladder or options. group: nullptr = alone.
  ParallelTemperingKernel(targets::TargetPtr target, ReferencePtr reference,
                          LocalKernelFactory factory, ParallelTemperingOptions options,
                          parallel::GroupCommPtr group = nullptr);

  std::string name() const override { return "parallel_tempering"; }
  // state: the beta = 1 replica's state (x, phi, grad phi). On the first call every replica
  // starts from state.x. stats: accept_stat, n_leapfrog, step_size, divergent and nonfinite of the
  // local steps at beta = 1 this round; accepted = the returned state differs from the previous
  // one; n_gradient_evals = the whole group's work this round (every replica).
  kernels::TransitionStats transition(kernels::ChainState& state, rng::Stream& stream) override;
  void begin_warmup(std::int64_t n_warmup) override;
  void end_warmup() override;
  double step_size() const override;  // the beta = 1 level's
  void report_estimates(std::map<std::string, double>& estimates) const override;
  std::string fit_description() const override { return describe_fitted(reference_.get()); }

  // Inspection (tests, benchmarks).
  int n_replicas() const { return static_cast<int>(betas_.size()); }
  // Line order: the reference leg ascending, then the power leg descending (stabilised PT).
  const std::vector<double>& betas() const { return betas_; }
  // Levels of the reference leg, the target included (all of them for one leg).
  int n_reference_levels() const { return n_ref_; }
  // The target level's index on the line.
  int cold_level() const { return n_ref_ - 1; }
  bool on_fixed_leg(int level) const { return level >= n_ref_; }
  const std::vector<int>& level_of() const { return level_of_; }
  const std::vector<int>& replica_at() const { return replica_at_; }
  const SwapOutcome& last_swaps() const { return last_swaps_; }
  std::int64_t round_trips() const { return round_trips_.round_trips(); }
  std::int64_t sampling_rounds() const { return sampling_rounds_; }
  // Post-warmup mean acceptance probability per pair.
  std::vector<double> swap_accept() const;
  double barrier() const;  // post-warmup Lambda
  double barrier_warmup() const { return barrier_warmup_; }
  struct LogZ {
    double forward = 0, reverse = 0, forward_se = 0, reverse_se = 0, mean_se = 0;
  };
  LogZ log_z() const;  // stepping stone (post-warmup)
  double comm_seconds() const { return comm_seconds_; }

  // Checkpoint: ladder, replica states (gathered from the group's members: every member calls
  // save_state at the same round), level kernels, swap and schedule statistics, estimators.
  bool can_checkpoint() const override;
  void save_state(pemc::v1::KernelState& state) const override;
  void restore_state(const pemc::v1::KernelState& state) override;

 private:
  void build_levels();
  void reset_sampling_stats();
  void retune(bool allow_resize);
  // The line's new ladder (new_n_ref levels of it on the reference leg): new level kernels, each
  // replica seeded from the old replica nearest in beta on the same leg.
  void resize(const std::vector<double>& new_betas, int new_n_ref);
  // Each leg's ladder, ascending and ending at 1 (the target level belongs to both), and back.
  std::vector<double> reference_leg_betas() const;
  std::vector<double> fixed_leg_betas() const;
  static std::vector<double> join_legs(const std::vector<double>& reference_leg,
                                       const std::vector<double>& fixed_leg);
  // Stepping-stone pairs: the reference leg's (or the power path's, for one leg without one).
  int n_stepping_stone_pairs() const { return n_ref_ - 1; }
  int owner_of(int replica) const { return owner_[replica]; }
  // The layout of this round's allgather rows (replica_row.hpp).
  ReplicaRowLayout row_layout() const { return {options_.n_local_steps, dim_, warmup_}; }

  // One round (transition), in order:
  void start_replicas(const kernels::ChainState& state);  // first round: all at state
  // This member's replicas' local steps (or exact reference draws), their rows into send_.
  void explore_locally(std::uint64_t sub_seed);
  void draw_from_reference(int replica, std::uint64_t sub_seed, double* row);
  void run_local_steps(int replica, std::uint64_t sub_seed, double* row);
  // The allgather of every replica's row into recv_; fills v_; returns the summed evaluations.
  double exchange_reports();
  const double* received_row(int replica) const;
  void replay_adaptation();         // warmup: every level kernel adapts as on every member
  void add_stepping_stone_terms();  // sampling
  void swap_levels(std::uint64_t sub_seed);
  // Warmup: counts the round and retunes the ladder when a tuning round ends; returns the target
  // evaluations a resize cost.
  std::int64_t finish_warmup_round();
  void take_cold_state(kernels::ChainState& state);  // the beta = 1 replica's, from its owner
  bool exact_level(int level) const {
    return options_.exact_reference_draws && reference_ && !on_fixed_leg(level) &&
           betas_[level] == 0.0;
  }

  targets::TargetPtr target_;
  ReferencePtr reference_;
  LocalKernelFactory factory_;
  ParallelTemperingOptions options_;
  parallel::GroupCommPtr group_;
  int dim_;

  std::vector<double> betas_;  // the line's (see betas())
  int n_ref_ = 0;              // levels on the reference leg
  std::vector<std::shared_ptr<TemperedTarget>> targets_;
  std::vector<kernels::KernelPtr> kernels_;
  std::vector<PathPoint> replicas_;  // only this member's block is filled
  std::vector<int> level_of_, replica_at_, owner_;
  bool initialised_ = false;
  std::int64_t round_ = 0;

  // Warmup.
  bool warmup_ = false;
  std::int64_t n_warmup_ = 0, warmup_round_ = 0;
  std::int64_t kernel_warmup_offset_ = 0;  // warmup round at which the level kernels began
  std::int64_t tune_length_ = 1, next_tune_ = 1, tune_rounds_ = 0;
  std::vector<double> tune_reject_;
  double barrier_warmup_ = std::numeric_limits<double>::quiet_NaN();

  // Sampling diagnostics.
  std::int64_t sampling_rounds_ = 0;
  std::vector<double> accept_sum_;
  RoundTripCounter round_trips_;
  std::optional<BatchedLogSums> stepping_stone_;
  SwapOutcome last_swaps_;
  double comm_seconds_ = 0.0, local_seconds_ = 0.0;

  // Buffers.
  kernels::ChainState work_;
  std::vector<double> send_, recv_, v_, phi_, cold_, ss_terms_;
};

}  // namespace pemc::tempering
