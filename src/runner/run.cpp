#include "runner/run.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "config/factories.hpp"
#include "config/study.hpp"
#include "core/error.hpp"
#include "config/multi_round.hpp"
#include "extended/multi_round_run.hpp"
#include "parallel/layout.hpp"
#include "parallel/messenger.hpp"
#include "parallel/mpi_group_comm.hpp"
#include "records/record_file.hpp"
#include "runner/chain_driver.hpp"
#include "runner/chain_status.hpp"
#include "runner/checkpoint.hpp"
#include "runner/collector.hpp"
#include "runner/progress_model.hpp"
#include "runner/resume_command.hpp"
#include "runner/run_header.hpp"
#include "runner/run_log.hpp"
#include "runner/run_plan.hpp"
#include "runner/stop_signal.hpp"

namespace pemc::runner {
namespace {

using Clock = std::chrono::steady_clock;
namespace mpi = boost::mpi;

// Checkpoint protocol messages (tags next to parallel::Tag's).
enum CheckpointTag : int {
  kTagCkptRequest = 21,  // any rank -> coordinator: please stop with a checkpoint (signal, testing)
  kTagCkptBegin = 22,    // coordinator -> group leaders: two int64 (epoch, stop)
  kTagCkptPart = 23,     // group leader -> collector: CheckpointPart
  kTagCkptWritten = 24,  // collector -> coordinator: CheckpointPart {epoch, error}
};

// Runs whose chains run in rounds (extended/multi_round_run.hpp).
enum RoundTag : int {
  kTagRoundReport = 31,     // group leader -> coordinator: int32 run index, then the chain's report
  kTagRoundBroadcast = 32,  // coordinator -> every worker: int32 run index, int32 round, then what
                            // that round needs
};
// take_next_task(): nothing to hand out now, but a round still to finish will add items.
constexpr int kWaitForRound = -2;

// `ints` in native byte order, then `payload` (messages between ranks of one job).
std::string with_int_prefix(std::initializer_list<std::int32_t> ints, const std::string& payload) {
  std::string bytes(ints.size() * sizeof(std::int32_t), '\0');
  std::memcpy(bytes.data(), std::data(ints), bytes.size());
  return bytes + payload;
}

// The i-th int32 of with_int_prefix's bytes.
std::int32_t int_prefix(const std::string& bytes, std::size_t i) {
  if (bytes.size() < (i + 1) * sizeof(std::int32_t))
    throw IoError("malformed round message (" + std::to_string(bytes.size()) + " bytes)");
  std::int32_t v = 0;
  std::memcpy(&v, bytes.data() + i * sizeof v, sizeof v);
  return v;
}

// The per-rank event loop shared by the coordinator, collector and worker roles.
class RankLoop {
 public:
  struct CheckpointOptions {
    const v1::Checkpoint* resume = nullptr;  // continue from here
    double every_seconds = 0.0;
    std::int64_t every_iterations = 0;
    std::int64_t stop_after_iterations = 0;
  };

  RankLoop(mpi::communicator world, parallel::Layout layout, std::vector<v1::RunConfig> runs,
           std::vector<config::Task> tasks, Collector* collector, CheckpointOptions ck)
      : ck_(ck),
        messenger_(world),
        layout_(std::move(layout)),
        runs_(std::move(runs)),
        tasks_(std::move(tasks)),
        targets_(runs_.size()),
        collector_(collector),
        progress_(static_cast<std::size_t>(layout_.n_ranks), 0),
        finished_(static_cast<std::size_t>(layout_.n_ranks), false),
        rank_progress_(static_cast<std::size_t>(layout_.n_ranks), WorkerProgress(runs_.size())),
        my_progress_(runs_.size()),
        run_chain_length_(runs_.size(), 0),
        run_remaining_(runs_.size(), 0) {
    rank_ = messenger_.rank();
    for (std::size_t r = 0; r < runs_.size(); ++r)
      rounds_.push_back(config::make_multi_round_run(runs_[r], static_cast<int>(r)));
    for (const auto& t : tasks_) {
      const auto& run = runs_[static_cast<std::size_t>(t.run_index)];
      const auto& rounds = rounds_[static_cast<std::size_t>(t.run_index)];
      const std::int64_t length = run.warmup() + run.iterations() +
                                  (rounds ? rounds->extra_iterations_per_chain() : 0);
      total_iterations_ += length;
      run_chain_length_[static_cast<std::size_t>(t.run_index)] = length;
      run_remaining_[static_cast<std::size_t>(t.run_index)] += length;
    }
    init_rounds();
    progress_interval_ = runs_.front().logging().progress_interval_seconds();
    start_ = last_log_ = last_progress_send_ = last_checkpoint_ = Clock::now();
    // The task farm hands out what the checkpoint did not finish; running chains continue.
    std::set<int> finished;
    if (ck_.resume) {
      // Progress counts what is left: finished chains and the checkpointed part of running ones.
      std::map<int, std::int64_t> length;
      std::map<int, std::size_t> run_of;
      for (const auto& t : tasks_) {
        const auto& run = runs_[static_cast<std::size_t>(t.run_index)];
        length[t.id] = run.warmup() + run.iterations();
        run_of[t.id] = static_cast<std::size_t>(t.run_index);
      }
      for (const auto& c : ck_.resume->completed()) {
        finished.insert(c.chain_id());
        total_iterations_ -= length[c.chain_id()];
        run_remaining_[run_of[c.chain_id()]] -= length[c.chain_id()];
      }
      for (const auto& c : ck_.resume->in_progress()) {
        resume_of_[c.chain_id()] = &c;
        total_iterations_ -= c.next_iteration();
        run_remaining_[run_of[c.chain_id()]] -= c.next_iteration();
      }
      last_written_seq_ = ck_.resume->sequence();
      last_written_bytes_ = ck_.resume->record_bytes();
    }
    for (int i = 0; i < n_chains(); ++i)
      if (!finished.count(tasks_[static_cast<std::size_t>(i)].id)) todo_.push_back(i);
    for (const auto& g : layout_.groups) leaders_.push_back(g.front());
  }

  const std::vector<int>& leaders() const { return leaders_; }

  int n_chains() const { return static_cast<int>(tasks_.size()); }

  void adopt_target(int run_index, targets::TargetPtr t) {
    targets_[static_cast<std::size_t>(run_index)] = std::move(t);
  }

  // This rank's target for a run, built on first use (each rank reads its own data files).
  targets::TargetPtr target_of(int run_index) {
    auto& t = targets_[static_cast<std::size_t>(run_index)];
    if (!t) t = config::make_target(runs_[static_cast<std::size_t>(run_index)].target());
    return t;
  }

  // Worker role: ask the coordinator for tasks until none is left (a task farm: short and long
  // tasks share the ranks without idle time); a group's leader asks and tells its members.
  void run_worker(parallel::GroupCommPtr group) {
    const bool leader = layout_.is_group_leader(rank_);
    v1::Footer mine;
    mine_ = &mine;
    // mine_ must not outlive `mine` (serve_until_done() reads it after this returns or throws).
    struct ForgetMine {
      const v1::Footer*& p;
      ~ForgetMine() { p = nullptr; }
    } forget_mine{mine_};
    std::string batch;
    std::int64_t batch_records = 0;
    std::int64_t flush_every = 64;
    auto ship = [&] {
      if (batch_records == 0) return;
      deliver(layout_.collector, parallel::kTagRecords, std::move(batch));
      batch.clear();
      batch_records = 0;
    };
    ChainCallbacks cb;
    if (leader) {
      cb.emit = [&](const v1::Record& r) {
        records::append_frame(r, batch);
        if (++batch_records >= flush_every || batch.size() >= (1u << 20)) ship();
      };
    }
    bool shipped_on_signal = false;
    cb.tick = [&] {
      if (leader) {
        ++local_iterations_;  // a group's chain counts once, on its leader
        ++my_progress_.iterations[current_run_];
        // A stop signal may be the job's end (mpirun's SIGTERM after another rank crashed, shortly
        // followed by SIGKILL): send the records this chain holds now, not at its next batch.
        if (stop_signal() != 0 && !shipped_on_signal) {
          shipped_on_signal = true;
          ship();
        }
      }
      pump_if_due();
    };
    if (leader) {
      cb.checkpoint_due = [&](std::int64_t t) {
        if (ck_.stop_after_iterations > 0 && t == ck_.stop_after_iterations && !stop_requested_) {
          // Testing: the same path as a signal, at a known iteration of this chain.
          request_stop();
          while (pending_epoch_ < 0) service_wait();
        }
        if (pending_epoch_ < 0) return CheckpointAction::kNone;
        return pending_stop_ ? CheckpointAction::kSaveAndStop : CheckpointAction::kSave;
      };
      cb.on_checkpoint = [&](const v1::ChainCheckpoint& ck) {
        ship();
        v1::CheckpointPart part;
        if (ck.kernel().kind().empty())
          part.set_error("the " + current_sampler_ + " sampler cannot save a checkpoint");
        else
          *part.add_in_progress() = ck;
        answer_epoch(part, mine);
      };
    }
    try {
      work_loop(leader, group, cb, mine, ship, flush_every);
    } catch (...) {
      // This rank fails (the job is aborted next): send what its chain holds to the collector and
      // give the sends a moment to complete, so that the file keeps them.
      if (leader) {
        try {
          ship();
          const auto deadline = Clock::now() + std::chrono::seconds(3);
          while (messenger_.in_flight() > 0 && Clock::now() < deadline) {
            if (auto m = messenger_.poll(); m && is_collector()) handle(std::move(*m));
            usleep(100);
          }
        } catch (...) {
        }
      }
      throw;
    }
    done_sent_ = true;
    deliver(layout_.collector, parallel::kTagDone, mine.SerializeAsString());
    send_progress(/*finished=*/true);
  }

 private:
  template <typename Ship>
  void work_loop(bool leader, parallel::GroupCommPtr group, ChainCallbacks& cb, v1::Footer& mine,
                 Ship& ship, std::int64_t& flush_every) {
    while (layout_.group_of(rank_) >= 0) {
      double next = !leader ? -1.0 : stopped_ ? -1.0 : static_cast<double>(request_task());
      if (group) group->broadcast(std::span<double>(&next, 1), 0);
      if (next < 0) break;
      // An item is a task index plus n_chains() x its round (0 for runs without rounds).
      const int item = static_cast<int>(next);
      const int round = item / n_chains();
      const auto& task = tasks_[static_cast<std::size_t>(item % n_chains())];
      const auto& run = runs_[static_cast<std::size_t>(task.run_index)];
      flush_every = std::max(1, run.output().flush_every());
      spdlog::debug("task {} (run {}, seed {}) starting", task.id, run.name(), task.seed);
      const auto resume_it = resume_of_.find(task.id);
      const v1::ChainCheckpoint* resume = resume_it == resume_of_.end() ? nullptr : resume_it->second;
      current_sampler_ = config::sampler_kind_name(run.sampler());
      in_chain_ = true;
      start_run_timing(static_cast<std::size_t>(task.run_index));
      auto summary = has_rounds(task.run_index)
                         ? run_round_item(task, round, cb, group)
                         : run_chain(run, target_of(task.run_index), ChainTask{task.id, task.seed},
                                     cb, group, resume);
      account_run_time(Clock::now());
      in_chain_ = false;
      const ChainStatus status = status_of(summary);
      if (status == ChainStatus::kRoundDone) continue;  // reported to the coordinator
      summary.set_rank(rank_);
      summary.set_run_id(run.name());
      if (!leader) {
        if (status == ChainStatus::kCheckpointed) break;
        continue;
      }
      if (status == ChainStatus::kCheckpointed) {
        ship();
        break;  // stopped at the checkpoint: not finished, not reported
      }
      if (status != ChainStatus::kOk)
        spdlog::error("run {} chain {} (seed {}) {}", run.name(), task.id, task.seed,
                      summary.status());
      for (const auto& w : summary.warnings())
        spdlog::warn("run {} chain {} (seed {}): {}", run.name(), task.id, task.seed, w);
      *mine.add_chains() = summary;
      ship();
      // An epoch that arrived during the chain's last iteration: answer between chains.
      if (pending_epoch_ >= 0) answer_epoch(v1::CheckpointPart(), mine);
    }
  }

 public:
  // Serve messages until every role this rank plays is complete.
  void serve_until_done() {
    while (!roles_done()) {
      if (!handle_pending()) {
        log_progress_if_due();
        check_checkpoint_triggers();
        usleep(200);
      }
    }
    messenger_.wait_all();
  }

  bool stop_requested() const { return stop_requested_; }

 private:
  // ---- checkpoints ----
  // Coordinator: starts an epoch when a stop was asked for or a period is due (one at a time).
  void check_checkpoint_triggers() {
    if (stop_signal() != 0 && !signal_seen_) {
      signal_seen_ = true;
      // Say what happens and what is on disk now: the checkpoint is not written yet (it needs every
      // chain's answer), and a job killed meanwhile (mpirun's SIGKILL after a crash) leaves only
      // what is on disk at this point plus the records that reach the file before the kill.
      const int sig = stop_signal();
      std::string line = fmt::format("signal {} ({}) received: ", sig, stop_signal_name(sig));
      if (is_coordinator())
        line +=
            "stopping; the checkpoint needs every chain's state at its next iteration ('checkpoint "
            "N "
            "written' follows once it is on disk)";
      else if (is_collector())
        line += "writing the records the chains send";
      else
        line += "sending this rank's records, stopping at the next iteration";
      if (is_collector())
        line += "; on disk now: " + collector_->describe_on_disk(/*final=*/false);
      else if (is_coordinator())
        line += last_written_seq_ > 0
                    ? fmt::format("; on disk now: checkpoint {} (records up to byte {})",
                                  last_written_seq_, last_written_bytes_)
                    : std::string("; on disk now: no checkpoint yet");
      if (is_coordinator() || is_collector())
        spdlog::warn("{}", line);
      else
        spdlog::info("{}", line);
      request_stop();
    }
    if (!is_coordinator() || epoch_active_ || stopping_ || coordinator_idle()) return;
    if (stop_requested_) {
      start_epoch(true);
      return;
    }
    const auto now = Clock::now();
    bool due = ck_.every_seconds > 0 &&
               std::chrono::duration<double>(now - last_checkpoint_).count() >= ck_.every_seconds;
    if (ck_.every_iterations > 0) {
      std::int64_t done = 0;
      for (auto p : progress_) done += p;
      due = due || done - done_at_checkpoint_ >=
                       ck_.every_iterations * static_cast<std::int64_t>(leaders_.size());
    }
    if (due) start_epoch(false);
  }

  // Every worker finished: no chain is left to checkpoint.
  bool coordinator_idle() const {
    for (int w : layout_.workers)
      if (!finished_[static_cast<std::size_t>(w)]) return false;
    return true;
  }

  void request_stop() {
    if (stop_requested_) return;
    stop_requested_ = true;
    if (!is_coordinator()) deliver(layout_.coordinator, kTagCkptRequest, std::string());
  }

  void start_epoch(bool stop) {
    epoch_active_ = true;
    stopping_ = stopping_ || stop;
    if (stopping_) serve_round_waiting();  // ranks waiting for a round: none left
    ++epoch_;
    std::string bytes(2 * sizeof(std::int64_t), '\0');
    const std::int64_t v[2] = {epoch_, stop ? 1 : 0};
    std::memcpy(bytes.data(), v, sizeof v);
    spdlog::debug("checkpoint epoch {} ({})", epoch_, stop ? "stop" : "periodic");
    for (int l : leaders_) deliver(l, kTagCkptBegin, bytes);
  }

  // Leader: its answer to the pending epoch; `part` holds its running chain's state, if any.
  void answer_epoch(v1::CheckpointPart part, const v1::Footer& mine) {
    part.set_epoch(pending_epoch_);
    for (const auto& c : mine.chains()) *part.add_completed() = c;
    if (pending_stop_) stopped_ = true;
    pending_epoch_ = -1;
    deliver(layout_.collector, kTagCkptPart, part.SerializeAsString());
  }

  // Waits for a message (used while a chain holds at --stop-after-iterations).
  void service_wait() {
    if (!handle_pending()) {
      check_checkpoint_triggers();
      usleep(100);
    }
  }

  bool is_collector() const { return rank_ == layout_.collector; }
  bool is_coordinator() const { return rank_ == layout_.coordinator; }

  bool roles_done() const {
    if (is_collector() && collector_->workers_done() < static_cast<int>(layout_.workers.size()))
      return false;
    if (is_coordinator())
      for (int w : layout_.workers)
        if (!finished_[static_cast<std::size_t>(w)]) return false;
    return true;
  }

  // Sends to `dest`, or hands the message to this rank's own role directly.
  // Record batches are flow-controlled (synchronous sends, see parallel/messenger.hpp).
  void deliver(int dest, int tag, std::string bytes) {
    if (dest == rank_) {
      handle(parallel::Message{rank_, tag, std::move(bytes)});
    } else {
      messenger_.send(dest, tag, std::move(bytes),
                      tag == parallel::kTagRecords ? parallel::SendMode::kSynchronous
                                                   : parallel::SendMode::kStandard);
    }
  }

  // The coordinator hands out tasks in order (those a checkpoint left); -1 = none left, or stopping.
  int take_next_task() {
    if (stopping_) return -1;
    if (next_task_ >= static_cast<int>(todo_.size())) return take_round_item();
    return todo_[static_cast<std::size_t>(next_task_++)];
  }

  void report_written() {
    v1::CheckpointPart w;
    w.set_epoch(collector_->last_checkpoint().sequence());
    w.set_error(collector_->last_checkpoint_error());
    w.set_record_bytes(collector_->last_checkpoint().record_bytes());
    w.set_n_records(collector_->last_checkpoint().n_records());
    deliver(layout_.coordinator, kTagCkptWritten, w.SerializeAsString());
  }

  int request_task() {
    if (rank_ == layout_.coordinator) {
      int task;
      while ((task = take_next_task()) == kWaitForRound) service_wait();
      return task;
    }
    messenger_.send(layout_.coordinator, parallel::kTagTaskRequest, std::string());
    while (true) {
      auto m = messenger_.poll();
      if (!m) {
        usleep(100);
        continue;
      }
      if (m->tag == parallel::kTagTaskAssign) {
        int task = -1;
        std::memcpy(&task, m->bytes.data(), sizeof task);
        return task;
      }
      handle(std::move(*m));
    }
  }

  void send_progress(bool finished) {
    my_progress_.finished = finished;
    deliver(layout_.coordinator, parallel::kTagProgress, my_progress_.encode());
    last_progress_send_ = Clock::now();
  }

  // The time a worker's leader spends in each run's chains (progress_model.hpp), charged to the
  // running chain's run at each pump and when the chain ends: no clock read per iteration.
  void start_run_timing(std::size_t run_index) {
    current_run_ = run_index;
    run_time_charged_ = Clock::now();
  }
  void account_run_time(Clock::time_point now) {
    if (!in_chain_ || !layout_.is_group_leader(rank_)) return;
    my_progress_.seconds[current_run_] +=
        std::chrono::duration<double>(now - run_time_charged_).count();
    run_time_charged_ = now;
  }

  void pump_if_due() {
    const auto now = Clock::now();
    if (now - last_pump_ < std::chrono::milliseconds(5)) return;
    last_pump_ = now;
    account_run_time(now);
    // Bounded: a collector that is also a worker must get back to its own chain and to the
    // checkpoint triggers even while record batches keep arriving.
    for (int i = 0; i < kMaxMessagesPerPump && handle_pending(); ++i) {
    }
    check_checkpoint_triggers();
    if (!is_coordinator() && now - last_progress_send_ > std::chrono::seconds(1))
      send_progress(false);
    if (is_coordinator()) {
      progress_[static_cast<std::size_t>(rank_)] = local_iterations_;
      log_progress_if_due();
    }
  }

  bool handle_pending() {
    auto m = messenger_.poll();
    if (!m) return false;
    handle(std::move(*m));
    return true;
  }

  void handle(parallel::Message m) {
    switch (m.tag) {
      case parallel::kTagRecords:
        collector_->on_records(m.source, m.bytes);
        break;
      case parallel::kTagDone: {
        v1::Footer part;
        if (!part.ParseFromString(m.bytes))
          throw IoError("collector: malformed done message from rank " + std::to_string(m.source));
        if (collector_->on_worker_done(m.source, part)) report_written();
        break;
      }
      case kTagCkptRequest:
        if (!stop_requested_) spdlog::warn("rank {} asks to stop with a checkpoint", m.source);
        stop_requested_ = true;
        break;
      case kTagCkptBegin: {
        std::int64_t v[2];
        std::memcpy(v, m.bytes.data(), sizeof v);
        if (done_sent_ || stopped_ || !layout_.is_group_leader(rank_)) break;  // nothing to save
        pending_epoch_ = v[0];
        pending_stop_ = v[1] != 0;
        if (!in_chain_) answer_epoch(v1::CheckpointPart(), mine_ ? *mine_ : v1::Footer());
        break;
      }
      case kTagCkptPart: {
        v1::CheckpointPart part;
        if (!part.ParseFromString(m.bytes))
          throw IoError("collector: malformed checkpoint part from rank " + std::to_string(m.source));
        if (collector_->on_checkpoint_part(m.source, part)) report_written();
        break;
      }
      case kTagCkptWritten: {
        v1::CheckpointPart w;
        w.ParseFromString(m.bytes);
        epoch_active_ = false;
        last_checkpoint_ = Clock::now();
        std::int64_t done = 0;
        for (auto p : progress_) done += p;
        done_at_checkpoint_ = done;
        if (w.error().empty()) {
          last_written_seq_ = w.epoch();
          last_written_bytes_ = w.record_bytes();
          spdlog::info("checkpoint {} written ({} records, up to byte {})", w.epoch(),
                       w.n_records(), w.record_bytes());
        } else {
          spdlog::error("checkpoint not written: {}{}", w.error(),
                        last_written_seq_ > 0
                            ? fmt::format(" (checkpoint {} stays on disk)", last_written_seq_)
                            : std::string(" (no checkpoint on disk)"));
        }
        break;
      }
      case parallel::kTagTaskRequest: {
        const int task = take_next_task();
        if (task == kWaitForRound) {
          round_waiting_.push_back(m.source);  // answered when the round completes
          break;
        }
        std::string bytes(sizeof task, '\0');
        std::memcpy(bytes.data(), &task, sizeof task);
        deliver(m.source, parallel::kTagTaskAssign, std::move(bytes));
        break;
      }
      case parallel::kTagProgress: {
        auto p = WorkerProgress::decode(m.bytes, runs_.size());
        const auto source = static_cast<std::size_t>(m.source);
        progress_[source] = p.total_iterations();
        finished_[source] = p.finished;
        rank_progress_[source] = std::move(p);
        break;
      }
      case kTagRoundReport:
        on_round_report(m.bytes);
        break;
      case kTagRoundBroadcast: {
        const auto key = std::make_pair(int_prefix(m.bytes, 0), int_prefix(m.bytes, 1));
        round_broadcasts_[key] = m.bytes.substr(2 * sizeof(std::int32_t));
        break;
      }
      default:
        throw IoError("unexpected message tag " + std::to_string(m.tag) + " from rank " +
                      std::to_string(m.source));
    }
  }

  void log_progress_if_due() {
    if (!is_coordinator()) return;
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - last_log_).count() < progress_interval_) return;
    last_log_ = now;
    std::int64_t done = 0;
    for (auto p : progress_) done += p;
    const double secs = std::chrono::duration<double>(now - start_).count();
    const double rate = done / std::max(secs, 1e-9);
    const auto work = run_work();
    const double eta = eta_seconds(work, static_cast<int>(leaders_.size()));
    for (std::size_t r = 0; r < work.size(); ++r)
      spdlog::debug("progress of run {}: {} iterations done in {:.2f} chain-seconds, {} left",
                    runs_[r].name(), work[r].done_iterations, work[r].done_seconds,
                    work[r].remaining);
    spdlog::info("progress {:5.1f}% ({}/{} iterations), {:.0f} it/s, ETA {:.0f} s",
                 100.0 * done / std::max<std::int64_t>(1, total_iterations_), done,
                 total_iterations_, rate, eta);
  }

  // Coordinator: every run's work for eta_seconds, from the workers' last reports (its own
  // progress when the coordinator also runs chains).
  std::vector<RunWork> run_work() const {
    std::vector<RunWork> work(runs_.size());
    for (std::size_t r = 0; r < runs_.size(); ++r) {
      work[r].chain_iterations = run_chain_length_[r];
      for (int rank = 0; rank < layout_.n_ranks; ++rank) {
        const auto& p = rank == rank_ ? my_progress_ : rank_progress_[static_cast<std::size_t>(rank)];
        work[r].done_iterations += p.iterations[r];
        work[r].done_seconds += p.seconds[r];
      }
      work[r].remaining = run_remaining_[r] - work[r].done_iterations;
    }
    return work;
  }

  // ---- runs whose chains run in rounds (extended/multi_round_run.hpp) ----
  // Every round of every chain of such a run is an item of the task farm (task index +
  // n_chains() x round). Round 0 items are the ordinary tasks; the coordinator adds a run's items
  // of round k + 1 once the run's hook has pooled round k (and logged it), after writing the
  // record it returns and sending its broadcast to every worker. Workers asking meanwhile wait for
  // an answer.

  void init_rounds() {
    std::map<int, std::vector<int>> chains;
    for (std::size_t i = 0; i < tasks_.size(); ++i) {
      const auto& t = tasks_[i];
      if (!has_rounds(t.run_index)) continue;
      chains[t.run_index].push_back(t.id);
      round_task_of_[t.id] = static_cast<int>(i);
    }
    for (auto& [r, ids] : chains) rounds_[static_cast<std::size_t>(r)]->set_chains(std::move(ids));
  }

  bool has_rounds(int run_index) const {
    return rounds_[static_cast<std::size_t>(run_index)] != nullptr;
  }

  // Coordinator: an item of a later round, kWaitForRound while a round is still running, -1 when
  // nothing is left.
  int take_round_item() {
    if (!round_ready_.empty()) {
      const int item = round_ready_.front();
      round_ready_.pop_front();
      return item;
    }
    for (const auto& rounds : rounds_)
      if (rounds && rounds->rounds_pending()) return kWaitForRound;
    return -1;
  }

  // Coordinator: answers the ranks waiting for an item, as far as there are items (or none left).
  void serve_round_waiting() {
    while (!round_waiting_.empty()) {
      const int task = take_next_task();
      if (task == kWaitForRound) return;
      std::string bytes(sizeof task, '\0');
      std::memcpy(bytes.data(), &task, sizeof task);
      deliver(round_waiting_.front(), parallel::kTagTaskAssign, std::move(bytes));
      round_waiting_.pop_front();
    }
  }

  // Coordinator: a chain finished a round.
  void on_round_report(const std::string& bytes) {
    const int run_index = int_prefix(bytes, 0);
    if (run_index < 0 || run_index >= static_cast<int>(runs_.size()) || !has_rounds(run_index))
      throw IoError("round report for run " + std::to_string(run_index) + ", which has no rounds");
    auto& rounds = *rounds_[static_cast<std::size_t>(run_index)];
    const double secs = std::chrono::duration<double>(Clock::now() - start_).count();
    const auto end = rounds.on_report(bytes.substr(sizeof(std::int32_t)), secs);
    if (!end) return;
    std::string frames;
    records::append_frame(end->record, frames);
    deliver(layout_.collector, parallel::kTagRecords, std::move(frames));
    const std::string broadcast = with_int_prefix({run_index, end->next_round}, end->broadcast);
    for (int w : layout_.workers) deliver(w, kTagRoundBroadcast, broadcast);
    for (int id : end->next_chains)
      round_ready_.push_back(round_task_of_.at(id) + n_chains() * end->next_round);
    serve_round_waiting();
  }

  // Worker: round `round` of a chain of a run with rounds. An earlier round's draws go to the
  // run's hook (not to the records) and the leader reports the round to the coordinator; the final
  // round is the chain's recorded run. Returns the chain's final summary (its final round, or the
  // failure that ended it), or one with status ChainStatus::kRoundDone after an earlier round.
  v1::ChainSummary run_round_item(const config::Task& task, int round, const ChainCallbacks& cb,
                                  parallel::GroupCommPtr group) {
    const auto& rounds = *rounds_[static_cast<std::size_t>(task.run_index)];
    const std::string* broadcast = nullptr;
    if (round > 0) {
      const auto key = std::make_pair(task.run_index, round);
      while (!round_broadcasts_.count(key)) service_wait();  // sent before the item; normally here
      broadcast = &round_broadcasts_.at(key);
    }
    const auto item = rounds.start_round(task.id, task.seed, round, broadcast);
    if (auto refused = item->refused()) return *refused;
    // A checkpoint holds neither the round nor the pooled results: such a chain's checkpoint
    // fails (the runner's message names the sampler below), and --resume refuses these runs.
    current_sampler_ = rounds.sampler_name();
    ChainCallbacks round_cb = cb;
    if (cb.on_checkpoint)
      round_cb.on_checkpoint = [orig = cb.on_checkpoint](const v1::ChainCheckpoint& ck) {
        v1::ChainCheckpoint unusable = ck;
        unusable.mutable_kernel()->Clear();
        orig(unusable);
      };
    const bool leader = layout_.is_group_leader(rank_);
    if (!item->is_final()) {
      if (leader)
        round_cb.emit = [&item](const v1::Record& r) { item->on_record(r); };
      else
        round_cb.emit = nullptr;
    }
    auto summary = run_chain(item->config(), target_of(task.run_index),
                             ChainTask{task.id, item->seed()}, round_cb, group);
    if (status_of(summary) == ChainStatus::kCheckpointed) return summary;
    auto outcome = item->finish(std::move(summary), leader);
    if (!outcome.report.empty())
      deliver(layout_.coordinator, kTagRoundReport,
              with_int_prefix({task.run_index}, outcome.report));
    if (outcome.round_done) set_status(outcome.summary, ChainStatus::kRoundDone);
    return outcome.summary;
  }

  std::vector<std::unique_ptr<extended::MultiRoundRun>> rounds_;  // by run index (nullptr: none)
  std::map<int, int> round_task_of_;  // chain id -> task index (runs with rounds)
  std::deque<int> round_ready_;       // coordinator: items of later rounds
  std::deque<int> round_waiting_;     // coordinator: ranks waiting for an item
  std::map<std::pair<int, int>, std::string> round_broadcasts_;  // worker: by (run, round)

  CheckpointOptions ck_;
  std::map<int, const v1::ChainCheckpoint*> resume_of_;  // chain id -> its saved state
  std::vector<int> todo_;                                // task indices to hand out
  std::vector<int> leaders_;
  // Coordinator.
  static constexpr int kMaxMessagesPerPump = 64;
  bool signal_seen_ = false;
  std::int64_t last_written_seq_ = 0, last_written_bytes_ = 0;  // the newest checkpoint on disk
  bool stop_requested_ = false, stopping_ = false, epoch_active_ = false;
  std::int64_t epoch_ = 0, done_at_checkpoint_ = 0;
  Clock::time_point last_checkpoint_;
  // Leader.
  std::int64_t pending_epoch_ = -1;
  bool pending_stop_ = false, stopped_ = false, in_chain_ = false, done_sent_ = false;
  const v1::Footer* mine_ = nullptr;
  std::string current_sampler_;
  parallel::Messenger messenger_;
  parallel::Layout layout_;
  std::vector<v1::RunConfig> runs_;
  std::vector<config::Task> tasks_;
  std::vector<targets::TargetPtr> targets_;
  Collector* collector_;
  int rank_ = 0;
  int next_task_ = 0;
  std::int64_t total_iterations_ = 0;
  std::int64_t local_iterations_ = 0;
  double progress_interval_ = 5.0;
  std::vector<std::int64_t> progress_;
  std::vector<bool> finished_;
  std::vector<WorkerProgress> rank_progress_;  // coordinator: each rank's last report
  WorkerProgress my_progress_;                 // this rank's chains, per run
  std::size_t current_run_ = 0;                // the run of the chain this rank is running
  Clock::time_point run_time_charged_;         // my_progress_.seconds holds the time up to here
  std::vector<std::int64_t> run_chain_length_;  // per run: one chain's iterations
  std::vector<std::int64_t> run_remaining_;     // per run: iterations left when this session began
  Clock::time_point start_, last_log_, last_pump_{}, last_progress_send_;
};

// This job's ranks: the layout (coordinator, collector, worker groups) and, on a worker of a group
// of several, the group's communicator.
struct Ranks {
  parallel::Layout layout;
  int group_size = 1;
  parallel::GroupCommPtr group;  // nullptr: this rank runs its chains alone (or runs none)
};

// Chains spanning several ranks: one group size for the job (the largest any run asks for).
int requested_group_size(const RunPlan& plan) {
  int requested = 1;
  for (const auto& run : plan.runs)
    requested = std::max(requested, config::ranks_per_chain(run.sampler()));
  return requested;
}

// Independent chains can move to any rank; a chain spread over a group continues only on a group of
// the same size (its state is split and ordered by the group's members). False (rank 0 says why)
// when the checkpoint's chains cannot continue on these ranks.
bool resume_fits_groups(const RunPlan& plan, int group_size, int requested_group,
                        const mpi::communicator& world) {
  if (!plan.resume) return true;
  for (const auto& c : plan.resume->in_progress()) {
    if (c.group_size() == group_size) continue;
    if (world.rank() == 0)
      std::cerr << "pemc-dist: error: cannot resume: chain " << c.chain_id() << " of the checkpoint "
                << "ran on " << c.group_size() << " rank(s) per chain, but " << world.size()
                << " ranks give groups of " << group_size << " (ranks_per_chain " << requested_group
                << "); resume with a number of ranks that gives " << c.group_size()
                << " worker(s) per chain, e.g. the checkpointed run's " << plan.resume->n_ranks()
                << "\n";
    return false;
  }
  return true;
}

// Rank 0: ranks_per_chain that the worker count cannot give, and workers left idle.
void warn_about_groups(const parallel::Layout& layout, int requested_group) {
  if (requested_group <= 1) return;
  const int used = static_cast<int>(layout.groups.front().size());
  const int idle = static_cast<int>(layout.workers.size() - layout.groups.size() * used);
  if (used < requested_group)
    spdlog::warn("ranks_per_chain = {} but only {} worker rank(s): each chain runs on {} "
                 "(draws are identical; only the speed differs)", requested_group, used, used);
  if (idle > 0)
    spdlog::warn("{} worker rank(s) idle: {} workers do not divide into groups of {}", idle,
                 layout.workers.size(), used);
}

// Every rank takes part (the communicator split is collective); nullopt when a resume cannot
// continue on these ranks.
std::optional<Ranks> arrange_ranks(mpi::communicator& world, const RunPlan& plan) {
  const int requested_group = requested_group_size(plan);
  Ranks r;
  r.layout = parallel::make_layout(world.size(), requested_group);
  r.group_size = static_cast<int>(r.layout.groups.front().size());
  if (!resume_fits_groups(plan, r.group_size, requested_group, world)) return std::nullopt;
  // The ranks of one chain get their own communicator.
  const int rank = world.rank();
  const int my_group = r.layout.group_of(rank);
  MPI_Comm group_raw = MPI_COMM_NULL;
  MPI_Comm_split(static_cast<MPI_Comm>(world), my_group >= 0 ? my_group : MPI_UNDEFINED, rank,
                 &group_raw);
  if (group_raw != MPI_COMM_NULL) {
    mpi::communicator group_comm(group_raw, mpi::comm_take_ownership);
    if (group_comm.size() > 1) r.group = std::make_shared<parallel::MpiGroupComm>(group_comm);
  }
  if (rank == 0) warn_about_groups(r.layout, requested_group);
  return r;
}

// What a rank builds before any work starts: its targets and, on the collector, the open output.
struct RankSetup {
  std::vector<targets::TargetPtr> targets;  // one per run
  std::unique_ptr<Collector> collector;
};

void build_rank_setup(const RunOptions& o, const RunPlan& plan, bool is_collector,
                      RankSetup& setup) {
  setup.targets.resize(plan.runs.size());
  for (std::size_t r = 0; r < plan.runs.size(); ++r)
    setup.targets[r] = config::make_target(plan.runs[r].target());
  if (!is_collector) return;
  const auto ckpt = checkpoint_path(plan.config);
  if (plan.resume) {
    setup.collector = std::make_unique<Collector>(plan.config.output().path(), *plan.resume, ckpt);
  } else {
    setup.collector = std::make_unique<Collector>(plan.config.output().path(), o.overwrite);
    // A checkpoint left by an earlier run of this output no longer describes the file.
    std::error_code ec;
    std::filesystem::remove(ckpt, ec);
  }
}

// Every rank builds what it needs from the agreed plan; a failure anywhere is reported (by rank 0)
// before any work starts, and the run ends with nullopt.
std::optional<RankSetup> set_up_rank(const RunOptions& o, const RunPlan& plan,
                                     const parallel::Layout& layout, mpi::communicator& world) {
  const int rank = world.rank();
  RankSetup setup;
  std::string local_error;
  try {
    build_rank_setup(o, plan, rank == layout.collector, setup);
  } catch (const Error& e) {
    local_error = e.what();
  }
  std::vector<std::string> errors;
  mpi::all_gather(world, local_error, errors);
  for (std::size_t r = 0; r < errors.size(); ++r) {
    if (errors[r].empty()) continue;
    if (rank == 0) std::cerr << "pemc-dist: error (rank " << r << "): " << errors[r] << "\n";
    return std::nullopt;
  }
  return setup;
}

// Plays this rank's roles to the end. On the collector an error ends in its abort path: write what
// it holds where the file still takes it, and say what is on disk (the job is aborted next).
void play_roles(RankLoop& loop, const parallel::Layout& layout, int rank,
                parallel::GroupCommPtr group, Collector* collector) {
  try {
    if (layout.is_worker(rank)) loop.run_worker(std::move(group));
    loop.serve_until_done();
  } catch (const std::exception& e) {
    if (!collector) throw;
    collector->salvage();
    throw IoError(std::string(e.what()) + "\n  on disk: " + collector->describe_on_disk());
  }
}

// The collector ends the output: a footer when every chain finished, else (stopped at a
// checkpoint) no footer, since the run continues with --resume. Returns the run's exit code.
int finish_output(const RunOptions& o, const RunPlan& plan, Collector& collector,
                  Clock::time_point wall_start) {
  const auto ckpt = checkpoint_path(plan.config);
  int exit_code = kExitOk;
  if (collector.n_finished() < static_cast<int>(plan.tasks.size())) {
    collector.close_without_footer();
    at_coordinator_level(o, [&] {
      exit_code = log_stopped(collector.last_checkpoint(), collector.last_checkpoint_error(),
                              collector.describe_on_disk(), ckpt,
                              resume_command(o, plan.config.output().path()));
    });
    return exit_code;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - wall_start).count();
  const auto footer = collector.finish(wall);
  std::error_code ec;
  std::filesystem::remove(ckpt, ec);  // the run is complete: nothing to resume
  if (!footer_ok(footer)) exit_code = kExitChainsFailed;
  // The collector logs the summary it wrote at the coordinator's level.
  at_coordinator_level(o, [&] { log_footer(footer, collector.path()); });
  return exit_code;
}

RankLoop::CheckpointOptions checkpoint_options(const RunOptions& o, const RunPlan& plan) {
  RankLoop::CheckpointOptions ck;
  ck.resume = plan.resume ? &*plan.resume : nullptr;
  ck.every_seconds = plan.config.checkpoint().every_seconds();
  ck.every_iterations = plan.config.checkpoint().every_iterations();
  ck.stop_after_iterations = o.stop_after_iterations;
  return ck;
}

int run_ranks(const RunOptions& o, mpi::communicator& world) {
  const int rank = world.rank();
  const auto wall_start = Clock::now();
  AgreedPlan agreed;  // rank 0 holds the output locks in it until the run ends
  if (rank == 0) agreed = agree_on_rank0(o);
  const auto plan = share_plan(world, agreed);
  if (!plan) return kExitConfig;
  if (o.validate_only) {
    if (rank == 0) print_validated(o, *plan);
    return kExitOk;
  }
  const auto ranks = arrange_ranks(world, *plan);
  if (!ranks) return kExitConfig;
  const auto& layout = ranks->layout;
  auto setup = set_up_rank(o, *plan, layout, world);
  if (!setup) return kExitConfig;
  Collector* collector = setup->collector.get();

  RankLoop loop(world, layout, plan->runs, plan->tasks, collector, checkpoint_options(o, *plan));
  if (collector)
    collector->set_checkpointing(checkpoint_setup(o, *plan, loop.leaders(), world.size(),
                                                  ranks->group_size, wall_start));
  for (std::size_t r = 0; r < plan->runs.size(); ++r)
    loop.adopt_target(static_cast<int>(r), setup->targets[r]);
  if (collector && !plan->resume)
    collector->write_header(make_header(o, *plan, setup->targets, world.size()));
  if (rank == 0) log_start(*plan, layout, world.size(), setup->targets[0]->dim());

  play_roles(loop, layout, rank, ranks->group, collector);
  int exit_code = collector ? finish_output(o, *plan, *collector, wall_start) : kExitOk;
  mpi::broadcast(world, exit_code, layout.collector);
  return exit_code;
}

}  // namespace

int run(const RunOptions& o) {
  mpi::communicator world;
  setup_logging(o, world.rank());
  install_stop_handlers();
  try {
    return run_ranks(o, world);
  } catch (const std::exception& e) {
    // A failure on one rank must not leave the others waiting: report it and abort the job.
    std::cerr << "pemc-dist: fatal error on rank " << world.rank() << ": " << e.what() << "\n";
    std::cerr.flush();
    MPI_Abort(MPI_COMM_WORLD, kExitInternal);
    return kExitInternal;
  }
}

}  // namespace pemc::runner
