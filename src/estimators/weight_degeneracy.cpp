#include "estimators/weight_degeneracy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace pemc::estimators {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kStateSize = 8;

}  // namespace

WeightDegeneracy::WeightDegeneracy(int n_pseudo, double beta_lower, double beta_upper)
    : n_(n_pseudo), lo_(beta_lower), hi_(beta_upper) {
  if (n_ < 1) throw std::invalid_argument("WeightDegeneracy: n_pseudo must be >= 1");
  w_.resize(static_cast<std::size_t>(n_));
}

void WeightDegeneracy::add(std::span<const double> log_weights, std::span<const double> betas) {
  if (log_weights.size() != static_cast<std::size_t>(n_) ||
      (!betas.empty() && betas.size() != static_cast<std::size_t>(n_)))
    throw std::invalid_argument(fmt::format(
        "WeightDegeneracy::add: {} log weights and {} betas for {} pseudo-samples",
        log_weights.size(), betas.size(), n_));
  double max_a = -std::numeric_limits<double>::infinity();
  int heaviest = 0;
  for (int i = 0; i < n_; ++i) {
    const double a = log_weights[static_cast<std::size_t>(i)];
    if (std::isnan(a)) return;
    if (a > max_a) {
      max_a = a;
      heaviest = i;
    }
  }
  if (!std::isfinite(max_a)) return;
  double sum = 0.0;
  for (int i = 0; i < n_; ++i) {
    const auto k = static_cast<std::size_t>(i);
    w_[k] = std::exp(log_weights[k] - max_a);
    sum += w_[k];
  }
  double sum_sq = 0.0;
  for (const double w : w_) sum_sq += (w / sum) * (w / sum);
  sum_max_w_ += 1.0 / sum;  // the heaviest has exp(0) = 1 before normalising
  sum_sq_w_ += sum_sq;
  if (last_heaviest_ >= 0 && heaviest != last_heaviest_) ++n_handoffs_;
  last_heaviest_ = heaviest;
  if (!betas.empty()) {
    const double band = lo_ + kLowerBetaBand * (hi_ - lo_);
    for (const double b : betas) n_beta_low_ += b < band ? 1 : 0;
    n_beta_ += n_;
  }
  ++n_draws_;
}

WeightDegeneracyStats WeightDegeneracy::stats() const {
  WeightDegeneracyStats s;
  s.n_draws = n_draws_;
  s.n_pseudo = n_;
  if (n_draws_ == 0) {
    s.mean_max_weight = s.ess_per_draw = s.beta_at_lower_fraction = s.weight_handoff_rate = kNaN;
    return s;
  }
  const auto n = static_cast<double>(n_draws_);
  s.mean_max_weight = sum_max_w_ / n;
  s.ess_per_draw = n / sum_sq_w_;
  s.beta_at_lower_fraction =
      n_beta_ > 0 ? static_cast<double>(n_beta_low_) / static_cast<double>(n_beta_) : kNaN;
  s.weight_handoff_rate = n_draws_ > 1 ? static_cast<double>(n_handoffs_) / (n - 1.0) : kNaN;
  return s;
}

std::vector<double> WeightDegeneracy::save() const {
  // Counts are below 2^53 for any chain that fits in memory: exact as doubles.
  return {static_cast<double>(n_),           static_cast<double>(n_draws_),
          static_cast<double>(n_beta_),      static_cast<double>(n_beta_low_),
          static_cast<double>(n_handoffs_),  static_cast<double>(last_heaviest_),
          sum_max_w_,                        sum_sq_w_};
}

void WeightDegeneracy::restore(std::span<const double> state) {
  if (state.size() != kStateSize || state[0] != static_cast<double>(n_))
    throw std::invalid_argument(fmt::format(
        "WeightDegeneracy::restore: expected {} numbers for {} pseudo-samples, got {}", kStateSize,
        n_, state.size()));
  n_draws_ = static_cast<std::int64_t>(state[1]);
  n_beta_ = static_cast<std::int64_t>(state[2]);
  n_beta_low_ = static_cast<std::int64_t>(state[3]);
  n_handoffs_ = static_cast<std::int64_t>(state[4]);
  last_heaviest_ = static_cast<int>(state[5]);
  sum_max_w_ = state[6];
  sum_sq_w_ = state[7];
}

std::optional<std::string> degeneracy_warning(const WeightDegeneracyStats& s,
                                              const DegeneracyThresholds& t) {
  if (s.n_pseudo < 2 || static_cast<double>(s.n_draws) < t.min_draws) return std::nullopt;
  const bool degenerate = s.mean_max_weight > t.max_weight && s.ess_per_draw < t.ess_per_draw &&
                          s.weight_handoff_rate < t.handoff_rate;
  if (!degenerate) return std::nullopt;
  std::string beta;
  if (std::isfinite(s.beta_at_lower_fraction))
    beta = fmt::format(", {:.0f}% of pseudo-samples at beta's lower bound",
                       100.0 * s.beta_at_lower_fraction);
  return fmt::format(
      "pseudo-extended weights degenerate: one pseudo-sample carries the draws (mean largest "
      "weight {:.3f}, Kish ESS {:.3f} per draw of N = {}, heaviest pseudo-sample changes in "
      "{:.2g}% of draws{}), so the chain moves like plain HMC on the target and may miss modes; "
      "leave beta_instrumental.a unset (its default depends on the dimension d) or set it near "
      "d/2 + 1, or raise beta_lower (docs/pseudo-extended-defaults.md)",
      s.mean_max_weight, s.ess_per_draw, s.n_pseudo, 100.0 * s.weight_handoff_rate, beta);
}

}  // namespace pemc::estimators
