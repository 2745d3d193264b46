#pragma once
// Annealed importance sampling (Neal 2001; CT paper Section 3, eq. (10)) as a Kernel: one
// transition is one complete, independent annealing run.
//
// With the ladder 0 = beta_0 < beta_1 < ... < beta_M = 1 and pi_beta ∝ exp(-psi - beta V):
//   x^(0) ~ exp(-psi) (the normalised reference, sampled exactly);
//   x^(n) ~ T_n(. | x^(n-1)), n = 1..M-1, T_n = n_local_steps of the local kernel at beta_n;
//   log r = sum_{n=0}^{M-1} log pi(x^(n) | beta_{n+1}) - log pi(x^(n) | beta_n)
//         = -sum_{n=0}^{M-1} (beta_{n+1} - beta_n) V(x^(n))                          (eq. (10))
// r is an unbiased estimate of Z and an importance weight of x^(M-1) for the target. The run then
// applies n_local_steps of the beta = 1 kernel to x^(M-1); a pi_1-invariant move keeps (x, r) a
// properly weighted pair, and the returned point is less tied to the annealing path.
//
// The chain's state is (x, log r) with log r stored as the last coordinate:
// AnnealedImportanceSpace::weighted_view turns each draw into one weighted sample, so the report's
// weighted moments are the AIS estimates of target expectations. Per chain (report_estimates):
// log_z = log mean r over the post-warmup runs, log_z_se (delta method: sd(r) / (mean(r) sqrt n)),
// ess = (sum r)^2 / sum r^2 (Kish), ess_fraction = ess / n, n_runs, log_weight_max, and
// log_weight_pareto_k (from 25 runs on), the Pareto k-hat of the weights' upper tail
// (estimators/pareto_tail.hpp): the delta-method SE assumes a finite variance of r, which
// k-hat > 1/2 denies, and above min(1 - 1/log10 n, 0.7) log Z is dominated by runs not drawn yet
// (estimators/log_z_trust.hpp flags it). The post-warmup log weights are kept for it (8 bytes per
// run).
// Warmup runs adapt the local kernels' step sizes (levels share kernels in bins, level_kernels.hpp)
// and are excluded from the estimates (their kernels changed within the run).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "estimators/weighted_covariance.hpp"
#include "kernels/kernel.hpp"
#include "tempering/level_kernels.hpp"
#include "tempering/tempered_target.hpp"

namespace pemc::tempering {

class AnnealedImportanceSpace final : public targets::Target {
 public:
  explicit AnnealedImportanceSpace(targets::TargetPtr target) : target_(std::move(target)) {}
  int dim() const override { return target_->dim() + 1; }
  std::string name() const override { return "annealed_importance"; }
  // phi(x); the log-weight coordinate does not enter (zero gradient).
  double potential(ConstVectorRef xw) const override;
  double potential_and_gradient(ConstVectorRef xw, VectorRef grad) const override;
  int original_dim() const override { return target_->dim(); }
  // samples = x, log_weights = {log r}.
  bool weighted_view(ConstVectorRef xw, targets::WeightedView& out) const override;
  void initial_point(const std::function<void(VectorRef)>& draw_original,
                     VectorRef xw) const override;

 private:
  targets::TargetPtr target_;
};

struct AnnealedImportanceOptions {
  std::vector<double> betas;  // 0 = beta_0 < ... < beta_M = 1 (M >= 1)
  int n_local_steps = 1;
  int n_kernel_bins = 16;
};

class AnnealedImportanceKernel final : public kernels::Kernel {
 public:
  // reference is required (AIS starts from exact reference draws).
  AnnealedImportanceKernel(targets::TargetPtr target, ReferencePtr reference,
                           const LocalKernelFactory& factory, AnnealedImportanceOptions options);

  std::string name() const override { return "annealed_importance"; }
  // stats: accept_stat = mean over the run's local transitions; n_leapfrog = their total;
  // accepted = true (every run is a fresh sample); step_size at beta = 1.
  kernels::TransitionStats transition(kernels::ChainState& state, rng::Stream& stream) override;
  void begin_warmup(std::int64_t n_warmup) override;
  void end_warmup() override;
  double step_size() const override { return levels_.step_size(n_levels() - 1); }
  void report_estimates(std::map<std::string, double>& estimates) const override;
  std::string fit_description() const override { return describe_fitted(reference_.get()); }
  // The ais_tail_size(n_runs) largest post-warmup log weights, descending.
  std::vector<double> largest_log_weights() const override;

  // Target moments with the runs' importance weights r (the same weights as log_z), accumulated
  // once track_moments() was called.
  void track_moments() override;
  bool report_moments(Vector& mean, Matrix& covariance) const override;
  bool report_base(Vector& mean, Matrix& covariance, double& log_zeta) const override;

  int n_levels() const { return static_cast<int>(options_.betas.size()); }
  std::int64_t n_runs() const { return n_runs_; }
  double log_z() const;
  double log_z_se() const;
  double ess() const;
  double pareto_k() const;

  // Checkpoint: local kernels and the importance-weight sums.
  bool can_checkpoint() const override { return levels_.can_checkpoint(); }
  void save_state(pemc::v1::KernelState& state) const override;
  void restore_state(const pemc::v1::KernelState& state) override;

 private:
  targets::TargetPtr target_;
  ReferencePtr reference_;
  AnnealedImportanceOptions options_;
  LevelKernels levels_;
  bool warmup_ = false;
  PathPoint point_;
  std::int64_t n_runs_ = 0;
  double lse_w_, lse_w2_, max_w_;
  std::vector<double> log_weights_;  // every post-warmup run's log r, in order
  bool track_moments_ = false;
  estimators::WeightedCovariance moments_;
};

}  // namespace pemc::tempering
