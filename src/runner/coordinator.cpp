// The coordinator role of the rank loop (rank_loop.hpp): tasks, progress, checkpoint epochs and the
// pooling of runs whose chains run in rounds.
#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "records/record_file.hpp"
#include "runner/rank_loop.hpp"
#include "runner/rank_messages.hpp"
#include "runner/stop_signal.hpp"

namespace pemc::runner {

// Every rank notices a stop signal; the coordinator opens an epoch when a stop was asked for or a
// period is due (one at a time).
void RankLoop::check_checkpoint_triggers() {
  if (stop_signal() != 0 && !signal_seen_) notice_stop_signal();
  if (!is_coordinator()) return;
  const auto due = epochs_.due(Clock::now(), progress_.done_iterations(), leaders_.size(),
                               progress_.all_finished(layout_.workers));
  if (due) open_epoch(*due);
}

void RankLoop::open_epoch(bool stop) {
  const auto begin = epochs_.open(stop);
  if (epochs_.stopping()) {
    farm_.stop();
    assign_waiting();  // ranks waiting for a round: none left
  }
  send_rounds_state(begin.epoch);
  const std::string bytes = begin.encode();
  for (int l : leaders_) deliver(l, kTagCkptBegin, bytes);
}

// The pooling state of every run with rounds, for epoch `epoch`'s checkpoint. No round completes
// while the epoch is open (on_round_report holds reports back), so the state stays true for it.
void RankLoop::send_rounds_state(std::int64_t epoch) {
  if (!any_rounds()) return;
  v1::CheckpointPart part;
  part.set_epoch(epoch);
  for (std::size_t r = 0; r < rounds_.size(); ++r) {
    if (!rounds_[r] || !rounds_[r]->can_checkpoint()) continue;
    auto& s = *part.add_rounds();
    s.set_run_index(static_cast<int>(r));
    s.set_run_id(runs_[r].name());
    s.set_state(rounds_[r]->checkpoint_state());
  }
  deliver(layout_.collector, kTagCkptRounds, part.SerializeAsString());
}

void RankLoop::on_checkpoint_written(const std::string& bytes) {
  v1::CheckpointPart w;
  w.ParseFromString(bytes);
  epochs_.on_written(w, Clock::now(), progress_.done_iterations());
  // The round reports that arrived during the epoch, in arrival order.
  auto held = std::move(held_round_reports_);
  held_round_reports_.clear();
  for (const auto& report : held) on_round_report(report);
}

void RankLoop::on_task_request(int source) {
  const int item = farm_.take();
  if (item == TaskFarm::kWaitForRound) {
    farm_.wait(source);  // answered when the round completes
    return;
  }
  deliver(source, parallel::kTagTaskAssign, encode_task(item));
}

void RankLoop::assign_waiting() {
  for (const auto& [rank, item] : farm_.assign_waiting())
    deliver(rank, parallel::kTagTaskAssign, encode_task(item));
}

void RankLoop::on_progress(int source, const std::string& bytes) {
  progress_.on_report(source, WorkerProgress::decode(bytes, runs_.size()));
}

void RankLoop::log_progress_if_due() {
  if (!is_coordinator()) return;
  progress_.log_if_due(Clock::now(), runs_, rank_, my_progress_,
                       static_cast<int>(leaders_.size()));
}

// ---- runs whose chains run in rounds (extended/multi_round_run.hpp) ----
// Every round of every chain of such a run is an item of the task farm (task index + n_chains() x
// round). Round 0 items are the ordinary tasks; the coordinator adds a run's items of round k + 1
// once the run's hook has pooled round k (and logged it), after writing the record it returns and
// sending its broadcast to every worker. Workers asking meanwhile wait for an answer.

void RankLoop::init_rounds() {
  for (std::size_t i = 0; i < tasks_.size(); ++i)
    if (has_rounds(tasks_[i].run_index)) round_task_of_[tasks_[i].id] = static_cast<int>(i);
}

bool RankLoop::has_rounds(int run_index) const {
  return rounds_[static_cast<std::size_t>(run_index)] != nullptr;
}

bool RankLoop::any_rounds() const {
  for (const auto& rounds : rounds_)
    if (rounds) return true;
  return false;
}

bool RankLoop::rounds_pending() const {
  for (const auto& rounds : rounds_)
    if (rounds && rounds->rounds_pending()) return true;
  return false;
}

void RankLoop::on_round_report(const std::string& bytes) {
  if (epochs_.epoch_open()) {  // pooled after the checkpoint: its state is the round's start
    held_round_reports_.push_back(bytes);
    return;
  }
  const int run_index = int_prefix(bytes, 0);
  if (run_index < 0 || run_index >= static_cast<int>(runs_.size()) || !has_rounds(run_index))
    throw IoError("round report for run " + std::to_string(run_index) + ", which has no rounds");
  auto& rounds = *rounds_[static_cast<std::size_t>(run_index)];
  const auto end =
      rounds.on_report(after_int_prefix(bytes, 1), progress_.seconds_since_start(Clock::now()));
  if (!end) return;
  std::string frames;
  records::append_frame(end->record, frames);
  deliver(layout_.collector, parallel::kTagRecords, std::move(frames));
  const std::string broadcast = with_int_prefix({run_index, end->next_round}, end->broadcast);
  for (int w : layout_.workers) deliver(w, kTagRoundBroadcast, broadcast);
  for (int id : end->next_chains)
    farm_.add_ready(round_task_of_.at(id) + n_chains() * end->next_round);
  assign_waiting();
}

}  // namespace pemc::runner
