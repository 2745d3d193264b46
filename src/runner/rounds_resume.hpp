#pragma once
// Resuming runs whose chains run in rounds (extended/multi_round_run.hpp: a pooled warmup). A
// checkpoint holds each such run's pooling state, taken while no round completes. A run that was
// in a warmup round resumes by running that round again from its start, which the state holds;
// what its chains did in that round before the checkpoint is void: their final summaries (chains
// that failed in it) and their warmup draws of the round, which --resume drops while it cuts the
// record file back. A run in its final round resumes each chain from its own state, as any chain.
#include <map>
#include <vector>

#include "config/study.hpp"
#include "extended/multi_round_run.hpp"
#include "pemc/v1/checkpoint.pb.h"
#include "pemc/v1/config.pb.h"
#include "pemc/v1/records.pb.h"

namespace pemc::runner {

// Where each run with rounds resumes, by run index.
using RoundsResume = std::map<int, extended::MultiRoundRun::ResumePoint>;

// Reads the checkpoint's pooling states against the plan. ConfigError naming `checkpoint_name`
// when a run with rounds has no state (a checkpoint of another pemc-dist), DataError when a run's
// rounds cannot be checkpointed or a state is of another run or damaged.
RoundsResume rounds_resume(const std::vector<v1::RunConfig>& runs,
                           const std::vector<config::Task>& tasks, const v1::Checkpoint& checkpoint,
                           const std::string& checkpoint_name);

// `checkpoint` without what restarting rounds make void: the final summaries and states of their
// chains (they run the round again).
void drop_restarted_rounds(v1::Checkpoint& checkpoint, const RoundsResume& resume,
                           const std::vector<v1::RunConfig>& runs);

// Whether `record`, written before the checkpoint, was written in a round that restarts.
bool written_in_restarted_round(const v1::Record& record, const RoundsResume& resume,
                                const std::vector<v1::RunConfig>& runs);

}  // namespace pemc::runner
