// The worker role of the rank loop (rank_loop.hpp): ask the coordinator for tasks until none is
// left (a task farm: short and long tasks share the ranks without idle time) and run them; a
// group's leader asks and tells its members, sends the records and answers checkpoint epochs.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <functional>

#include "config/factories.hpp"
#include "core/error.hpp"
#include "records/record_file.hpp"
#include "runner/chain_status.hpp"
#include "runner/rank_loop.hpp"
#include "runner/rank_messages.hpp"
#include "runner/stop_signal.hpp"

namespace pemc::runner {

// A leader's records on their way to the collector, framed into batches of flush_every records
// (or 1 MiB).
class RecordBatch {
 public:
  explicit RecordBatch(std::function<void(std::string, std::int64_t)> send)
      : send_(std::move(send)) {}

  void set_flush_every(std::int64_t n) { flush_every_ = n; }
  void add(const v1::Record& r) {
    records::append_frame(r, bytes_);
    if (++n_records_ >= flush_every_ || bytes_.size() >= (1u << 20)) ship();
  }
  void ship() {
    if (n_records_ == 0) return;
    send_(std::move(bytes_), n_records_);
    bytes_.clear();
    n_records_ = 0;
  }
  // A stop signal may be the job's end (mpirun's SIGTERM after another rank crashed, shortly
  // followed by SIGKILL): the records held now go out at once, not at the next batch.
  void ship_once_on_stop_signal() {
    if (shipped_on_stop_) return;
    shipped_on_stop_ = true;
    ship();
  }

 private:
  std::function<void(std::string, std::int64_t)> send_;
  std::string bytes_;
  std::int64_t n_records_ = 0;
  std::int64_t flush_every_ = 64;
  bool shipped_on_stop_ = false;
};

void RankLoop::run_worker(parallel::GroupCommPtr group) {
  const bool leader = layout_.is_group_leader(rank_);
  v1::Footer mine;
  mine_ = &mine;
  // mine_ must not outlive `mine` (serve_until_done() reads it after this returns or throws).
  struct ForgetMine {
    const v1::Footer*& p;
    ~ForgetMine() { p = nullptr; }
  } forget_mine{mine_};
  RecordBatch batch(
      [this](std::string bytes, std::int64_t n) { ship_records(std::move(bytes), n); });
  ChainCallbacks cb = chain_callbacks(leader, batch, mine);
  try {
    work_loop(leader, group, cb, mine, batch);
  } catch (...) {
    if (leader) flush_before_failing(batch);
    throw;
  }
  if (leader) {
    batch.ship();  // nothing may stay behind the done message
    settle_direct_writes();
  }
  done_sent_ = true;
  deliver(layout_.collector, parallel::kTagDone, mine.SerializeAsString());
  send_progress(/*finished=*/true);
}

// What the chain driver calls: the leader writes records, counts progress and answers checkpoint
// epochs at iteration boundaries; every member pumps the event loop once per iteration.
ChainCallbacks RankLoop::chain_callbacks(bool leader, RecordBatch& batch, v1::Footer& mine) {
  ChainCallbacks cb;
  cb.tick = [this, leader, &batch] {
    if (leader) {
      if (!run_timing_started_) {  // the chain's set-up (modes, initial point) is not charged
        run_timing_started_ = true;
        run_time_charged_ = Clock::now();
      }
      ++local_iterations_;
      ++my_progress_.iterations[current_run_];
      if (stop_signal() != 0) batch.ship_once_on_stop_signal();
    }
    pump_if_due();
  };
  if (!leader) return cb;
  cb.emit = [&batch](const v1::Record& r) { batch.add(r); };
  cb.checkpoint_due = [this](std::int64_t t) {
    if (ck_.stop_after_iterations > 0 && t == ck_.stop_after_iterations &&
        !epochs_.stop_requested()) {
      // Testing: the same path as a signal, at a known iteration of this chain.
      request_stop();
      while (!leader_epoch_.open()) service_wait();
    }
    if (!leader_epoch_.open()) return CheckpointAction::kNone;
    return leader_epoch_.pending_stop ? CheckpointAction::kSaveAndStop : CheckpointAction::kSave;
  };
  cb.on_checkpoint = [this, &batch, &mine](const v1::ChainCheckpoint& ck) {
    batch.ship();
    v1::CheckpointPart part;
    // A chain in an earlier round of a pooled warmup saves no state: the resumed run runs that
    // round again (rounds_resume.hpp).
    if (round_starts_again_) {
    } else if (ck.kernel().kind().empty()) {
      part.set_error("the " + current_sampler_ + " sampler cannot save a checkpoint");
    } else {
      *part.add_in_progress() = ck;
    }
    answer_epoch(part, mine);
  };
  return cb;
}

// This rank fails (the job is aborted next): send what its chain holds to the collector and give
// the sends a moment to complete, so that the file keeps them.
void RankLoop::flush_before_failing(RecordBatch& batch) {
  try {
    batch.ship();
    const auto deadline = Clock::now() + std::chrono::seconds(3);
    while ((messenger_.in_flight() > 0 || !awaiting_offset_.empty()) && Clock::now() < deadline) {
      if (auto m = messenger_.poll(); m && (is_collector() || m->tag == kTagRecordOffset))
        handle(std::move(*m));
      usleep(100);
    }
  } catch (...) {
  }
}

void RankLoop::work_loop(bool leader, parallel::GroupCommPtr group, ChainCallbacks& cb,
                         v1::Footer& mine, RecordBatch& batch) {
  while (layout_.group_of(rank_) >= 0) {
    double next = !leader                ? -1.0
                  : leader_epoch_.stopped ? -1.0
                                          : static_cast<double>(request_task());
    if (group) group->broadcast(std::span<double>(&next, 1), 0);
    if (next < 0) break;
    // An item is a task index plus n_chains() x its round (0 for runs without rounds).
    const int item = static_cast<int>(next);
    const int round = item / n_chains();
    const auto& task = tasks_[static_cast<std::size_t>(item % n_chains())];
    const auto& run = runs_[static_cast<std::size_t>(task.run_index)];
    batch.set_flush_every(std::max(1, run.output().flush_every()));
    spdlog::debug("task {} (run {}, seed {}) starting", task.id, run.name(), task.seed);
    const auto resume_it = resume_of_.find(task.id);
    const v1::ChainCheckpoint* resume = resume_it == resume_of_.end() ? nullptr : resume_it->second;
    current_sampler_ = config::sampler_kind_name(run.sampler());
    in_chain_ = true;
    start_run_timing(static_cast<std::size_t>(task.run_index));
    const std::int64_t done_before = my_progress_.iterations[current_run_];
    auto summary = has_rounds(task.run_index)
                       ? run_round_item(task, round, cb, group, resume, batch)
                       : run_chain(run, target_of(task.run_index), ChainTask{task.id, task.seed},
                                   cb, group, resume, modes_[static_cast<std::size_t>(task.run_index)]);
    account_run_time(Clock::now());
    in_chain_ = false;
    const ChainStatus status = status_of(summary);
    if (status == ChainStatus::kRoundDone) continue;  // shipped and reported (run_round_item)
    if (status == ChainStatus::kCheckpointed) {
      if (leader) batch.ship();
      break;  // stopped at the checkpoint: not finished, not reported
    }
    if (!leader) continue;
    summary.set_rank(rank_);
    summary.set_run_id(run.name());
    if (status != ChainStatus::kOk) {
      spdlog::error("run {} chain {} (seed {}) {}", run.name(), task.id, task.seed,
                    summary.status());
      // The iterations the failed chain will not do leave the progress total (a run with rounds
      // keeps its total: how many of a failed item's rounds remain is the coordinator's).
      if (!has_rounds(task.run_index)) {
        const std::int64_t length = run.warmup() + run.iterations();
        const std::int64_t start = resume ? resume->next_iteration() : 0;
        const std::int64_t done = my_progress_.iterations[current_run_] - done_before;
        my_progress_.skipped[current_run_] += std::max<std::int64_t>(0, length - start - done);
      }
    }
    for (const auto& w : summary.warnings())
      spdlog::warn("run {} chain {} (seed {}): {}", run.name(), task.id, task.seed, w);
    *mine.add_chains() = summary;
    batch.ship();
    // An epoch that arrived during the chain's last iteration: answer between chains.
    if (leader_epoch_.open()) answer_epoch(v1::CheckpointPart(), mine);
  }
}

// Round `round` of a chain of a run with rounds. An earlier round's draws go to the run's hook
// (which may forward them as warmup records, shipped when the round ends) and the leader reports
// the round to the coordinator; the final round is the chain's recorded run. Returns the chain's
// final summary (its final round, or the failure that ended it), or one with status
// ChainStatus::kRoundDone after an earlier round.
v1::ChainSummary RankLoop::run_round_item(const config::Task& task, int round,
                                          const ChainCallbacks& cb, parallel::GroupCommPtr group,
                                          const v1::ChainCheckpoint* resume, RecordBatch& batch) {
  const auto& rounds = *rounds_[static_cast<std::size_t>(task.run_index)];
  const std::string* broadcast = nullptr;
  if (round > 0) {
    const auto key = std::make_pair(task.run_index, round);
    while (!round_broadcasts_.count(key)) service_wait();  // sent before the item; normally here
    broadcast = &round_broadcasts_.at(key);
  }
  const auto item = rounds.start_round(task.id, task.seed, round, broadcast,
                                       modes_[static_cast<std::size_t>(task.run_index)].get());
  if (auto refused = item->refused()) return *refused;
  current_sampler_ = rounds.sampler_name();
  ChainCallbacks round_cb = cb;
  // Checkpoints (rounds_resume.hpp): a chain in its final round saves its state like any chain; one
  // in an earlier round saves none, since the resumed run runs that round again from its start.
  // A run whose checkpoint cannot hold its rounds fails to save (the message names the sampler).
  if (cb.on_checkpoint && !rounds.can_checkpoint())
    round_cb.on_checkpoint = [orig = cb.on_checkpoint](const v1::ChainCheckpoint& ck) {
      v1::ChainCheckpoint unusable = ck;
      unusable.mutable_kernel()->Clear();
      orig(unusable);
    };
  if (resume && !item->is_final())
    throw DataError("the checkpoint holds the state of chain " + std::to_string(task.id) +
                    " in a round that starts again");
  const bool leader = layout_.is_group_leader(rank_);
  if (!item->is_final()) {
    if (leader)
      round_cb.emit = [&item, write = cb.emit](const v1::Record& r) {
        if (const v1::Record* out = item->on_record(r); out && write) write(*out);
      };
    else
      round_cb.emit = nullptr;
    // The round's draws feed its report; they carry outputs only when written as warmup draws.
    round_cb.compute_outputs =
        runs_[static_cast<std::size_t>(task.run_index)].output().write_warmup();
  }
  if (leader) my_progress_.skipped[current_run_] += item->skipped_iterations();
  round_starts_again_ = rounds.can_checkpoint() && !item->is_final();
  auto summary = run_chain(item->config(), target_of(task.run_index),
                           ChainTask{task.id, item->seed()}, round_cb, group, resume,
                           modes_[static_cast<std::size_t>(task.run_index)],
                           item->reference_modes());
  round_starts_again_ = false;
  if (status_of(summary) == ChainStatus::kCheckpointed) return summary;
  auto outcome = item->finish(std::move(summary), leader);
  // The round's records go out before its report: the chain's next round may run on another
  // worker, and this one may get no further item to ship them with; and the collector has them
  // before the coordinator can complete the round (and a checkpoint count it done).
  if (leader) batch.ship();
  if (!outcome.report.empty())
    deliver(layout_.coordinator, kTagRoundReport,
            with_int_prefix({task.run_index}, outcome.report));
  if (outcome.round_done) set_status(outcome.summary, ChainStatus::kRoundDone);
  return outcome.summary;
}

int RankLoop::request_task() {
  if (rank_ == layout_.coordinator) {
    int item;
    while ((item = farm_.take()) == TaskFarm::kWaitForRound) service_wait();
    return item;
  }
  // No batch may wait for its offset below: an epoch answered while the assignment is awaited
  // (answer_epoch) would wait for offsets in a loop that does not expect the assignment.
  await_offsets();
  const auto asked = Clock::now();
  messenger_.send(layout_.coordinator, parallel::kTagTaskRequest, std::string());
  while (true) {
    auto m = messenger_.poll();
    if (!m) {
      usleep(100);
      continue;
    }
    if (m->tag == parallel::kTagTaskAssign) {
      ++stats_.task_waits;
      stats_.task_wait_seconds += std::chrono::duration<double>(Clock::now() - asked).count();
      return decode_task(m->bytes);
    }
    handle(std::move(*m));
  }
}

void RankLoop::send_progress(bool finished) {
  my_progress_.finished = finished;
  deliver(layout_.coordinator, parallel::kTagProgress, my_progress_.encode());
  last_progress_send_ = Clock::now();
}

// The time a worker's leader spends in each run's chains (progress_model.hpp), charged to the
// running chain's run at each pump and when the chain ends: no clock read per iteration.
void RankLoop::start_run_timing(std::size_t run_index) {
  current_run_ = run_index;
  run_time_charged_ = Clock::now();
  run_timing_started_ = false;
}

void RankLoop::account_run_time(Clock::time_point now) {
  if (!in_chain_ || !run_timing_started_ || !layout_.is_group_leader(rank_)) return;
  my_progress_.seconds[current_run_] +=
      std::chrono::duration<double>(now - run_time_charged_).count();
  run_time_charged_ = now;
}

void RankLoop::answer_epoch(v1::CheckpointPart part, const v1::Footer& mine) {
  settle_direct_writes();  // the part says its records before it are in the file
  part.set_epoch(leader_epoch_.pending);
  for (const auto& c : mine.chains()) *part.add_completed() = c;
  leader_epoch_.answered();
  deliver(layout_.collector, kTagCkptPart, part.SerializeAsString());
}

void RankLoop::on_epoch_begin(const std::string& bytes) {
  const auto begin = EpochBegin::decode(bytes);
  if (done_sent_ || leader_epoch_.stopped || !layout_.is_group_leader(rank_))
    return;  // nothing to save
  leader_epoch_.pending = begin.epoch;
  leader_epoch_.pending_stop = begin.stop;
  if (!in_chain_) answer_epoch(v1::CheckpointPart(), mine_ ? *mine_ : v1::Footer());
}

// This rank's target for a run, built on first use (each rank reads its own data files).
targets::TargetPtr RankLoop::target_of(int run_index) {
  auto& t = targets_[static_cast<std::size_t>(run_index)];
  if (!t) t = config::make_target(runs_[static_cast<std::size_t>(run_index)].target());
  return t;
}

}  // namespace pemc::runner
