#pragma once
// Streaming log-sum-exp sums over several channels, kept both in total and in contiguous batches
// for batch-means standard errors of estimators that are smooth functions of the sums
// (stepping-stone log Z, ST's Rao-Blackwellised log Z).
//
// The number of observations is not known in advance, so batches double in size: at most
// 2 * n_batches batches are kept; when that many are full, neighbours merge pairwise. The batch
// layout therefore depends only on the number of observations (never on timing or ranks).
#include <cstdint>
#include <functional>
#include <vector>

#include "pemc/v1/checkpoint.pb.h"

namespace pemc::tempering {

class BatchedLogSums {
 public:
  BatchedLogSums(int n_channels, int n_batches);

  // One observation: a log value per channel (n_channels entries; -inf allowed).
  void add(const double* log_values);

  int n_channels() const { return n_channels_; }
  std::int64_t count() const { return count_; }
  // log sum over every observation, per channel.
  const std::vector<double>& total() const { return total_; }

  // Batch-means standard error of estimate(log sums, n): estimate is applied to every *full*
  // batch; SE = sd(batch estimates) / sqrt(n full batches). NaN with fewer than 2 full batches.
  using Estimator = std::function<double(const std::vector<double>& log_sums, std::int64_t n)>;
  double batch_se(const Estimator& estimate) const;
  int n_full_batches() const;
  // Batch-means SE of log(sum of channel a) - log(sum of channel b) by the delta method on the
  // full batches' sums A_j, B_j (estimators/log_ratio_batch_means.hpp has the derivation):
  // SE^2 = (1/k) sum_j (A_j / Abar - B_j / Bbar)^2 / (k - 1), scaled by n_full / n. Unlike
  // batch_se of the per-batch log ratios it never divides by one batch's own sum (tiny in a batch
  // the chain spent at the other end). NaN with fewer than 2 full batches or a zero mean sum.
  double log_ratio_se(int a, int b) const;

  // Checkpoint: totals and batches (channels and batch count come from the constructor).
  void save_state(pemc::v1::KernelState& s) const;
  void restore_state(const pemc::v1::KernelState& s);

 private:
  struct Batch {
    std::vector<double> log_sums;
    std::int64_t n = 0;
  };
  int n_channels_;
  int n_batches_;
  std::int64_t batch_size_ = 1;
  std::int64_t count_ = 0;
  std::vector<double> total_;
  std::vector<Batch> batches_;
};

}  // namespace pemc::tempering
