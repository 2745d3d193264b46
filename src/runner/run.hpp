#pragma once
// One pemc-dist run on MPI_COMM_WORLD: validate on rank 0, agree on the config, open the output on
// the collector, run every chain on the workers, stream records, write the footer, agree on the
// exit code. Every rank calls run() with the same options.
#include <cstdint>
#include <filesystem>
#include <string>

#include "config/overrides.hpp"

namespace pemc::runner {

struct RunOptions {
  std::filesystem::path config_path;
  config::CommandLineOverrides overrides;
  bool validate_only = false;
  bool overwrite = false;
  std::string log_level = "info";  // coordinator's level; other ranks log warnings and errors only
  bool log_all_ranks = false;      // give every rank the coordinator's level
  std::string task_range;          // "A:B": run only tasks [A, B) of the study
  int array_task_size = 0;         // > 0: run tasks [i*size, (i+1)*size), i = SLURM_ARRAY_TASK_ID
  bool resume = false;             // continue from the output's checkpoint (docs/checkpointing.md)
  // Testing: the first chain to reach this iteration (warmup included) stops the run exactly as
  // SIGTERM does (checkpoint, exit kExitCheckpointed). 0 = off.
  std::int64_t stop_after_iterations = 0;
};

// Exit codes of pemc-dist.
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,  // I/O failure, internal error, a rank lost
  kExitConfig = 2,    // bad config or command line: nothing ran
  kExitChainsFailed = 3,  // the run completed, but some chains failed (footer says which)
  kExitCheckpointed = 4,  // stopped by SIGTERM/SIGUSR1 (or --stop-after-iterations) after writing
                          // a checkpoint: continue with --resume
};

int run(const RunOptions& options);
// Installs the graceful-stop handlers (SIGTERM, SIGUSR1: set a flag that the event loops turn into
// a checkpoint and exit 4). pemc-dist calls it before MPI starts, so that a stop request arriving
// while MPI initialises (seen under Slurm: a time-limit signal within the job's first second) is
// honoured instead of killing the rank; run() installs them again after MPI_Init.
void install_stop_handlers();

}  // namespace pemc::runner
