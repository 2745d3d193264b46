#include "tempering/batched_log_sums.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/numerics.hpp"

namespace pemc::tempering {

BatchedLogSums::BatchedLogSums(int n_channels, int n_batches)
    : n_channels_(n_channels), n_batches_(n_batches), total_(n_channels, -kInf) {
  if (n_channels < 1 || n_batches < 2)
    throw std::invalid_argument("BatchedLogSums: need >= 1 channel and >= 2 batches");
}

void BatchedLogSums::add(const double* log_values) {
  if (batches_.empty() || batches_.back().n == batch_size_) {
    if (static_cast<int>(batches_.size()) == 2 * n_batches_) {
      // All full: merge neighbours, doubling the batch size.
      std::vector<Batch> merged(n_batches_);
      for (int b = 0; b < n_batches_; ++b) {
        merged[b].log_sums.resize(n_channels_);
        for (int c = 0; c < n_channels_; ++c)
          merged[b].log_sums[c] =
              log_add_exp(batches_[2 * b].log_sums[c], batches_[2 * b + 1].log_sums[c]);
        merged[b].n = batches_[2 * b].n + batches_[2 * b + 1].n;
      }
      batches_ = std::move(merged);
      batch_size_ *= 2;
    }
    if (batches_.empty() || batches_.back().n == batch_size_)
      batches_.push_back(Batch{std::vector<double>(n_channels_, -kInf), 0});
  }
  Batch& b = batches_.back();
  for (int c = 0; c < n_channels_; ++c) {
    b.log_sums[c] = log_add_exp(b.log_sums[c], log_values[c]);
    total_[c] = log_add_exp(total_[c], log_values[c]);
  }
  ++b.n;
  ++count_;
}

int BatchedLogSums::n_full_batches() const {
  int n = 0;
  for (const auto& b : batches_) n += b.n == batch_size_;
  return n;
}

double BatchedLogSums::batch_se(const Estimator& estimate) const {
  std::vector<double> values;
  for (const auto& b : batches_)
    if (b.n == batch_size_) values.push_back(estimate(b.log_sums, b.n));
  if (values.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  double mean = 0.0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double ss = 0.0;
  for (double v : values) ss += (v - mean) * (v - mean);
  const double n = static_cast<double>(values.size());
  return std::sqrt(ss / (n - 1.0) / n);
}

}  // namespace pemc::tempering
