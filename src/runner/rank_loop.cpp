#include "runner/rank_loop.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "config/multi_round.hpp"
#include "core/cpu_time.hpp"
#include "core/error.hpp"
#include "parallel/idle_wait.hpp"
#include "runner/direct_writes.hpp"
#include "runner/rank_messages.hpp"
#include "runner/stop_signal.hpp"

namespace pemc::runner {
namespace {

// Every run's rounds (nullptr: none), told their chains.
std::vector<std::unique_ptr<extended::MultiRoundRun>> make_rounds(
    const std::vector<v1::RunConfig>& runs, const std::vector<config::Task>& tasks) {
  std::vector<std::unique_ptr<extended::MultiRoundRun>> rounds;
  for (std::size_t r = 0; r < runs.size(); ++r)
    rounds.push_back(config::make_multi_round_run(runs[r], static_cast<int>(r)));
  std::map<int, std::vector<int>> chains;
  for (const auto& t : tasks)
    if (rounds[static_cast<std::size_t>(t.run_index)]) chains[t.run_index].push_back(t.id);
  for (auto& [r, ids] : chains) rounds[static_cast<std::size_t>(r)]->set_chains(std::move(ids));
  return rounds;
}

// Runs with rounds continue the checkpoint's pooling (rounds_resume.hpp).
RoundsResume restore_rounds(std::vector<std::unique_ptr<extended::MultiRoundRun>>& rounds,
                            const v1::Checkpoint* resume) {
  RoundsResume points;
  if (!resume) return points;
  for (const auto& s : resume->rounds())
    points[s.run_index()] = rounds.at(static_cast<std::size_t>(s.run_index()))->restore(s.state());
  return points;
}

std::vector<std::int64_t> extra_iterations(
    const std::vector<std::unique_ptr<extended::MultiRoundRun>>& rounds) {
  std::vector<std::int64_t> extra;
  for (const auto& r : rounds) extra.push_back(r ? r->extra_iterations_per_chain() : 0);
  return extra;
}

// The task farm hands out what the checkpoint did not finish (running chains continue): items
// of the round a run with rounds resumes in.
std::vector<int> tasks_to_do(const std::vector<config::Task>& tasks, const v1::Checkpoint* resume,
                             const RoundsResume& rounds) {
  std::set<int> finished;
  if (resume)
    for (const auto& c : resume->completed()) finished.insert(c.chain_id());
  const int n_chains = static_cast<int>(tasks.size());
  std::vector<int> todo;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (finished.count(tasks[i].id)) continue;
    const auto point = rounds.find(tasks[i].run_index);
    todo.push_back(static_cast<int>(i) + (point == rounds.end() ? 0 : n_chains * point->second.round));
  }
  return todo;
}

}  // namespace

RankLoop::RankLoop(boost::mpi::communicator world, parallel::Layout layout,
                   std::vector<v1::RunConfig> runs, std::vector<config::Task> tasks,
                   Collector* collector, CheckpointOptions ck)
    : messenger_(world),
      layout_(std::move(layout)),
      rank_(messenger_.rank()),
      runs_(std::move(runs)),
      tasks_(std::move(tasks)),
      ck_(ck),
      epochs_(ck.every_seconds, ck.every_iterations, Clock::now(),
              ck.resume ? ck.resume->sequence() : 0, ck.resume ? ck.resume->record_bytes() : 0),
      rounds_(make_rounds(runs_, tasks_)),
      resumed_rounds_(restore_rounds(rounds_, ck.resume)),
      collector_(collector),
      farm_(tasks_to_do(tasks_, ck.resume, resumed_rounds_), [this] { return rounds_pending(); }),
      progress_(runs_, tasks_, extra_iterations(rounds_), layout_.n_ranks, ck.resume,
                resumed_rounds_, Clock::now()),
      targets_(runs_.size()),
      modes_(runs_.size()),
      my_progress_(runs_.size()),
      last_progress_send_(Clock::now()) {
  init_rounds();
  if (ck_.resume)
    for (const auto& c : ck_.resume->in_progress()) resume_of_[c.chain_id()] = &c;
  for (const auto& [r, point] : resumed_rounds_)
    if (point.round > 0) round_broadcasts_[{r, point.round}] = point.broadcast;
  for (const auto& g : layout_.groups) leaders_.push_back(g.front());
  if (is_coordinator()) stats_.roles |= RankStats::kCoordinator;
  if (is_collector()) stats_.roles |= RankStats::kCollector;
  if (layout_.is_worker(rank_)) stats_.roles |= RankStats::kWorker;
}

RankStats RankLoop::stats() const {
  RankStats s = stats_;
  const auto& m = messenger_.stats();
  s.sends = m.sends;
  s.sum_in_flight = m.sum_in_flight;
  s.max_in_flight = m.max_in_flight;
  s.window_waits = m.window_waits;
  s.window_wait_seconds = m.window_wait_seconds;
  s.max_inbox = m.max_inbox;
  return s;
}

void RankLoop::adopt_target(int run_index, targets::TargetPtr t, modes::ModeSetPtr modes) {
  targets_[static_cast<std::size_t>(run_index)] = std::move(t);
  modes_[static_cast<std::size_t>(run_index)] = std::move(modes);
}

// A coordinator or collector whose own chains are done serves the others: between messages it
// sleeps up to 1 ms (a worker waiting for a task waits that long at most).
void RankLoop::serve_until_done() {
  parallel::IdleBackoff idle(std::chrono::milliseconds(1));
  while (!roles_done()) {
    if (handle_pending()) {
      idle.reset();
      continue;
    }
    log_progress_if_due();
    check_checkpoint_triggers();
    idle.sleep();
  }
  messenger_.wait_all();
}

bool RankLoop::roles_done() const {
  if (is_collector() && collector_->workers_done() < static_cast<int>(layout_.workers.size()))
    return false;
  if (is_coordinator() && !progress_.all_finished(layout_.workers)) return false;
  return true;
}

// Record batches are flow-controlled (synchronous sends, see parallel/messenger.hpp).
void RankLoop::deliver(int dest, int tag, std::string bytes) {
  if (dest == rank_) {
    handle(parallel::Message{rank_, tag, std::move(bytes)});
  } else {
    messenger_.send(dest, tag, std::move(bytes),
                    tag == parallel::kTagRecords || tag == kTagRecordFill
                        ? parallel::SendMode::kSynchronous
                        : parallel::SendMode::kStandard);
  }
}

bool RankLoop::handle_pending() {
  const double t0 = thread_cpu_seconds();
  auto m = messenger_.poll();
  if (!m) {
    drain_ = 0;
    return false;
  }
  stats_.max_drain = std::max(stats_.max_drain, ++drain_);
  handle(std::move(*m), thread_cpu_seconds() - t0);
  return true;
}

// Two thread-CPU clock reads per message (about a microsecond): messages carry batches of records,
// once-a-second progress and one request per task, so this is never per draw.
void RankLoop::handle(parallel::Message m, double receive_cpu) {
  const double t0 = thread_cpu_seconds();
  const int tag = m.tag;
  const std::size_t bytes = m.bytes.size();
  dispatch(std::move(m));
  stats_.count(tag, bytes, receive_cpu + thread_cpu_seconds() - t0);
}

void RankLoop::dispatch(parallel::Message m) {
  switch (m.tag) {
    case parallel::kTagRecords:
      collector_->on_records(m.source, m.bytes);
      break;
    case parallel::kTagDone:
      on_worker_done(m.source, m.bytes);
      break;
    case kTagCkptRequest:
      if (!epochs_.stop_requested())
        spdlog::warn("rank {} asks to stop with a checkpoint", m.source);
      epochs_.request_stop();
      break;
    case kTagCkptBegin:
      on_epoch_begin(m.bytes);
      break;
    case kTagCkptPart:
      on_checkpoint_part(m.source, m.bytes);
      break;
    case kTagCkptRounds:
      on_checkpoint_rounds(m.bytes);
      break;
    case kTagCkptWritten:
      on_checkpoint_written(m.bytes);
      break;
    case parallel::kTagTaskRequest:
      on_task_request(m.source);
      break;
    case parallel::kTagProgress:
      on_progress(m.source, m.bytes);
      break;
    case kTagRoundReport:
      on_round_report(m.bytes);
      break;
    case kTagRecordRange:
      if (const auto offset = collector_->on_record_range(m.source, RecordRange::decode(m.bytes)))
        deliver(m.source, kTagRecordOffset, encode_offset(*offset));
      break;
    case kTagRecordOffset:
      on_record_offset(m.bytes);
      break;
    case kTagRecordFill: {
      std::string_view frames;
      const std::uint64_t offset = decode_fill(m.bytes, frames);
      collector_->on_record_fill(offset, frames);
      break;
    }
    case kTagRoundBroadcast: {
      const auto key = std::make_pair(int_prefix(m.bytes, 0), int_prefix(m.bytes, 1));
      round_broadcasts_[key] = after_int_prefix(m.bytes, 2);
      break;
    }
    default:
      throw IoError("unexpected message tag " + std::to_string(m.tag) + " from rank " +
                    std::to_string(m.source));
  }
}

void RankLoop::pump_if_due() {
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
    progress_.set_own_iterations(rank_, local_iterations_);
    log_progress_if_due();
  }
}

void RankLoop::service_wait() {
  if (!handle_pending()) {
    check_checkpoint_triggers();
    usleep(100);
  }
}

// Says what happens and what is on disk now: the checkpoint is not written yet (it needs every
// chain's answer), and a job killed meanwhile (mpirun's SIGKILL after a crash) leaves only what is
// on disk at this point plus the records that reach the file before the kill.
void RankLoop::notice_stop_signal() {
  signal_seen_ = true;
  const int sig = stop_signal();
  std::string line = fmt::format("signal {} ({}) received: ", sig, stop_signal_name(sig));
  if (is_coordinator())
    line +=
        "stopping; the checkpoint needs every chain's state at its next iteration ('checkpoint N "
        "written' follows once it is on disk)";
  else if (is_collector())
    line += "writing the records the chains send";
  else
    line += "sending this rank's records, stopping at the next iteration";
  if (is_collector())
    line += "; on disk now: " + collector_->describe_on_disk(/*final=*/false);
  else if (is_coordinator())
    line += epochs_.last_written_sequence() > 0
                ? fmt::format("; on disk now: checkpoint {} (records up to byte {})",
                              epochs_.last_written_sequence(), epochs_.last_written_bytes())
                : std::string("; on disk now: no checkpoint yet");
  if (is_coordinator() || is_collector())
    spdlog::warn("{}", line);
  else
    spdlog::info("{}", line);
  request_stop();
}

void RankLoop::request_stop() {
  if (epochs_.stop_requested()) return;
  epochs_.request_stop();
  if (!is_coordinator()) deliver(layout_.coordinator, kTagCkptRequest, std::string());
}

void RankLoop::on_worker_done(int source, const std::string& bytes) {
  v1::Footer part;
  if (!part.ParseFromString(bytes))
    throw IoError("collector: malformed done message from rank " + std::to_string(source));
  if (collector_->on_worker_done(source, part)) report_written();
}

void RankLoop::on_checkpoint_part(int source, const std::string& bytes) {
  v1::CheckpointPart part;
  if (!part.ParseFromString(bytes))
    throw IoError("collector: malformed checkpoint part from rank " + std::to_string(source));
  if (collector_->on_checkpoint_part(source, part)) report_written();
}

void RankLoop::on_checkpoint_rounds(const std::string& bytes) {
  v1::CheckpointPart part;
  if (!part.ParseFromString(bytes))
    throw IoError("collector: malformed pooling state from the coordinator");
  if (collector_->on_rounds_part(part)) report_written();
}

void RankLoop::report_written() {
  v1::CheckpointPart w;
  w.set_epoch(collector_->last_checkpoint().sequence());
  w.set_error(collector_->last_checkpoint_error());
  w.set_record_bytes(collector_->last_checkpoint().record_bytes());
  w.set_n_records(collector_->last_checkpoint().n_records());
  deliver(layout_.coordinator, kTagCkptWritten, w.SerializeAsString());
  // Ranges asked for after their leaders' parts were reserved after the checkpoint's position.
  for (const auto& [leader, offset] : collector_->take_granted())
    deliver(leader, kTagRecordOffset, encode_offset(offset));
}

}  // namespace pemc::runner
