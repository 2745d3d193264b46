#pragma once
// Estimates followed over a run: the EstimatesSnapshot records (records.proto) a chain writes every
// output.estimates_every iterations, and the final tempering schedule of parallel-tempering chains
// (from the footer's estimates beta_<i> and swap_accept_<i>).
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace pemc::report {

struct EstimateSeries {
  std::string run_id;
  int chain_id = 0;
  std::uint64_t seed = 0;
  std::vector<double> iteration, wall_seconds, n_gradient_evals, value;
};

// One series per (run, chain) holding `estimate`, in file order (chains sorted within a file).
// Snapshots without the estimate are skipped; `run_filter` non-empty keeps only that run.
// Throws DataError when no snapshot of any file holds `estimate` (naming the estimates that exist).
std::vector<EstimateSeries> read_estimate_series(const std::vector<std::filesystem::path>& files,
                                                 const std::string& estimate,
                                                 const std::string& run_filter = "");

// A parallel-tempering chain's final ladder and its communication barrier
// Lambda(beta_i) = sum_{j < i} r_j, r_j = 1 - mean swap acceptance probability of pair (j, j+1)
// (Syed et al. 2021, the cumulative barrier the schedule adaptation equalises).
struct TemperingSchedule {
  std::string run_id;
  int chain_id = 0;
  std::vector<double> betas, barrier;
};

// From the footers' chain summaries; DataError when no chain reports a ladder.
std::vector<TemperingSchedule> read_schedules(const std::vector<std::filesystem::path>& files,
                                              const std::string& run_filter = "");

// Every EstimatesSnapshot of `path` as CSV: run_id, chain_id, seed, iteration, wall_seconds,
// n_gradient_evals, then one column per estimate name (sorted; empty where a snapshot lacks it).
// With `moments`, then the running moments and the base's (records.proto), coordinates by Stan's
// 1-based names: mean_x[i], cov_x[i]_x[j] (i <= j), base_mean_x[i], base_cov_x[i]_x[j],
// base_log_zeta (e.g. mean_x[1], cov_x[1]_x[2]), for the largest d any
// snapshot has (empty where one lacks them). Returns the number of rows.
std::int64_t export_estimates_csv(const std::filesystem::path& path, std::ostream& out,
                                  bool moments = false);

}  // namespace pemc::report
