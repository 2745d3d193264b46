#pragma once
// The collector role: the only writer of the output file. Receives framed record batches from
// workers (in arrival order), flushes after every batch so a crash loses at most the batches in
// flight, and writes the footer once every worker has reported done.
//
// Checkpoints (docs/checkpointing.md): every group leader answers a checkpoint epoch with
// a part (its chain's state at an iteration boundary and the chains it finished), sent after the
// records before that boundary; MPI keeps one sender's messages in order, so everything that
// arrived from a leader before its part belongs to the checkpoint. Records a leader sends after its
// part are held back until the checkpoint is written, so the checkpoint's record position splits the
// file exactly into "before" and "after" for every chain. Leaders that write their batches
// themselves (direct_writes.hpp) ask for ranges instead; those asked for after a leader's part are
// reserved once the checkpoint is written, in the same way.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pemc/v1/checkpoint.pb.h"
#include "pemc/v1/config.pb.h"
#include "pemc/v1/records.pb.h"
#include "records/record_file.hpp"
#include "runner/checkpoint.hpp"
#include "runner/direct_writes.hpp"
#include "runner/mode_checks.hpp"
#include "runner/run_warnings.hpp"

namespace pemc::runner {

class Collector {
 public:
  struct CheckpointSetup {
    std::filesystem::path path;            // where checkpoints go
    pemc::v1::Checkpoint base;             // fields every checkpoint carries (hash, task range, ...)
    std::vector<int> leaders;              // the ranks that answer an epoch
    std::chrono::steady_clock::time_point started;  // this attempt's start (wall time)
    std::string resume_command;  // how to continue from a checkpoint (for messages)
    // The coordinator sends the pooling state of runs with rounds (kTagCkptRounds) to every epoch.
    bool rounds_part = false;
  };

  Collector(const std::filesystem::path& path, bool overwrite);
  // Resume: the file cut back to the checkpoint's records (checked against its crc32); its finished
  // chains carried over. `checkpoint_file` is where it was read from (for messages).
  // `drop`: records of the checkpointed file that the resumed run writes again (restarting
  // rounds: rounds_resume.hpp), left out of the rebuilt file.
  Collector(const std::filesystem::path& path, const pemc::v1::Checkpoint& resume_from,
            const std::filesystem::path& checkpoint_file, const RecordDropFilter& drop = nullptr);

  void set_checkpointing(CheckpointSetup setup) { checkpoint_ = std::move(setup); }
  // The runs' mode searches, for the footer's mode check (mode_checks.hpp).
  void set_mode_shares(ModeSharesByRun shares) { mode_shares_ = std::move(shares); }
  // The plan's resolved runs and whether it is a study, for the footer's run-level warnings
  // (run_warnings.hpp). Unset: the footer has none.
  void set_runs(std::vector<pemc::v1::RunConfig> runs, bool study) {
    runs_ = std::move(runs);
    study_ = study;
  }

  void write_header(const pemc::v1::Header& header);
  // Pushes what the collector wrote so far to the OS (before other ranks read the file's start).
  void flush() { writer_.flush(); }
  void on_records(int source, std::string_view frames);
  // A leader's batch that it writes itself (direct_writes.hpp): the offset reserved for it, or
  // nullopt when it comes after the leader's part of the open checkpoint epoch; such ranges are
  // reserved once the checkpoint is written, and take_granted() hands out their offsets.
  std::optional<std::uint64_t> on_record_range(int source, const RecordRange& range);
  // The frames of a range reserved at `offset`, which its leader could not write itself.
  void on_record_fill(std::uint64_t offset, std::string_view frames);
  // Offsets reserved for held ranges since the last call, as (leader, offset), in arrival order.
  std::vector<std::pair<int, std::uint64_t>> take_granted() { return std::move(granted_); }
  // A worker's final report: its chains' summaries. Returns the epoch when the report completed one
  // (as on_checkpoint_part).
  std::optional<std::int64_t> on_worker_done(int source, const pemc::v1::Footer& part);
  int workers_done() const { return workers_done_; }
  // Chains with a final summary (finished or failed), this attempt and earlier ones.
  int n_finished() const { return static_cast<int>(chains_.size()); }
  // A leader's part of checkpoint epoch `part.epoch()`. Returns the epoch when that part completed
  // it (the checkpoint was written, or failed: see last_checkpoint_error()).
  std::optional<std::int64_t> on_checkpoint_part(int source, const pemc::v1::CheckpointPart& part);
  // The coordinator's part of epoch `part.epoch()`: the runs' pooling states (CheckpointSetup's
  // rounds_part). Returns as on_checkpoint_part.
  std::optional<std::int64_t> on_rounds_part(const pemc::v1::CheckpointPart& part);
  const std::string& last_checkpoint_error() const { return checkpoint_error_; }
  double last_checkpoint_seconds() const { return checkpoint_seconds_; }
  const pemc::v1::Checkpoint& last_checkpoint() const { return last_; }

  // Footer with chain summaries ordered by chain id; closes the file. Returns the footer written.
  pemc::v1::Footer finish(double wall_seconds);
  // A stopped run: no footer (the run is not over); flushes and closes the file.
  void close_without_footer();
  const std::filesystem::path& path() const { return path_; }
  // Records and bytes written to the output (header, footer and resumed part included).
  std::int64_t records_written() const { return writer_.records_written(); }
  std::int64_t bytes_written() const { return static_cast<std::int64_t>(writer_.bytes_written()); }

  // The abort path (an error on this rank, the job about to end): writes the records held back
  // during an open checkpoint epoch (they are whole records; a resume cuts the file back to its
  // checkpoint anyway) and flushes, as far as the file still takes writes. Never throws.
  void salvage() noexcept;
  // What is on disk now, for logs: the records that reached the file, a write failure after them,
  // and the last checkpoint (with the command that continues from it, when `final`) or none.
  std::string describe_on_disk(bool final = true) const;

 private:
  std::optional<std::int64_t> try_complete_epoch();
  // Each run's R-hat and bulk ESS from the draws written so far (report/draw_checks.hpp), over its
  // chains with status "ok": what the footer's run-level warnings judge. Flushes first.
  DrawVerdicts check_written_draws();

  std::filesystem::path path_;
  ModeSharesByRun mode_shares_;
  std::vector<pemc::v1::RunConfig> runs_;
  bool study_ = false;
  records::RecordWriter writer_;
  std::map<int, pemc::v1::ChainSummary> chains_;
  int workers_done_ = 0;

  std::optional<CheckpointSetup> checkpoint_;
  std::vector<pemc::v1::ChainSummary> resumed_completed_;  // finished before this attempt
  std::map<int, std::vector<pemc::v1::ChainSummary>> done_lists_;  // leader -> its Done's chains
  // The epoch being assembled: parts by leader, and frames held back from leaders that answered.
  std::int64_t epoch_ = -1;
  std::map<int, pemc::v1::CheckpointPart> parts_;
  std::optional<pemc::v1::CheckpointPart> rounds_part_;
  std::vector<std::pair<std::string, std::int64_t>> held_;
  std::vector<std::pair<int, RecordRange>> held_ranges_;
  std::vector<std::pair<int, std::uint64_t>> granted_;
  std::int64_t sequence_ = 0;
  double earlier_wall_seconds_ = 0.0;
  std::string checkpoint_error_;
  double checkpoint_seconds_ = 0.0;
  pemc::v1::Checkpoint last_;
  // The newest checkpoint on disk (written in this attempt, or the one it resumed from).
  std::int64_t disk_sequence_ = 0, disk_records_ = 0, disk_bytes_ = 0;
  std::filesystem::path disk_checkpoint_;
  std::string write_error_;  // the record file's write failure, if any
};

}  // namespace pemc::runner
