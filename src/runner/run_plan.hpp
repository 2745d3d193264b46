#pragma once
// The run's plan: rank 0 loads the config, applies the command line's overrides and the defaults,
// validates it, builds every target and sampler once (what only the numbers can show), chooses the
// task range, locks the output and agrees on a resume; every rank then receives the result.
// The plan is a RunConfig whose `runs` are the fully resolved runs (none for a plain config).
#include <boost/mpi/communicator.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/study.hpp"
#include "pemc/v1/checkpoint.pb.h"
#include "pemc/v1/config.pb.h"
#include "runner/output_lock.hpp"
#include "runner/rounds_resume.hpp"
#include "runner/run.hpp"

namespace pemc::runner {

// What rank 0 agreed on (or the error that ends the run), in the form it is broadcast.
struct AgreedPlan {
  bool ok = false;
  std::string error;
  int exit_code = kExitConfig;  // when !ok: kExitCheckpointed for a stop signal during start-up
  std::string plan_bytes;
  std::string resume_bytes;  // the checkpoint to continue from (empty: a fresh run)
  std::string inputs_bytes;  // v1::InputFiles: the content hashes of what the run reads
  std::string working_directory;  // rank 0's, which relative paths in the config lead from
  int task_begin = 0;
  int task_end = 0;
  // Rank 0 only: what to log once the run is agreed ("info:..." / "warn:...": which runs of a study
  // an override reaches), warnings of --validate, and the locks on the output (and checkpoint),
  // held until the run ends.
  std::vector<std::string> notes;
  std::vector<std::string> warnings;
  std::vector<std::unique_ptr<OutputLock>> locks;
};

// Rank 0: everything above; a config problem is in `error`, never thrown.
AgreedPlan agree_on_rank0(const RunOptions& o);

// The plan as every rank holds it after the broadcast.
struct RunPlan {
  pemc::v1::RunConfig config;
  // The checkpoint to continue from, without what restarting rounds make void (rounds_resume.hpp).
  std::optional<pemc::v1::Checkpoint> resume;
  RoundsResume rounds_resume;  // where runs with rounds resume (empty for a fresh run)
  pemc::v1::InputFiles inputs;            // what the run reads, by content (input_files.hpp)
  std::string working_directory;          // rank 0's (the header records it)
  std::vector<pemc::v1::RunConfig> runs;  // one for a plain config
  std::vector<config::Task> all_tasks;    // of every run
  std::vector<config::Task> tasks;        // this job's: all_tasks[task_begin, task_end)
  int task_begin = 0;
  int task_end = 0;
};

// Every rank: rank 0's plan (its `agreed`, which also carries the rank's notes), or nullopt when
// rank 0 refused the run (rank 0 has printed why; every rank's agreed.exit_code says how to end).
std::optional<RunPlan> share_plan(boost::mpi::communicator& world, AgreedPlan& agreed);

std::vector<pemc::v1::RunConfig> runs_of_plan(const pemc::v1::RunConfig& plan);

}  // namespace pemc::runner
