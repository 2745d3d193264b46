#include "estimators/regenerative_log_ratio.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "estimators/pareto_tail.hpp"

namespace pemc::estimators {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kHeader = 6;

double max_of(const std::vector<double>& v) {
  return v.empty() ? -kInf : *std::max_element(v.begin(), v.end());
}
}  // namespace

void RegenerativeLogRatio::add(double log_a, double log_b, bool starts_tour) {
  if (starts_tour) {
    if (open_) {
      log_a_.push_back(open_log_a_);
      log_b_.push_back(open_log_b_);
      in_tours_ += open_n_;
    }
    open_ = true;
    open_n_ = 0;
    open_log_a_ = open_log_b_ = -kInf;
  }
  open_log_a_ = log_add_exp(open_log_a_, log_a);
  open_log_b_ = log_add_exp(open_log_b_, log_b);
  ++open_n_;
  ++count_;
}

double RegenerativeLogRatio::log_ratio_se() const {
  const std::size_t t = log_a_.size();
  if (t < 2) return kNaN;
  // Tour sums relative to each channel's largest, so that none overflows.
  const double top_a = max_of(log_a_), top_b = max_of(log_b_);
  if (top_a == -kInf || top_b == -kInf) return kNaN;
  double mean_a = 0.0, mean_b = 0.0;
  for (std::size_t i = 0; i < t; ++i) {
    mean_a += std::exp(log_a_[i] - top_a);
    mean_b += std::exp(log_b_[i] - top_b);
  }
  mean_a /= static_cast<double>(t);
  mean_b /= static_cast<double>(t);
  double ss = 0.0;
  for (std::size_t i = 0; i < t; ++i) {
    const double r = std::exp(log_a_[i] - top_a) / mean_a - std::exp(log_b_[i] - top_b) / mean_b;
    ss += r * r;
  }
  const double n = static_cast<double>(t);
  const double se2_tours = ss / (n - 1.0) / n;
  return std::sqrt(se2_tours * static_cast<double>(in_tours_) / static_cast<double>(count_));
}

double RegenerativeLogRatio::tour_pareto_k() const {
  const double ka = pareto_k_hat(log_a_), kb = pareto_k_hat(log_b_);
  if (std::isnan(ka)) return kb;
  if (std::isnan(kb)) return ka;
  return std::max(ka, kb);
}

std::vector<double> RegenerativeLogRatio::serialize() const {
  std::vector<double> out{static_cast<double>(count_), static_cast<double>(in_tours_),
                          open_ ? 1.0 : 0.0,          static_cast<double>(open_n_),
                          open_log_a_,                open_log_b_};
  for (std::size_t i = 0; i < log_a_.size(); ++i) {
    out.push_back(log_a_[i]);
    out.push_back(log_b_[i]);
  }
  return out;
}

RegenerativeLogRatio RegenerativeLogRatio::deserialize(std::span<const double> data) {
  auto bad = [](const std::string& why) {
    return DataError("RegenerativeLogRatio::deserialize: " + why);
  };
  auto whole = [](double v) { return v >= 0.0 && v == std::floor(v) && v < 9.0e15; };
  auto log_sum = [](double v) { return !std::isnan(v) && v != kInf; };
  if (data.size() < kHeader || (data.size() - kHeader) % 2 != 0)
    throw bad(std::to_string(data.size()) + " numbers is not a header of 6 plus tours of 2");
  if (!whole(data[0]) || !whole(data[1]) || !whole(data[3]) || (data[2] != 0.0 && data[2] != 1.0))
    throw bad("bad counts or tour flag");
  RegenerativeLogRatio r;
  r.count_ = static_cast<std::int64_t>(data[0]);
  r.in_tours_ = static_cast<std::int64_t>(data[1]);
  r.open_ = data[2] == 1.0;
  r.open_n_ = static_cast<std::int64_t>(data[3]);
  r.open_log_a_ = data[4];
  r.open_log_b_ = data[5];
  if (r.in_tours_ + r.open_n_ > r.count_) throw bad("more observations in tours than observations");
  for (std::size_t i = kHeader; i < data.size(); i += 2) {
    if (!log_sum(data[i]) || !log_sum(data[i + 1])) throw bad("a tour's log sum is NaN or +inf");
    r.log_a_.push_back(data[i]);
    r.log_b_.push_back(data[i + 1]);
  }
  if (!log_sum(r.open_log_a_) || !log_sum(r.open_log_b_)) throw bad("the open tour's log sums");
  return r;
}

}  // namespace pemc::estimators
