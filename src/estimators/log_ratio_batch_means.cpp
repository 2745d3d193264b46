#include "estimators/log_ratio_batch_means.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "core/numerics.hpp"

namespace pemc::estimators {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kHeader = 5;
}  // namespace

LogRatioBatchMeans::LogRatioBatchMeans(int n_batches)
    : n_batches_(n_batches), shift_a_(-kInf), shift_b_(-kInf) {
  if (n_batches < 2) throw std::invalid_argument("LogRatioBatchMeans: need >= 2 batches");
}

double LogRatioBatchMeans::scaled(double log_v, double& shift, double Batch::*sum) {
  if (log_v == -kInf) return 0.0;
  if (log_v > shift) {
    const double factor = std::exp(shift - log_v);  // 0 while shift is still -inf (sums are 0)
    for (auto& b : batches_) b.*sum *= factor;
    shift = log_v;
  }
  return std::exp(log_v - shift);
}

void LogRatioBatchMeans::add(double log_a, double log_b) {
  if (batches_.empty() || batches_.back().n == batch_size_) {
    if (static_cast<int>(batches_.size()) == 2 * n_batches_) {
      // Every batch is full: merge neighbours, doubling the batch size.
      for (int j = 0; j < n_batches_; ++j) {
        const Batch& l = batches_[2 * j];
        const Batch& r = batches_[2 * j + 1];
        batches_[j] = Batch{l.a + r.a, l.b + r.b, l.n + r.n};
      }
      batches_.resize(n_batches_);
      batch_size_ *= 2;
    }
    if (batches_.empty() || batches_.back().n == batch_size_) batches_.emplace_back();
  }
  const double a = scaled(log_a, shift_a_, &Batch::a);
  const double b = scaled(log_b, shift_b_, &Batch::b);
  Batch& last = batches_.back();
  last.a += a;
  last.b += b;
  ++last.n;
  ++count_;
}

int LogRatioBatchMeans::n_full_batches() const {
  int k = 0;
  for (const auto& b : batches_) k += b.n == batch_size_;
  return k;
}

double LogRatioBatchMeans::log_ratio() const {
  double a = 0.0, b = 0.0;
  for (const auto& batch : batches_) {
    a += batch.a;
    b += batch.b;
  }
  if (!(a > 0.0 && b > 0.0)) return kNaN;
  return (std::log(a) + shift_a_) - (std::log(b) + shift_b_);
}

double LogRatioBatchMeans::log_ratio_se() const {
  double sum_a = 0.0, sum_b = 0.0;
  int k = 0;
  for (const auto& b : batches_)
    if (b.n == batch_size_) {
      sum_a += b.a;
      sum_b += b.b;
      ++k;
    }
  if (k < 2 || !(sum_a > 0.0 && sum_b > 0.0)) return kNaN;
  const double mean_a = sum_a / k, mean_b = sum_b / k;
  double ss = 0.0;
  for (const auto& b : batches_)
    if (b.n == batch_size_) {
      const double r = b.a / mean_a - b.b / mean_b;
      ss += r * r;
    }
  const double se2_full = ss / (k - 1.0) / k;
  const double n_full = static_cast<double>(k) * static_cast<double>(batch_size_);
  return std::sqrt(se2_full * n_full / static_cast<double>(count_));
}

std::vector<double> LogRatioBatchMeans::serialize() const {
  std::vector<double> out{static_cast<double>(n_batches_), static_cast<double>(batch_size_),
                          static_cast<double>(count_), shift_a_, shift_b_};
  for (const auto& b : batches_) {
    out.push_back(b.a);
    out.push_back(b.b);
    out.push_back(static_cast<double>(b.n));
  }
  return out;
}

LogRatioBatchMeans LogRatioBatchMeans::deserialize(std::span<const double> data) {
  auto bad = [](const std::string& why) {
    return DataError("LogRatioBatchMeans::deserialize: " + why);
  };
  auto whole = [](double v) { return v >= 0.0 && v == std::floor(v) && v < 9.0e15; };
  if (data.size() < kHeader || (data.size() - kHeader) % 3 != 0)
    throw bad(std::to_string(data.size()) + " numbers is not a header of 5 plus batches of 3");
  if (!whole(data[0]) || data[0] < 2 || !whole(data[1]) || data[1] < 1 || !whole(data[2]))
    throw bad("bad batch count, batch size or observation count");
  LogRatioBatchMeans m(static_cast<int>(data[0]));
  m.batch_size_ = static_cast<std::int64_t>(data[1]);
  m.count_ = static_cast<std::int64_t>(data[2]);
  m.shift_a_ = data[3];
  m.shift_b_ = data[4];
  const std::size_t n = (data.size() - kHeader) / 3;
  if (n > 2 * static_cast<std::size_t>(m.n_batches_)) throw bad("more batches than 2 x n_batches");
  std::int64_t total = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const double* p = data.data() + kHeader + 3 * j;
    if (!whole(p[2]) || p[2] < 1 || p[2] > static_cast<double>(m.batch_size_) || !(p[0] >= 0.0) ||
        !(p[1] >= 0.0))
      throw bad("batch " + std::to_string(j) + " is not a valid batch");
    m.batches_.push_back(Batch{p[0], p[1], static_cast<std::int64_t>(p[2])});
    total += m.batches_.back().n;
  }
  if (total != m.count_) throw bad("the batches hold " + std::to_string(total) +
                                   " observations, the count says " + std::to_string(m.count_));
  return m;
}

}  // namespace pemc::estimators
