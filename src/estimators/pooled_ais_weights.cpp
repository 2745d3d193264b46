#include "estimators/pooled_ais_weights.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/numerics.hpp"
#include "estimators/pareto_tail.hpp"

namespace pemc::estimators {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool usable(const AisChainWeights& c) {
  return c.n_runs >= 1.0 && std::isfinite(c.log_z) && c.ess > 0.0;
}

// The pooled largest log weights, descending, down to where the list is exact: a chain that sent
// fewer weights than it has runs may hold unsent weights just below its smallest sent one, so
// nothing below the largest such smallest weight is known to be in order.
std::vector<double> exact_pooled_tail(const std::vector<AisChainWeights>& chains) {
  std::vector<double> all;
  double floor = -kInf;
  for (const auto& c : chains) {
    if (!usable(c)) continue;
    const auto& w = c.largest_log_weights;
    all.insert(all.end(), w.begin(), w.end());
    if (static_cast<double>(w.size()) < c.n_runs)
      floor = std::max(floor, w.empty() ? kInf : w.back());
  }
  std::sort(all.begin(), all.end(), std::greater<>());
  const auto end = std::find_if(all.begin(), all.end(), [&](double v) { return !(v >= floor); });
  all.erase(end, all.end());
  return all;
}

}  // namespace

std::size_t ais_tail_size(double n_runs) {
  if (!(n_runs >= 1.0)) return 0;
  const double m = std::ceil(std::min(0.2 * n_runs, 3.0 * std::sqrt(n_runs)));
  return static_cast<std::size_t>(std::min(m + 1.0, n_runs));
}

PooledAisWeights pool_ais_weights(const std::vector<AisChainWeights>& chains) {
  PooledAisWeights p;
  double log_s1 = -kInf, log_s2 = -kInf;
  for (const auto& c : chains) {
    if (!usable(c)) continue;
    const double log_sum = c.log_z + std::log(c.n_runs);
    log_s1 = log_add_exp(log_s1, log_sum);
    log_s2 = log_add_exp(log_s2, 2.0 * log_sum - std::log(c.ess));
    p.n_runs += c.n_runs;
    ++p.n_chains;
  }
  if (p.n_chains == 0) {
    p.log_z = p.log_z_se = p.pareto_k = kNaN;
    return p;
  }
  p.log_z = log_s1 - std::log(p.n_runs);
  p.ess = std::exp(2.0 * log_s1 - log_s2);
  p.log_z_se = p.n_runs >= 2.0
                   ? std::sqrt(std::max(0.0, p.n_runs / p.ess - 1.0) / (p.n_runs - 1.0))
                   : kNaN;
  const auto tail = exact_pooled_tail(chains);
  p.pareto_k = pareto_k_hat_of_largest(tail, p.n_runs);
  const double m = std::ceil(std::min(0.2 * p.n_runs, 3.0 * std::sqrt(p.n_runs)));
  p.n_tail_weights = static_cast<int>(
      std::min(m, tail.empty() ? 0.0 : static_cast<double>(tail.size() - 1)));
  return p;
}

}  // namespace pemc::estimators
