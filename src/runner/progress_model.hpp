#pragma once
// The coordinator's estimate of the time left when the runs of a study cost differently per
// iteration (plain NUTS next to pseudo-extended NUTS with N pseudo-samples: a global iterations-
// per-second rate, dominated by the cheap run, promised a fraction of the real time). Each run's
// cost per iteration is measured on its own, as the seconds its chains ran (on their leader
// ranks) per iteration done, and the iterations it has left are priced at that cost.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pemc::runner {

// One run's work: one chain's length, the iterations left in all its chains (failed chains' not
// counted), and what its chains did so far in this session.
struct RunWork {
  std::int64_t chain_iterations = 0;
  std::int64_t remaining = 0;
  std::int64_t done_iterations = 0;
  double done_seconds = 0.0;
  std::int64_t skipped = 0;  // iterations failed chains will not do (not in `remaining`)
};

// Seconds until every run finishes with at most `parallel` chains running at a time (fewer when
// fewer chains are left). A run with no iteration done yet is priced at the mean cost per
// iteration of those done; with nothing done at all the estimate is 0.
double eta_seconds(const std::vector<RunWork>& runs, int parallel);

// What a worker reports to the coordinator: per run index, the iterations its chains did (counted
// on group leaders only, so a chain counts once), the seconds they took (from each chain's first
// iteration: its set-up, e.g. a mode search, is not an iteration's cost) and the iterations its
// failed chains will never do (taken off the work left).
struct WorkerProgress {
  bool finished = false;
  std::vector<std::int64_t> iterations;
  std::vector<double> seconds;
  std::vector<std::int64_t> skipped;

  explicit WorkerProgress(std::size_t n_runs = 0)
      : iterations(n_runs, 0), seconds(n_runs, 0.0), skipped(n_runs, 0) {}
  std::int64_t total_iterations() const;
  std::string encode() const;
  // Throws IoError when the bytes do not hold progress for n_runs runs.
  static WorkerProgress decode(const std::string& bytes, std::size_t n_runs);
};

}  // namespace pemc::runner
