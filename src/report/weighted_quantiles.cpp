#include "report/weighted_quantiles.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace pemc::report {

double weighted_quantile(std::span<const double> x, std::span<const double> w, double p) {
  if (!(p >= 0.0 && p <= 1.0))
    throw ConfigError("weighted quantile: probability " + std::to_string(p) + " is not in [0, 1]");
  if (x.size() != w.size())
    throw ConfigError("weighted quantile: " + std::to_string(x.size()) + " samples but " +
                      std::to_string(w.size()) + " weights");
  std::vector<std::size_t> kept;
  double total = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(w[i] >= 0.0) || !std::isfinite(w[i]))
      throw NumericalError("weighted quantile: weight " + std::to_string(w[i]) + " of sample " +
                           std::to_string(i));
    if (w[i] == 0.0) continue;
    if (!std::isfinite(x[i]))
      throw NumericalError("weighted quantile: sample " + std::to_string(i) + " is not finite");
    kept.push_back(i);
    total += w[i];
  }
  if (kept.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(kept.begin(), kept.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  const std::size_t n = kept.size();
  if (n == 1) return x[kept[0]];
  const double dn1 = static_cast<double>(n - 1);
  const double h = p * dn1;
  double before = 0.0;  // w_1 + ... + w_{k-1}, normalised
  double s_k = 0.0;     // S_k
  for (std::size_t k = 0; k + 1 < n; ++k) {
    const double w_k = w[kept[k]] / total;
    const double w_next = w[kept[k + 1]] / total;
    const double s_next = static_cast<double>(k + 1) * w_next + dn1 * (before + w_k);
    if (h < s_next) {
      const double a = x[kept[k]], b = x[kept[k + 1]];
      return a + (h - s_k) / (s_next - s_k) * (b - a);
    }
    before += w_k;
    s_k = s_next;
  }
  return x[kept[n - 1]];
}

void WeightedSampleStore::add(std::int64_t draw, ConstVectorRef x, double log_w) {
  if (draw % stride_ != 0) return;
  if (values_.empty()) values_.resize(static_cast<std::size_t>(x.size()));
  for (std::size_t i = 0; i < values_.size(); ++i) values_[i].push_back(x[static_cast<Eigen::Index>(i)]);
  log_weights_.push_back(log_w);
  draws_.push_back(draw);
  const auto n_values = static_cast<std::int64_t>(log_weights_.size() * std::max<std::size_t>(values_.size(), 1));
  if (n_values > max_values_) halve();
}

void WeightedSampleStore::halve() {
  stride_ *= 2;
  std::size_t j = 0;
  for (std::size_t s = 0; s < draws_.size(); ++s) {
    if (draws_[s] % stride_ != 0) continue;
    for (auto& v : values_) v[j] = v[s];
    log_weights_[j] = log_weights_[s];
    draws_[j] = draws_[s];
    ++j;
  }
  for (auto& v : values_) v.resize(j);
  log_weights_.resize(j);
  draws_.resize(j);
}

}  // namespace pemc::report
