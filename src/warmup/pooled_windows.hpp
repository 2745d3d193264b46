#pragma once
// What the chains of a pooled warmup learn together (pooled_schedule.hpp): after each window the
// coordinator merges every chain's window draws into one metric, and decides from the log density
// of the recent windows whether the chains have converged.
//
// Convergence (after the cross-chain warmup of Zhang, Carpenter et al. 2020, as in Stan's
// "campfire" prototype): for each run of trailing windows j..k, the log density's draws of every
// live chain over those windows give R-hat (rank-normalised split, Vehtari et al. 2021) and bulk
// ESS. Among the runs with R-hat <= kRhatConverged the one with the largest bulk ESS is chosen;
// the chains have converged when it exists and its ESS is >= kEssConverged. The metric is
// estimated from the chosen windows, or from the last window alone when no run qualifies,
// regularised as Stan regularises one chain's window: (n / (n + 5)) C + 1e-3 (5 / (n + 5)) I for
// n pooled draws. C is the covariance of all chains' draws pooled (Pooling::kAllDraws), or the
// within-chain covariance, each chain's draws about its own mean (Pooling::kWithinChains): for a
// sampler that moves between modes itself (pseudo-extended), whose local kernel must step within
// a mode even when the chains' warmups sit in different ones.
//
// Everything is merged in ascending chain id and window order, so the result does not depend on
// the order reports arrived in, nor on the number of ranks.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/types.hpp"

namespace pemc::warmup {

inline constexpr double kRhatConverged = 1.05;
inline constexpr double kEssConverged = 100.0;

// Count, mean and sum of squared deviations (a diagonal or a full matrix) of draws: Welford's
// update for one draw, Chan, Golub & LeVeque's for merging two sets.
class WindowSums {
 public:
  WindowSums() = default;
  WindowSums(int dim, bool dense);
  void add(ConstVectorRef x);
  void merge(const WindowSums& other);

  std::int64_t count() const { return n_; }
  bool dense() const { return dense_; }
  int dim() const { return static_cast<int>(mean_.size()); }
  const Vector& mean() const { return mean_; }
  // dense: dim x dim; diagonal: dim x 1.
  const Matrix& m2() const { return m2_; }
  // For messages: a set with these values (m2 of the shape above).
  static WindowSums from_parts(std::int64_t n, Vector mean, Matrix m2, bool dense);
  // The same draws' diagonal sums (a diagonal set unchanged).
  WindowSums diagonal() const;

 private:
  bool dense_ = false;
  std::int64_t n_ = 0;
  Vector mean_;
  Matrix m2_;
};

// The inverse metric from pooled sums (count >= 2), regularised as in the file comment: the
// variances (diagonal) or the covariance, row-major (dense).
std::vector<double> regularised_inverse_metric(const WindowSums& sums);

// One chain's contribution to one window.
struct ChainWindow {
  WindowSums sums;
  std::vector<double> log_density;  // per iteration, in order
};

enum class Pooling { kAllDraws, kWithinChains };

// One chain's draws over the windows a decision's metric came from: what pseudo-extended's
// reference is fitted to (reference_fit.hpp).
struct ChainFit {
  WindowSums sums;
  double mean_log_density = 0.0;
};

struct WindowDecision {
  bool converged = false;
  int first_window = 0;     // the windows the metric came from: first_window..last_window
  int last_window = 0;
  double rhat = 0.0;        // of the log density over those windows (NaN: undefined)
  double bulk_ess = 0.0;
  std::int64_t n_draws = 0;  // pooled draws behind the metric
  std::vector<double> inverse_metric;
};

// Every window's chain reports, for the coordinator.
class WindowHistory {
 public:
  // Window `window` (1-based) of chain `chain_id`.
  void add(int window, int chain_id, ChainWindow w);
  // The decision after window `last` over the chains in `live` (ascending ids; each must have
  // reported every window it is asked about: windows before a chain joined are skipped). The
  // metric is diagonal when the sums are, or when `diagonal_metric` (dense sums kept for a fit).
  WindowDecision decide(int last, const std::vector<int>& live,
                        Pooling pooling = Pooling::kAllDraws, bool diagonal_metric = false) const;
  // Each chain in `live`'s draws over windows d.first_window..d.last_window, by chain id.
  std::map<int, ChainFit> chain_fits(const WindowDecision& d, const std::vector<int>& live) const;
  // Drops every report of chain `chain_id`: a restarted chain joins again with its next window.
  void forget(int chain_id);

  // Every report so far (window -> chain id -> report), for checkpoints.
  using Windows = std::map<int, std::map<int, ChainWindow>>;
  const Windows& windows() const { return windows_; }
  static WindowHistory from_windows(Windows windows);

 private:
  Windows windows_;
};

}  // namespace pemc::warmup
