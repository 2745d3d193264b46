#pragma once
// What the collector writes before any record (the Header) and what every checkpoint of the run
// carries (Collector::CheckpointSetup): both describe the agreed plan on this job's ranks.
#include <chrono>
#include <vector>

#include "modes/mode_set.hpp"
#include "pemc/v1/records.pb.h"
#include "runner/collector.hpp"
#include "runner/run.hpp"
#include "runner/run_plan.hpp"
#include "targets/target.hpp"

namespace pemc::runner {

// The output's header: the plan, each run's space (built from `targets`, one per run) and mode
// search (`modes`, one per run, nullptr for none), the host and the task range, the content
// hashes of the files the runs read and rank 0's working directory (plan.inputs and
// plan.working_directory, which rank 0 computed).
pemc::v1::Header make_header(const RunOptions& o, const RunPlan& plan,
                             const std::vector<targets::TargetPtr>& targets,
                             const std::vector<modes::ModeSetPtr>& modes, int n_ranks);

// How the collector writes this run's checkpoints.
Collector::CheckpointSetup checkpoint_setup(const RunOptions& o, const RunPlan& plan,
                                           std::vector<int> leaders, int n_ranks, int group_size,
                                           std::chrono::steady_clock::time_point started);

}  // namespace pemc::runner
