#include "tempering/batched_log_sums.hpp"

#include "adapt/state_io.hpp"

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

double BatchedLogSums::log_ratio_se(int a, int b) const {
  // Batch sums relative to each channel's total, so that none overflows.
  std::vector<double> ra, rb;
  std::int64_t n_full = 0;
  for (const auto& batch : batches_)
    if (batch.n == batch_size_) {
      ra.push_back(std::exp(batch.log_sums[a] - total_[a]));
      rb.push_back(std::exp(batch.log_sums[b] - total_[b]));
      n_full += batch.n;
    }
  const std::size_t k = ra.size();
  if (k < 2 || total_[a] == -kInf || total_[b] == -kInf) return std::numeric_limits<double>::quiet_NaN();
  double mean_a = 0.0, mean_b = 0.0;
  for (std::size_t j = 0; j < k; ++j) {
    mean_a += ra[j] / static_cast<double>(k);
    mean_b += rb[j] / static_cast<double>(k);
  }
  if (!(mean_a > 0.0 && mean_b > 0.0)) return std::numeric_limits<double>::quiet_NaN();
  double ss = 0.0;
  for (std::size_t j = 0; j < k; ++j) {
    const double r = ra[j] / mean_a - rb[j] / mean_b;
    ss += r * r;
  }
  const double kk = static_cast<double>(k);
  return std::sqrt(ss / (kk - 1.0) / kk * static_cast<double>(n_full) / static_cast<double>(count_));
}

void BatchedLogSums::save_state(pemc::v1::KernelState& s) const {
  s.set_kind("batched_log_sums");
  adapt::put_int(s, "n_channels", n_channels_);
  adapt::put_int(s, "batch_size", batch_size_);
  adapt::put_int(s, "count", count_);
  adapt::put_reals(s, "total", total_);
  std::vector<double> sums;
  std::vector<std::int64_t> ns;
  for (const auto& b : batches_) {
    sums.insert(sums.end(), b.log_sums.begin(), b.log_sums.end());
    ns.push_back(b.n);
  }
  adapt::put_reals(s, "batch_log_sums", sums);
  adapt::put_ints(s, "batch_n", ns);
}

void BatchedLogSums::restore_state(const pemc::v1::KernelState& s) {
  adapt::expect_kind(s, "batched_log_sums");
  if (adapt::get_int(s, "n_channels") != n_channels_)
    adapt::state_error(s, "n_channels", "saved with " + std::to_string(adapt::get_int(s, "n_channels")) +
                                            " channels, this has " + std::to_string(n_channels_));
  batch_size_ = adapt::get_int(s, "batch_size");
  count_ = adapt::get_int(s, "count");
  total_ = adapt::get_real_vector(s, "total");
  const auto sums = adapt::get_real_vector(s, "batch_log_sums");
  const auto ns = adapt::get_int_vector<std::int64_t>(s, "batch_n");
  if (static_cast<int>(total_.size()) != n_channels_ ||
      sums.size() != ns.size() * static_cast<std::size_t>(n_channels_) ||
      ns.size() > 2 * static_cast<std::size_t>(n_batches_))
    adapt::state_error(s, "batch_log_sums", "sizes do not match the channels and batches");
  batches_.clear();
  for (std::size_t b = 0; b < ns.size(); ++b)
    batches_.push_back(Batch{std::vector<double>(sums.begin() + static_cast<std::ptrdiff_t>(b * n_channels_),
                                                 sums.begin() + static_cast<std::ptrdiff_t>((b + 1) * n_channels_)),
                             ns[b]});
}

}  // namespace pemc::tempering
