#pragma once
// Runs one chain from its initial point through warmup and sampling, emitting draw records.
// A chain is a pure function of (config, seed, global chain id): its random streams are keyed by
// (seed, Domain, chain id, iteration), so it does not matter which rank runs it.
#include <cstdint>
#include <functional>
#include <string>

#include "pemc/v1/checkpoint.pb.h"
#include "pemc/v1/config.pb.h"
#include "modes/mode_set.hpp"
#include "parallel/group_comm.hpp"
#include "pemc/v1/records.pb.h"
#include "runner/chain_status.hpp"
#include "targets/target.hpp"

namespace pemc::runner {

struct ChainTask {
  int chain_id = 0;
  std::uint64_t seed = 0;
};

// What the chain does at an iteration boundary (checkpoint_due's answer).
enum class CheckpointAction { kNone = 0, kSave = 1, kSaveAndStop = 2 };

struct ChainCallbacks {
  std::function<void(const pemc::v1::Record&)> emit;  // every written draw
  std::function<void()> tick;                          // once per iteration (event-loop pump)
  // Asked before every transition but the first of this call (the group's leader only; the other
  // members follow its answer). Unset = never.
  std::function<CheckpointAction(std::int64_t next_iteration)> checkpoint_due;
  // Receives the chain's checkpoint (the leader only), after every record before it was emitted.
  std::function<void(const pemc::v1::ChainCheckpoint&)> on_checkpoint;
  // Whether emitted draws carry the target's named outputs (a Stan model's generated quantities).
  // false for draws that only feed the runner (a pooled warmup round whose draws are not written):
  // no outputs computed, so none can fail.
  bool compute_outputs = true;
};

// Runs the chain to completion (or to a kSaveAndStop checkpoint: status ChainStatus::kCheckpointed). With `resume`, continues from
// that checkpoint instead of the initial point: the rest of the chain, its records and its summary
// are bit-identical to the uninterrupted chain's (wall time excepted). Numerical failure (no finite initial point, an exception from the
// target) ends only this chain: the summary's status says why.
// `group`: the ranks running this chain together (nullptr = alone). Every member runs the same
// chain; callers give only the group's leader an `emit` that writes records.
// `modes`: the run's mode search (runner/mode_search_step.hpp); when the run has one but it is not
// given (tests, tools), the chain runs the same search itself, serially. `reference_modes`: what
// the sampler's reference is built from instead (config::SamplerContext; nullptr: `modes`).
pemc::v1::ChainSummary run_chain(const pemc::v1::RunConfig& config, targets::TargetPtr target,
                                 ChainTask task, const ChainCallbacks& callbacks,
                                 parallel::GroupCommPtr group = nullptr,
                                 const pemc::v1::ChainCheckpoint* resume = nullptr,
                                 modes::ModeSetPtr modes = nullptr,
                                 modes::ModeSetPtr reference_modes = nullptr);

}  // namespace pemc::runner
