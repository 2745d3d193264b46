#pragma once
// Runs one chain from its initial point through warmup and sampling, emitting draw records.
// A chain is a pure function of (config, seed, global chain id): its random streams are keyed by
// (seed, Domain, chain id, iteration), so it does not matter which rank runs it.
#include <cstdint>
#include <functional>
#include <string>

#include "pemc/v1/config.pb.h"
#include "parallel/group_comm.hpp"
#include "pemc/v1/records.pb.h"
#include "targets/target.hpp"

namespace pemc::runner {

struct ChainTask {
  int chain_id = 0;
  std::uint64_t seed = 0;
};

struct ChainCallbacks {
  std::function<void(const pemc::v1::Record&)> emit;  // every written draw
  std::function<void()> tick;                          // once per iteration (event-loop pump)
};

// Runs the chain to completion. Numerical failure (no finite initial point, an exception from the
// target) ends only this chain: the summary's status says why.
// `group`: the ranks running this chain together (nullptr = alone). Every member runs the same
// chain; callers give only the group's leader an `emit` that writes records.
pemc::v1::ChainSummary run_chain(const pemc::v1::RunConfig& config, targets::TargetPtr target,
                                 ChainTask task, const ChainCallbacks& callbacks,
                                 parallel::GroupCommPtr group = nullptr);

}  // namespace pemc::runner
