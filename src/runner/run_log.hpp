#pragma once
// What a run says on its log besides progress: the logger itself, the start banner, --validate's
// verdict, and the end (the footer's chain lines and totals, or where a stopped run's checkpoint
// is).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "parallel/layout.hpp"
#include "pemc/v1/checkpoint.pb.h"
#include "pemc/v1/records.pb.h"
#include "runner/run.hpp"
#include "runner/run_plan.hpp"

namespace pemc::runner {

// The "pemc" logger on stderr; ranks other than 0 log warnings and errors only unless asked.
void setup_logging(const RunOptions& o, int rank);

// --validate on rank 0: "pemc-dist: <config>: OK (...)" on stdout.
void print_validated(const RunOptions& o, const RunPlan& plan);

// Rank 0, once the run is set up: the resumed checkpoint (if any) and the run's shape.
void log_start(const RunPlan& plan, const parallel::Layout& layout, int n_ranks,
               std::int64_t first_run_dim);

// The chains' lines, the run-level warnings (Footer.warnings), untrusted log Z estimates, failed
// mode checks and the run's totals.
void log_footer(const pemc::v1::Footer& footer, const std::filesystem::path& path);

// A run stopped at checkpoint `c` (sequence 0 or an error: none was written). Returns the exit
// code: kExitCheckpointed, or kExitInternal without a checkpoint.
int log_stopped(const pemc::v1::Checkpoint& c, const std::string& checkpoint_error,
                const std::string& on_disk, const std::filesystem::path& checkpoint_file,
                const std::string& resume_hint);

// Runs `log` at the coordinator's level (--log-level) on a rank whose own logging may be reduced
// to warnings: the collector logs the end of the run.
void at_coordinator_level(const RunOptions& o, const std::function<void()>& log);

}  // namespace pemc::runner
