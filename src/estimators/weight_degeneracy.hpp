#pragma once
// Weight degeneracy of a pseudo-extended chain (Nemeth et al. 2019).
//
// A pseudo-extended draw stands for its N pseudo-samples x_1..x_N with the self-normalised weights
// w_i ∝ gamma(x_i) pi(beta_i) / q(x_i, beta_i) of Theorem 2.1 (eq. (3)). The sampler moves
// between modes only through these weights: pseudo-samples at small beta_i roam (their marginal
// is q, eq. (7)), and a mode switch happens when the weight passes to one of them. When q puts
// nearly all of its mass at beta's lower bound (a flat g(beta) in moderate dimension: q(beta) ∝
// Z(beta) g(beta) ~ beta^(-d/2)), the N - 1 instrumental pseudo-samples sit far out at beta ≈
// beta_lower, the one pseudo-sample that carries the weight is an ordinary HMC chain on the target,
// and the run is plain HMC at N times the cost — with no error anywhere. This accumulator measures
// that, over a chain's post-warmup draws:
//
//   mean_max_weight      mean over draws of max_i w_i (1/N for equal weights, 1 when one
//                        pseudo-sample carries every draw);
//   ess_per_draw         n_draws / sum_t sum_i w_ti^2: the Kish ESS of all the chain's weighted
//                        samples (what `pemc-report summarize` shows as kish_ess) per draw, in
//                        [1, N];
//   beta_at_lower_fraction  the fraction of (draw, pseudo-sample) pairs whose beta_i lies in the
//                        lowest kLowerBetaBand of (beta_lower, beta_upper) ("pinned" at the bound);
//   weight_handoff_rate  the fraction of consecutive draws whose heaviest pseudo-sample differs
//                        (how often the weight moves to another pseudo-sample at all).
//
// degeneracy_warning() turns the first three into a verdict (thresholds and the measurements
// behind them at DegeneracyThresholds and in docs/pseudo-extended-defaults.md). The beta fraction
// is reported, not judged: it was 0.70-0.80 in every failing chain measured but up to 0.33 in good
// ones, and cold-heavy temperatures are what a widely separated target needs (the 2-D Kou mixture
// and a 2-D 4-mode mixture mix well with 15-25% of their pseudo-samples there). The sums are
// plain doubles and integers, saved and restored exactly (a resumed chain reports the same
// statistics).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pemc::estimators {

// "Pinned at the lower bound": beta_i < beta_lower + kLowerBetaBand (beta_upper - beta_lower).
inline constexpr double kLowerBetaBand = 0.01;

struct WeightDegeneracyStats {
  std::int64_t n_draws = 0;
  int n_pseudo = 0;
  double mean_max_weight = 0.0;
  double ess_per_draw = 0.0;
  double beta_at_lower_fraction = 0.0;  // NaN when beta is fixed (no betas given)
  double weight_handoff_rate = 0.0;     // NaN with fewer than two draws
};

class WeightDegeneracy {
 public:
  // n_pseudo >= 1; beta_lower < beta_upper (the sampled range; ignored when add() gets no betas).
  WeightDegeneracy(int n_pseudo, double beta_lower, double beta_upper);

  // One draw: its N unnormalised log weights (a_i of pseudo_extended_target.hpp) and its N betas
  // (empty for fixed beta). Normalised here by log-sum-exp. A draw whose log weights are all
  // -inf or any is NaN (never the case at a valid chain state) is skipped. Throws
  // std::invalid_argument when the sizes differ from n_pseudo.
  void add(std::span<const double> log_weights, std::span<const double> betas);

  WeightDegeneracyStats stats() const;
  std::int64_t n_draws() const { return n_draws_; }

  // The running sums, for checkpoints: restore(save()) continues exactly. restore throws
  // std::invalid_argument for a vector of the wrong size.
  std::vector<double> save() const;
  void restore(std::span<const double> state);

 private:
  int n_ = 0;
  double lo_ = 0.0, hi_ = 1.0;
  std::int64_t n_draws_ = 0;
  std::int64_t n_beta_ = 0;       // (draw, pseudo-sample) pairs with a beta
  std::int64_t n_beta_low_ = 0;   // ... of them in the lower band
  std::int64_t n_handoffs_ = 0;
  int last_heaviest_ = -1;
  double sum_max_w_ = 0.0;
  double sum_sq_w_ = 0.0;
  std::vector<double> w_;  // scratch
};

// Thresholds of the verdict (see degeneracy_warning), from per-chain measurements of separated
// 4-mode mixtures (tests/statistical/pe_instrumental_scan.py, docs/pseudo-extended-defaults.md:
// 264 chains of 10,000 draws, d = 2 .. 20, N = 5 and 10, g(beta) = Beta(a, 1) for many a). The 48
// chains that stayed in one mode had weight_handoff_rate <= 2e-4 (at most 2 handoffs), 1 -
// mean_max_weight <= 3.8e-4 and ess_per_draw - 1 <= 4.3e-4; among the 216 others (all but a few
// found every mode) the smallest values were weight_handoff_rate 6.8e-3, 1 - mean_max_weight
// 1.7e-3 and ess_per_draw - 1 2.5e-3. The handoff rate separates the groups best (a factor 34):
// its threshold leaves a factor 10 to the failing chains and 3.4 to the good ones. The weight
// conditions only keep a chain whose weights are spread out but whose heaviest pseudo-sample
// happens not to change from being called degenerate; they leave a factor >= 23 to the failing
// chains.
struct DegeneracyThresholds {
  double min_draws = 100;         // fewer draws: no verdict
  double handoff_rate = 0.002;    // weight_handoff_rate below this ...
  double max_weight = 0.99;       // ... and mean_max_weight above this ...
  double ess_per_draw = 1.01;     // ... and ess_per_draw below this: degenerate
};

// A one-line warning when the chain's weights are degenerate (the draws are effectively those of
// one pseudo-sample that never hands its weight on), with the numbers and what to change;
// nullopt otherwise (also for N = 1 and short chains).
std::optional<std::string> degeneracy_warning(const WeightDegeneracyStats& s,
                                              const DegeneracyThresholds& t = {});

}  // namespace pemc::estimators
