#pragma once
// Studies: several named runs in one config, executed as one job. A plain config is a study of
// one run. Tasks are the (run, seed, chain) triples, numbered run by run, seed by seed, chain by
// chain; the number is the task's global chain id (its random streams' key) and its
// --task-range index, so a slice of a study draws exactly what the whole study would.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/load.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::config {

// Loads each of study.config.run_files (relative to the study file's directory) and appends it to
// study.config.runs as an entry (output, logging cleared; name defaulted to the file's stem), then
// clears run_files. Returns the loaded files, so that their problems can be located in them.
// ConfigError naming the entry for a file that cannot be loaded or is itself a study.
std::vector<LoadedConfig> include_run_files(LoadedConfig& study);

// The concrete runs: `config` itself when it has no `runs`, else each entry merged over it (an
// entry's set top-level fields replace the config's; output and logging stay the study's).
// ConfigError for an entry without a name, duplicate names, or an entry setting output/logging.
std::vector<pemc::v1::RunConfig> expand_runs(const pemc::v1::RunConfig& config);

struct Task {
  int id = 0;             // global chain id
  int run_index = 0;      // into expand_runs()
  std::uint64_t seed = 0;
  int chain_in_seed = 0;
};

std::vector<Task> enumerate_tasks(const std::vector<pemc::v1::RunConfig>& runs);

// "A:B" -> tasks [A, B) (either side may be empty: ":B", "A:"); ConfigError naming the text when
// malformed, empty or outside [0, n_tasks].
struct TaskRange {
  int begin = 0;
  int end = 0;
};
TaskRange parse_task_range(std::string_view text, int n_tasks);

// The tasks a job holds all or none of, in task order: a run whose chains pool their warmup
// (warmup/pooled_warmup_rounds.hpp) is one block, since its chains adapt together and a job
// holding some of them could not draw what the whole study draws; every other task is a block of
// its own.
std::vector<TaskRange> task_blocks(const std::vector<pemc::v1::RunConfig>& runs);
// ConfigError naming `option` (e.g. "--task-range 3:7") when `range` holds part of a block.
void check_range_keeps_blocks(TaskRange range, const std::vector<pemc::v1::RunConfig>& runs,
                              const std::string& option);
// The slice of a job array: blocks [i * size, (i + 1) * size) of task_blocks(), clipped to their
// number (so with no pooled run, tasks [i * size, (i + 1) * size)).
TaskRange array_task_range(int array_index, int blocks_per_array_task,
                           const std::vector<TaskRange>& blocks);

}  // namespace pemc::config
