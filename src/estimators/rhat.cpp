#include "estimators/rhat.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace pemc::estimators {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Lower-tail normal quantile for 0 < p <= 0.5. Start from the rational approximation of
// Abramowitz & Stegun 26.2.23 (absolute error < 4.5e-4), then polish with Halley steps on
// f(x) = Phi(x) - p, Phi(x) = erfc(-x / sqrt 2) / 2 (accurate in the lower tail, where p is small
// and 1 - p would lose digits). Halley converges cubically: from 4.5e-4, two steps reach double
// precision (4.5e-4 -> ~1e-10 -> below rounding).
double lower_quantile(double p) {
  const double t = std::sqrt(-2.0 * std::log(p));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                       (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  for (int i = 0; i < 2; ++i) {
    const double density = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    if (!(density > 0.0)) break;  // p below ~1e-300: the approximation is as good as it gets
    const double u = (0.5 * std::erfc(-x / std::sqrt(2.0)) - p) / density;
    // f' = phi, f'' = -x phi  =>  Halley: x -= u / (1 - u f'' / (2 f')) = u / (1 + x u / 2).
    x -= u / (1.0 + 0.5 * x * u);
  }
  return x;
}

std::size_t common_length(const std::vector<std::span<const double>>& chains) {
  if (chains.empty()) return 0;
  std::size_t n = chains.front().size();
  for (const auto& c : chains) n = std::min(n, c.size());
  return n;
}

}  // namespace

double inverse_normal_cdf(double p) {
  if (std::isnan(p) || p < 0.0 || p > 1.0)
    throw NumericalError("inverse_normal_cdf: probability " + std::to_string(p) +
                         " is outside [0, 1]");
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();
  if (p == 0.5) return 0.0;
  return p < 0.5 ? lower_quantile(p) : -lower_quantile(1.0 - p);
}

Chains split_chains(const std::vector<std::span<const double>>& chains) {
  const std::size_t n = common_length(chains);
  const std::size_t half = n / 2;
  Chains out;
  out.reserve(2 * chains.size());
  for (const auto& c : chains) {
    out.emplace_back(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(half));
    out.emplace_back(c.begin() + static_cast<std::ptrdiff_t>(n - half),
                     c.begin() + static_cast<std::ptrdiff_t>(n));
  }
  return out;
}

Chains rank_normalize(const Chains& chains) {
  struct Item {
    double value;
    std::size_t chain, index;
  };
  std::vector<Item> items;
  for (std::size_t m = 0; m < chains.size(); ++m)
    for (std::size_t i = 0; i < chains[m].size(); ++i) {
      if (std::isnan(chains[m][i]))
        throw NumericalError("rank_normalize: draw " + std::to_string(i) + " of chain " +
                             std::to_string(m) + " is NaN");
      items.push_back({chains[m][i], m, i});
    }
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return a.value < b.value; });
  Chains out(chains.size());
  for (std::size_t m = 0; m < chains.size(); ++m) out[m].resize(chains[m].size());
  const double s = static_cast<double>(items.size());
  for (std::size_t begin = 0; begin < items.size();) {
    std::size_t end = begin + 1;
    while (end < items.size() && items[end].value == items[begin].value) ++end;
    // Positions begin+1 .. end (1-based) share their average rank.
    const double rank = 0.5 * static_cast<double>(begin + 1 + end);
    const double z = inverse_normal_cdf((rank - 0.375) / (s + 0.25));
    for (std::size_t k = begin; k < end; ++k) out[items[k].chain][items[k].index] = z;
    begin = end;
  }
  return out;
}

double pooled_quantile(const Chains& chains, double q) {
  std::vector<double> all;
  for (const auto& c : chains) all.insert(all.end(), c.begin(), c.end());
  if (all.empty()) return kNaN;
  const double h = (static_cast<double>(all.size()) - 1.0) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(lo), all.end());
  const double a = all[lo];
  if (lo + 1 >= all.size()) return a;
  // The next order statistic is the smallest of the elements after position lo.
  const double b = *std::min_element(all.begin() + static_cast<std::ptrdiff_t>(lo) + 1, all.end());
  return a + (h - static_cast<double>(lo)) * (b - a);
}

Chains fold(const Chains& chains) {
  const double median = pooled_quantile(chains, 0.5);
  Chains out = chains;
  for (auto& c : out)
    for (double& x : c) x = std::fabs(x - median);
  return out;
}

double potential_scale_reduction(const Chains& chains) {
  const std::size_t m = chains.size();
  if (m < 2) return kNaN;
  std::size_t n = chains.front().size();
  for (const auto& c : chains) n = std::min(n, c.size());
  if (n < 2) return kNaN;
  const double dn = static_cast<double>(n);
  std::vector<double> means(m);
  double w = 0.0;
  for (std::size_t j = 0; j < m; ++j) {
    const auto& c = chains[j];
    double mean = 0.0;
    for (std::size_t i = 0; i < n; ++i) mean += c[i];
    mean /= dn;
    // A constant chain has variance exactly 0 (its rounded mean may differ from the value).
    const auto [lo, hi] = std::minmax_element(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n));
    if (*lo == *hi) mean = *lo;
    double ss = 0.0;
    for (std::size_t i = 0; i < n; ++i) ss += (c[i] - mean) * (c[i] - mean);
    means[j] = mean;
    w += ss / (dn - 1.0);
  }
  w /= static_cast<double>(m);
  const double grand = std::accumulate(means.begin(), means.end(), 0.0) / static_cast<double>(m);
  double b_over_n = 0.0;
  for (double mu : means) b_over_n += (mu - grand) * (mu - grand);
  b_over_n /= static_cast<double>(m - 1);
  if (w == 0.0) return b_over_n > 0.0 ? std::numeric_limits<double>::infinity() : kNaN;
  const double var_plus = (dn - 1.0) / dn * w + b_over_n;
  return std::sqrt(var_plus / w);
}

RhatResult rank_normalized_split_rhat(const std::vector<std::span<const double>>& chains) {
  RhatResult r{kNaN, kNaN, kNaN};
  if (chains.empty() || common_length(chains) < 4) return r;
  const Chains split = split_chains(chains);
  r.rhat_bulk = potential_scale_reduction(rank_normalize(split));
  r.rhat_folded = potential_scale_reduction(rank_normalize(fold(split)));
  // fmax ignores a NaN argument: one undefined variant does not hide the other.
  r.rhat = std::fmax(r.rhat_bulk, r.rhat_folded);
  return r;
}

}  // namespace pemc::estimators
