#include "estimators/pareto_tail.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace pemc::estimators {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kMinTail = 5;

}  // namespace

double generalized_pareto_shape(std::span<const double> x) {
  const auto n = static_cast<std::ptrdiff_t>(x.size());
  if (n < kMinTail || !(x.back() > 0.0)) return kNaN;
  // Zhang & Stephens (2009): a grid of m values of theta = -k / sigma around the likelihood's
  // mode, weighted by their profile likelihood.
  constexpr double kPrior = 3.0;
  const int m = 30 + static_cast<int>(std::floor(std::sqrt(static_cast<double>(n))));
  const double x_star = x[static_cast<std::size_t>(std::floor(static_cast<double>(n) / 4.0 + 0.5)) - 1];
  if (!(x_star > 0.0)) return kNaN;
  std::vector<double> theta(static_cast<std::size_t>(m)), log_lik(static_cast<std::size_t>(m));
  auto mean_log1p = [&](double t) {
    double s = 0.0;
    for (double v : x) s += std::log1p(-t * v);
    return s / static_cast<double>(n);
  };
  for (int j = 0; j < m; ++j) {
    const double t = 1.0 / x.back() +
                     (1.0 - std::sqrt(static_cast<double>(m) / (j + 0.5))) / kPrior / x_star;
    const double k = mean_log1p(t);
    theta[j] = t;
    // Profile log likelihood per point: log(-theta / k) - k - 1 (sigma = -k / theta).
    const double ratio = -t / k;
    log_lik[j] = ratio > 0.0 ? static_cast<double>(n) * (std::log(ratio) - k - 1.0)
                             : -std::numeric_limits<double>::infinity();
  }
  const double top = *std::max_element(log_lik.begin(), log_lik.end());
  if (!std::isfinite(top)) return kNaN;
  double sum_w = 0.0, theta_hat = 0.0;
  for (int j = 0; j < m; ++j) {
    const double w = std::exp(log_lik[j] - top);
    sum_w += w;
    theta_hat += w * theta[j];
  }
  theta_hat /= sum_w;
  const double k = mean_log1p(theta_hat);
  // Weakly informative prior around 0.5 (a = 10 pseudo-observations; Vehtari et al. 2024,
  // Appendix C).
  const double a = 10.0, nn = static_cast<double>(n);
  return k * nn / (nn + a) + a * 0.5 / (nn + a);
}

double pareto_k_hat_of_largest(std::span<const double> lw, double n_draws) {
  auto m = static_cast<std::size_t>(std::ceil(std::min(0.2 * n_draws, 3.0 * std::sqrt(n_draws))));
  if (!lw.empty()) m = std::min(m, lw.size() - 1);
  if (m < static_cast<std::size_t>(kMinTail) || lw.size() < m + 1 || !std::isfinite(lw[m]))
    return kNaN;
  const double top = lw[0];
  const double cutoff = std::exp(lw[m] - top);
  std::vector<double> x(m);
  for (std::size_t i = 0; i < m; ++i) x[m - 1 - i] = std::exp(lw[i] - top) - cutoff;  // ascending
  return generalized_pareto_shape(x);
}

double pareto_k_hat(std::span<const double> log_weights) {
  const double s = static_cast<double>(log_weights.size());
  const auto m = static_cast<std::size_t>(std::ceil(std::min(0.2 * s, 3.0 * std::sqrt(s))));
  if (m < static_cast<std::size_t>(kMinTail)) return kNaN;
  std::vector<double> lw;
  lw.reserve(log_weights.size());
  for (double v : log_weights)
    if (std::isfinite(v)) lw.push_back(v);
  if (lw.size() < m + 1) return kNaN;
  // The m + 1 largest, descending.
  std::partial_sort(lw.begin(), lw.begin() + static_cast<std::ptrdiff_t>(m + 1), lw.end(),
                    std::greater<>());
  lw.resize(m + 1);
  return pareto_k_hat_of_largest(lw, s);
}

double pareto_k_threshold(double n_draws) {
  if (!(n_draws > 10.0)) return kNaN;
  return std::min(1.0 - 1.0 / std::log10(n_draws), 0.7);
}

}  // namespace pemc::estimators
