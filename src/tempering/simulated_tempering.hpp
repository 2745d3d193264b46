#pragma once
// Simulated tempering (Marinari & Parisi 1992) as in Graham's thesis, Section 2.3.3.
//
// Joint target on (x, k), k = 0..K-1 (thesis eq. (2.65)):
//     p(x, k) ∝ exp(-beta_k phi(x) - (1 - beta_k) psi(x) + w_k) = exp(-psi(x) - beta_k V(x) + w_k).
// One transition is Algorithm 7: T1 = n_local_steps of the local kernel at beta_k (x | k; at
// beta_0 = 0 with a reference: an exact draw from it), then
// T2 = an independent draw of k from its conditional (eq. (2.66)),
//     p(k | x) = exp(-beta_k V(x) + w_k) / sum_j exp(-beta_j V(x) + w_j)   (O(K) per draw).
//
// Estimators (post-warmup, with the weights then fixed):
//   Z (Rao-Blackwellised, eq. (2.73)): Z = exp(w_0 - w_{K-1}) sum_n p(K-1 | x_n) / sum_n p(0 | x_n),
//     with a normalised psi and beta_0 = 0; otherwise the same expression estimates
//     Z(1) / Z(beta_0) and is reported as log_z_ratio;
//   its standard error: with a reference at beta_0 = 0 and exact_reference_draws, every
//     transition that starts at k = 0 draws x afresh from the reference, so the chain regenerates
//     there and the stretches between such transitions (tours) are independent: the SE is the
//     delta method over tours (estimators/regenerative_log_ratio.hpp). Fixed batches cut through
//     the long excursions in which the level process holds the chain at the top (in a mode found
//     at beta = 1), so neighbouring batches are correlated and their batch-means SE understates the
//     error where such excursions carry the estimate (docs/log-z-calibration.md). The tours' sums
//     also give a Pareto k-hat: where a rare kind of tour carries the sums, no SE from the chain's
//     tours can be right (estimators/log_z_trust.hpp flags it). Without regeneration (no
//     reference, or local moves at k = 0) the SE is the delta method over batch means
//     (BatchedLogSums::log_ratio_se);
//   target expectations: self-normalised weights p(K-1 | x_n) on every x_n (CT paper eq. (21) in
//     the discrete case) — SimulatedTemperingSpace::weighted_view gives them to the draw records.
// Weights: iterative pilot runs during warmup (thesis p. 52; Geyer & Thompson 1995) with the
// Rao-Blackwellised marginal estimates p^_k = mean_n p(k | x_n) instead of counts (they stay
// informative for levels a pilot never visits): after each pilot phase w_k <- w_k - log p^_k,
// shifted so that w_0 = 0. Phases have doubling lengths starting at first_pilot_length.
//
// The chain's state is (x, k) with k stored as the last coordinate (a double holding an integer):
// SimulatedTemperingSpace is the Target over that space for the chain driver.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "estimators/regenerative_log_ratio.hpp"
#include "estimators/weighted_covariance.hpp"
#include "kernels/kernel.hpp"
#include "tempering/batched_log_sums.hpp"
#include "tempering/level_kernels.hpp"
#include "tempering/tempered_target.hpp"

namespace pemc::tempering {

class SimulatedTemperingSpace final : public targets::Target {
 public:
  // Throws ConfigError for a bad ladder or weights (log_weights: empty = zeros, else K entries).
  SimulatedTemperingSpace(targets::TargetPtr target, ReferencePtr reference,
                          std::vector<double> betas, std::vector<double> log_weights);

  int dim() const override { return target_->dim() + 1; }
  std::string name() const override { return "simulated_tempering"; }
  // -log p(x, k) = psi + beta_k V - w_k; +inf for a last coordinate that is not a level index.
  double potential(ConstVectorRef xk) const override;
  double potential_and_gradient(ConstVectorRef xk, VectorRef grad) const override;
  int original_dim() const override { return target_->dim(); }
  // samples = x, log_weights = {log p(K-1 | x)}, extra = {k, beta_k}.
  bool weighted_view(ConstVectorRef xk, targets::WeightedView& out) const override;
  // x from the config's init; k = K-1.
  void initial_point(const std::function<void(VectorRef)>& draw_original,
                     VectorRef xk) const override;

  int n_levels() const { return static_cast<int>(betas_.size()); }
  const std::vector<double>& betas() const { return betas_; }
  const std::vector<double>& log_weights() const { return log_weights_; }
  void set_log_weights(std::vector<double> w);
  // log p(k | x) for every k given V(x) (out: K entries, log-normalised).
  void log_conditional(double v, std::vector<double>& out) const;
  // The level index stored in xk, or -1 if it is not one.
  int level(ConstVectorRef xk) const;
  const targets::TargetPtr& target() const { return target_; }
  const ReferencePtr& reference() const { return reference_; }

 private:
  targets::TargetPtr target_;
  ReferencePtr reference_;
  std::vector<double> betas_;
  std::vector<double> log_weights_;
  mutable std::vector<double> scratch_;
  mutable PathPoint point_;
};

struct SimulatedTemperingOptions {
  int n_local_steps = 1;
  bool adapt_weights = true;
  int first_pilot_length = 50;  // warmup transitions in the first pilot phase (then doubling)
  int n_kernel_bins = 16;       // local kernels shared by contiguous bins of levels
  int n_batches = 32;
  // At k = 0 with beta_0 = 0 and a reference, T1 is an exact independent draw from the reference
  // (invariant for p(x | k = 0) = exp(-psi)) instead of local steps.
  bool exact_reference_draws = true;
};

class SimulatedTemperingKernel final : public kernels::Kernel {
 public:
  SimulatedTemperingKernel(std::shared_ptr<SimulatedTemperingSpace> space,
                           const LocalKernelFactory& factory, SimulatedTemperingOptions options);

  std::string name() const override { return "simulated_tempering"; }
  // stats: the local steps' accept_stat (mean), n_leapfrog, step_size at the level they ran at;
  // accepted = x moved.
  kernels::TransitionStats transition(kernels::ChainState& state, rng::Stream& stream) override;
  void begin_warmup(std::int64_t n_warmup) override;
  void end_warmup() override;
  double step_size() const override { return levels_.step_size(space_->n_levels() - 1); }
  // log_z (or log_z_ratio) by eq. (2.73) with log_z_se: over log_z_tours regeneration tours, with
  // their log_z_tour_pareto_k (when defined), or else over log_z_batches full batches;
  // log_z_count by eq. (2.71) when both end levels were visited; n_levels; top_fraction
  // (share of draws with k = K-1);
  // round_trips (k: 0 -> K-1 -> 0) and round_trip_rate per transition; log_z_weights = w_0 -
  // w_{K-1} (the adapted weights' own log Z guess: p(0) = p(K-1) exactly when it is right).
  void report_estimates(std::map<std::string, double>& estimates) const override;
  std::string fit_description() const override { return describe_fitted(space_->reference().get()); }

  // Target moments with the self-normalised weights p(K-1 | x_n) over every post-warmup x_n
  // (the discrete form of CT eq. (21)), accumulated once track_moments() was called.
  void track_moments() override;
  bool report_moments(Vector& mean, Matrix& covariance) const override;
  // The reference (beta_0 = 0 end of the path), when there is one.
  bool report_base(Vector& mean, Matrix& covariance, double& log_zeta) const override;

  double log_z() const;
  std::int64_t round_trips() const { return round_trips_.round_trips(); }

  // Checkpoint: level weights, pilot phase, local kernels, estimators and the cached path point.
  bool can_checkpoint() const override { return levels_.can_checkpoint(); }
  void save_state(pemc::v1::KernelState& state) const override;
  void restore_state(const pemc::v1::KernelState& state) override;

 private:
  void update_weights();
  // One transition's parts: T1 moves x at level k (local steps, or an exact reference draw at
  // beta = 0), T2 draws the new level from p(k | x) (leaving log p(k | x) in log_cond_); then the
  // warmup's pilot sums or the sampling estimators record the round, and the state is set.
  void move_x(int k, rng::Stream& stream, kernels::TransitionStats& stats);
  int draw_level(rng::Stream& stream);
  void record_warmup_round();
  void record_sample(int k_new, bool regenerated);
  // Whether T1 at level 0 is an exact draw from the reference (the chain regenerates there).
  bool regenerates_at_bottom() const;
  void set_state(int k_new, kernels::ChainState& state) const;

  std::shared_ptr<SimulatedTemperingSpace> space_;
  SimulatedTemperingOptions options_;
  LevelKernels levels_;
  int d_;
  PathPoint point_;
  bool have_point_ = false;
  std::vector<double> log_cond_;

  bool warmup_ = false;
  std::int64_t warmup_iter_ = 0, next_pilot_end_ = 0, pilot_length_ = 0, pilot_n_ = 0;
  std::vector<double> pilot_lse_;

  std::int64_t n_samples_ = 0, count_top_ = 0, count_bottom_ = 0;
  std::optional<BatchedLogSums> rb_;
  // The same two terms per regeneration tour; unset when the chain does not regenerate, or when it
  // resumed from a checkpoint written without them (the SE is then the batches').
  std::optional<estimators::RegenerativeLogRatio> tours_;
  RoundTripCounter round_trips_{1};
  std::vector<int> level_buf_{0};
  bool track_moments_ = false;
  estimators::WeightedCovariance moments_;
};

}  // namespace pemc::tempering
