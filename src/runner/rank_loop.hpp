#pragma once
// The per-rank event loop of one run. A rank plays one or more roles, all served by this loop:
//  - coordinator (coordinator.cpp): hands out tasks (task_farm.hpp), collects progress and logs it
//    (coordinator_progress.hpp), opens checkpoint epochs (checkpoint_epoch.hpp) and, for runs whose
//    chains run in rounds, pools each round through the run's hook (extended/multi_round_run.hpp);
//  - collector (collector.hpp): writes the records, checkpoints and the footer;
//  - worker (worker.cpp): runs the chains it is given (chain_driver.hpp), alone or as a group;
//    a group's leader ships the records (leader_records.cpp: to the collector, or into the file
//    itself, direct_writes.hpp) and answers checkpoint epochs.
// Messages to a role on the same rank are handed over directly; the loop polls for the others
// between a chain's iterations and while idle (rank_loop.cpp).
#include <boost/mpi/communicator.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/study.hpp"
#include "extended/multi_round_run.hpp"
#include "parallel/group_comm.hpp"
#include "parallel/layout.hpp"
#include "parallel/messenger.hpp"
#include "pemc/v1/checkpoint.pb.h"
#include "pemc/v1/config.pb.h"
#include "pemc/v1/records.pb.h"
#include "records/frame_range_writer.hpp"
#include "runner/chain_driver.hpp"
#include "runner/checkpoint_epoch.hpp"
#include "runner/collector.hpp"
#include "runner/coordinator_progress.hpp"
#include "runner/progress_model.hpp"
#include "runner/rank_stats.hpp"
#include "runner/rounds_resume.hpp"
#include "runner/task_farm.hpp"
#include "targets/target.hpp"

namespace pemc::runner {

class RecordBatch;

class RankLoop {
 public:
  using Clock = std::chrono::steady_clock;

  struct CheckpointOptions {
    const pemc::v1::Checkpoint* resume = nullptr;  // continue from here
    double every_seconds = 0.0;
    std::int64_t every_iterations = 0;
    std::int64_t stop_after_iterations = 0;
  };

  // `collector`: this rank's collector role, or nullptr.
  RankLoop(boost::mpi::communicator world, parallel::Layout layout,
           std::vector<pemc::v1::RunConfig> runs, std::vector<config::Task> tasks,
           Collector* collector, CheckpointOptions ck);

  // The ranks that answer a checkpoint epoch (one per group).
  const std::vector<int>& leaders() const { return leaders_; }
  int n_chains() const { return static_cast<int>(tasks_.size()); }
  // Some run's chains run in rounds (the coordinator sends their pooling state to each epoch).
  bool any_rounds() const;
  // A target this rank built already (each rank otherwise builds its own on first use), and the
  // run's mode search (nullptr: none).
  void adopt_target(int run_index, targets::TargetPtr t, modes::ModeSetPtr modes = nullptr);

  // This rank's writer into the output when it writes its record batches itself
  // (direct_writes.hpp); without one they go to the collector.
  void set_direct_writer(std::unique_ptr<records::FrameRangeWriter> w) { direct_ = std::move(w); }
  // Worker role: asks for tasks and runs them until none is left.
  void run_worker(parallel::GroupCommPtr group);
  // Serves messages until every role this rank plays is complete.
  void serve_until_done();
  // What this rank's roles did so far (rank_stats.hpp); the caller adds what the loop cannot see
  // (the group's collectives, the collector's file, the process's CPU).
  RankStats stats() const;

 private:
  // ---- the event loop (rank_loop.cpp)
  bool is_collector() const { return rank_ == layout_.collector; }
  bool is_coordinator() const { return rank_ == layout_.coordinator; }
  bool roles_done() const;
  // Sends to `dest`, or hands the message to this rank's own role directly.
  void deliver(int dest, int tag, std::string bytes);
  bool handle_pending();
  // Handles `m` and counts it (rank_stats.hpp); `receive_cpu`: the CPU its receive took.
  void handle(parallel::Message m, double receive_cpu = 0.0);
  void dispatch(parallel::Message m);
  // Between a chain's iterations: messages, checkpoint triggers and progress, at most every 5 ms.
  void pump_if_due();
  // Waits for a message (a worker holding for a round's broadcast or a checkpoint epoch).
  void service_wait();
  // A stop signal, once: says what happens and what is on disk, and asks for a stop.
  void notice_stop_signal();
  void request_stop();

  // ---- collector role (rank_loop.cpp)
  void on_worker_done(int source, const std::string& bytes);
  void on_checkpoint_part(int source, const std::string& bytes);
  void on_checkpoint_rounds(const std::string& bytes);
  void report_written();

  // ---- coordinator role (coordinator.cpp)
  void check_checkpoint_triggers();
  void open_epoch(bool stop);
  void send_rounds_state(std::int64_t epoch);
  void on_checkpoint_written(const std::string& bytes);
  void on_task_request(int source);
  void assign_waiting();
  void on_progress(int source, const std::string& bytes);
  void log_progress_if_due();
  void init_rounds();
  bool has_rounds(int run_index) const;
  bool rounds_pending() const;
  void on_round_report(const std::string& bytes);

  // ---- worker role (worker.cpp)
  ChainCallbacks chain_callbacks(bool leader, RecordBatch& batch, pemc::v1::Footer& mine);
  void work_loop(bool leader, parallel::GroupCommPtr group, ChainCallbacks& cb,
                 pemc::v1::Footer& mine, RecordBatch& batch);
  void flush_before_failing(RecordBatch& batch);
  // ---- a leader's record batches (leader_records.cpp)
  // A leader's batch of `n` framed records: to the collector, or into the file at an offset the
  // collector reserves (direct_writes.hpp).
  void ship_records(std::string frames, std::int64_t n);
  void on_record_offset(const std::string& bytes);
  // After a failed write: this rank's batches go to the collector from now on.
  void give_up_direct_writes();
  // Every batch shipped so far is in the file (waits for the offsets)...
  void await_offsets();
  // ... and synced: before a checkpoint part or the done message counts it.
  void settle_direct_writes();
  pemc::v1::ChainSummary run_round_item(const config::Task& task, int round,
                                        const ChainCallbacks& cb, parallel::GroupCommPtr group,
                                        const pemc::v1::ChainCheckpoint* resume,
                                        RecordBatch& batch);
  int request_task();
  void send_progress(bool finished);
  void start_run_timing(std::size_t run_index);
  void account_run_time(Clock::time_point now);
  // A leader's answer to the pending epoch; `part` holds its running chain's state, if any.
  void answer_epoch(pemc::v1::CheckpointPart part, const pemc::v1::Footer& mine);
  void on_epoch_begin(const std::string& bytes);
  targets::TargetPtr target_of(int run_index);

  // Every rank.
  static constexpr int kMaxMessagesPerPump = 64;
  parallel::Messenger messenger_;
  parallel::Layout layout_;
  int rank_ = 0;
  std::vector<pemc::v1::RunConfig> runs_;
  std::vector<config::Task> tasks_;
  std::vector<int> leaders_;
  CheckpointOptions ck_;
  CheckpointEpochs epochs_;
  bool signal_seen_ = false;
  Clock::time_point last_pump_{};
  RankStats stats_;
  std::int64_t drain_ = 0;  // polls in a row that found a message
  std::vector<std::unique_ptr<extended::MultiRoundRun>> rounds_;  // by run (nullptr: no rounds)
  RoundsResume resumed_rounds_;  // where they continue a checkpoint's pooling (empty: fresh)

  // Collector.
  Collector* collector_;

  // Coordinator.
  TaskFarm farm_;
  CoordinatorProgress progress_;
  std::map<int, int> round_task_of_;  // chain id -> task index (runs with rounds)
  std::vector<std::string> held_round_reports_;  // arrived during a checkpoint epoch

  // Worker.
  std::vector<targets::TargetPtr> targets_;               // by run, built on first use
  std::vector<modes::ModeSetPtr> modes_;                         // by run: its mode search, or nullptr
  std::map<int, const pemc::v1::ChainCheckpoint*> resume_of_;  // chain id -> its saved state
  std::map<std::pair<int, int>, std::string> round_broadcasts_;  // by (run, round)
  LeaderEpoch leader_epoch_;
  bool in_chain_ = false, done_sent_ = false;
  const pemc::v1::Footer* mine_ = nullptr;  // the chains this rank finished, while run_worker runs
  std::string current_sampler_;             // for the message when a chain cannot checkpoint
  bool round_starts_again_ = false;         // the running chain's round restarts on resume
  std::int64_t local_iterations_ = 0;       // a group's chain counts once, on its leader
  WorkerProgress my_progress_;              // this rank's chains, per run
  std::size_t current_run_ = 0;             // the run of the chain this rank is running
  Clock::time_point run_time_charged_;      // my_progress_.seconds holds the time up to here
  bool run_timing_started_ = false;         // the running chain did its first iteration
  Clock::time_point last_progress_send_;
  std::unique_ptr<records::FrameRangeWriter> direct_;  // nullptr: batches go to the collector
  std::deque<std::string> awaiting_offset_;           // batches whose ranges were asked for
  std::size_t awaiting_bytes_ = 0;
  bool unsynced_ = false;  // written since the last sync
};

}  // namespace pemc::runner
