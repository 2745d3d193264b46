#pragma once
// Which runs have chains that run in rounds (extended/multi_round_run.hpp), and their hook.
#include <memory>

#include "extended/multi_round_run.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::config {

// The run's multi-round hook (continuous tempering with bootstrap rounds, a pooled warmup), or
// nullptr for a run whose chains run once. `run_index`: the run's index in the plan.
std::unique_ptr<extended::MultiRoundRun> make_multi_round_run(const pemc::v1::RunConfig& run,
                                                              int run_index);

}  // namespace pemc::config
