#include "runner/coordinator_progress.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <string>

namespace pemc::runner {

CoordinatorProgress::CoordinatorProgress(const std::vector<v1::RunConfig>& runs,
                                         const std::vector<config::Task>& tasks,
                                         const std::vector<std::int64_t>& extra_iterations,
                                         int n_ranks, const v1::Checkpoint* resume,
                                         const RoundsResume& rounds, Clock::time_point start)
    : iterations_(static_cast<std::size_t>(n_ranks), 0),
      finished_(static_cast<std::size_t>(n_ranks), false),
      rank_progress_(static_cast<std::size_t>(n_ranks), WorkerProgress(runs.size())),
      run_chain_length_(runs.size(), 0),
      run_remaining_(runs.size(), 0),
      interval_seconds_(runs.front().logging().progress_interval_seconds()),
      start_(start),
      last_log_(start) {
  for (const auto& t : tasks) {
    const auto r = static_cast<std::size_t>(t.run_index);
    const std::int64_t length = runs[r].warmup() + runs[r].iterations() + extra_iterations[r];
    total_iterations_ += length;
    run_chain_length_[r] = length;
    run_remaining_[r] += length;
  }
  if (!resume) return;
  // A resumed run's earlier rounds add no iterations (those that do cannot be checkpointed): a
  // chain's length is its own.
  std::map<int, std::int64_t> length;
  std::map<int, std::size_t> run_of;
  for (const auto& t : tasks) {
    const auto& run = runs[static_cast<std::size_t>(t.run_index)];
    length[t.id] = run.warmup() + run.iterations();
    run_of[t.id] = static_cast<std::size_t>(t.run_index);
  }
  for (const auto& c : resume->completed()) {
    total_iterations_ -= length[c.chain_id()];
    run_remaining_[run_of[c.chain_id()]] -= length[c.chain_id()];
  }
  for (const auto& c : resume->in_progress()) {
    total_iterations_ -= c.next_iteration();
    run_remaining_[run_of[c.chain_id()]] -= c.next_iteration();
  }
  for (const auto& [r, point] : rounds) {
    const auto before = point.warmup_before * static_cast<std::int64_t>(point.chains.size());
    total_iterations_ -= before;
    run_remaining_[static_cast<std::size_t>(r)] -= before;
  }
}

void CoordinatorProgress::on_report(int rank, WorkerProgress p) {
  const auto source = static_cast<std::size_t>(rank);
  iterations_[source] = p.total_iterations();
  finished_[source] = p.finished;
  rank_progress_[source] = std::move(p);
}

void CoordinatorProgress::set_own_iterations(int rank, std::int64_t iterations) {
  iterations_[static_cast<std::size_t>(rank)] = iterations;
}

std::int64_t CoordinatorProgress::done_iterations() const {
  std::int64_t done = 0;
  for (auto p : iterations_) done += p;
  return done;
}

bool CoordinatorProgress::all_finished(const std::vector<int>& workers) const {
  for (int w : workers)
    if (!finished_[static_cast<std::size_t>(w)]) return false;
  return true;
}

double CoordinatorProgress::seconds_since_start(Clock::time_point now) const {
  return std::chrono::duration<double>(now - start_).count();
}

void CoordinatorProgress::log_if_due(Clock::time_point now, const std::vector<v1::RunConfig>& runs,
                                     int own_rank, const WorkerProgress& own, int n_leaders) {
  if (std::chrono::duration<double>(now - last_log_).count() < interval_seconds_) return;
  last_log_ = now;
  const std::int64_t done = done_iterations();
  const double secs = seconds_since_start(now);
  const double rate = done / std::max(secs, 1e-9);
  const auto work = run_work(own_rank, own);
  std::int64_t skipped = 0;
  double chain_seconds = 0.0;
  for (std::size_t r = 0; r < work.size(); ++r) {
    skipped += work[r].skipped;
    chain_seconds += work[r].done_seconds;
    spdlog::debug("progress of run {}: {} iterations done in {:.2f} chain-seconds, {} left",
                  runs[r].name(), work[r].done_iterations, work[r].done_seconds,
                  work[r].remaining);
  }
  const std::int64_t total = total_iterations_ - skipped;
  // The cost per iteration is measured once the chains have run a while (or done a good part of
  // the work): the first iterations of warmup are no guide to the rest.
  const bool measured =
      chain_seconds >= kSecondsBeforeEta || done >= kShareBeforeEta * static_cast<double>(total);
  const std::string eta =
      measured ? fmt::format("ETA {:.0f} s", eta_seconds(work, n_leaders)) : "ETA estimating...";
  spdlog::info("progress {:5.1f}% ({}/{} iterations), {:.3g} it/s, {}",
               100.0 * done / std::max<std::int64_t>(1, total), done, total, rate, eta);
}

std::vector<RunWork> CoordinatorProgress::run_work(int own_rank, const WorkerProgress& own) const {
  std::vector<RunWork> work(run_chain_length_.size());
  for (std::size_t r = 0; r < work.size(); ++r) {
    work[r].chain_iterations = run_chain_length_[r];
    for (std::size_t rank = 0; rank < rank_progress_.size(); ++rank) {
      const auto& p = static_cast<int>(rank) == own_rank ? own : rank_progress_[rank];
      work[r].done_iterations += p.iterations[r];
      work[r].done_seconds += p.seconds[r];
      work[r].skipped += p.skipped[r];
    }
    work[r].remaining = run_remaining_[r] - work[r].done_iterations - work[r].skipped;
  }
  return work;
}

}  // namespace pemc::runner
