#pragma once
// The coordinator's view of the run's progress: what each rank last reported (its iterations per
// run and the seconds they took, whether it finished), the iterations the job has left, and the
// periodic progress line with its ETA (progress_model.hpp).
#include <chrono>
#include <cstdint>
#include <vector>

#include "config/study.hpp"
#include "pemc/v1/checkpoint.pb.h"
#include "pemc/v1/config.pb.h"
#include "runner/progress_model.hpp"
#include "runner/rounds_resume.hpp"

namespace pemc::runner {

class CoordinatorProgress {
 public:
  using Clock = std::chrono::steady_clock;

  // `extra_iterations[r]`: iterations per chain that run r's earlier rounds add (0 for most runs).
  // With `resume`, the work counts what is left: finished chains and the checkpointed part of
  // running ones are taken off, and for runs with rounds (`rounds`) the warmup of the rounds
  // before the one each resumes in.
  CoordinatorProgress(const std::vector<pemc::v1::RunConfig>& runs,
                      const std::vector<config::Task>& tasks,
                      const std::vector<std::int64_t>& extra_iterations, int n_ranks,
                      const pemc::v1::Checkpoint* resume, const RoundsResume& rounds,
                      Clock::time_point start);

  // A rank's report (parallel::kTagProgress).
  void on_report(int rank, WorkerProgress progress);
  // The coordinator's own chains' iterations, when it also runs chains.
  void set_own_iterations(int rank, std::int64_t iterations);
  // Every rank's iterations so far.
  std::int64_t done_iterations() const;
  // Every worker reported that it finished.
  bool all_finished(const std::vector<int>& workers) const;
  double seconds_since_start(Clock::time_point now) const;
  // The iterations the job had left when this session began.
  std::int64_t total_iterations() const { return total_iterations_; }

  // Logs the progress line when the interval has passed. `own_rank`'s progress is `own` (the
  // coordinator's chains, when it also runs some); `n_leaders`: chains running at once.
  void log_if_due(Clock::time_point now, const std::vector<pemc::v1::RunConfig>& runs,
                  int own_rank, const WorkerProgress& own, int n_leaders);

 private:
  // Every run's work for eta_seconds, from the ranks' last reports.
  std::vector<RunWork> run_work(int own_rank, const WorkerProgress& own) const;
  // No ETA before the chains have run this many seconds in all, or done this share of the work.
  static constexpr double kSecondsBeforeEta = 5.0;
  static constexpr double kShareBeforeEta = 0.05;

  std::vector<std::int64_t> iterations_;       // by rank: the last report's total
  std::vector<bool> finished_;                 // by rank
  std::vector<WorkerProgress> rank_progress_;  // by rank: the last report
  std::vector<std::int64_t> run_chain_length_;  // per run: one chain's iterations
  std::vector<std::int64_t> run_remaining_;     // per run: iterations left when this session began
  std::int64_t total_iterations_ = 0;           // left when this session began
  double interval_seconds_ = 5.0;
  Clock::time_point start_, last_log_;
};

}  // namespace pemc::runner
