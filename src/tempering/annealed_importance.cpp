#include "tempering/annealed_importance.hpp"

#include "adapt/state_io.hpp"

#include <algorithm>
#include <functional>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "estimators/pareto_tail.hpp"
#include "estimators/pooled_ais_weights.hpp"
#include "tempering/running_moments.hpp"
#include "tempering/schedule.hpp"

namespace pemc::tempering {

double AnnealedImportanceSpace::potential(ConstVectorRef xw) const {
  return target_->potential(xw.head(target_->dim()));
}

double AnnealedImportanceSpace::potential_and_gradient(ConstVectorRef xw, VectorRef grad) const {
  const int d = target_->dim();
  const double u = target_->potential_and_gradient(xw.head(d), grad.head(d));
  grad[d] = 0.0;
  return u;
}

bool AnnealedImportanceSpace::weighted_view(ConstVectorRef xw, targets::WeightedView& out) const {
  const int d = target_->dim();
  out.samples = xw.head(d);
  out.log_weights.resize(1);
  out.log_weights[0] = xw[d];
  out.extra.clear();
  return true;
}

void AnnealedImportanceSpace::initial_point(const std::function<void(VectorRef)>& draw_original,
                                            VectorRef xw) const {
  const int d = target_->dim();
  auto head = xw.head(d);
  draw_original(head);
  xw[d] = 0.0;
}

AnnealedImportanceKernel::AnnealedImportanceKernel(targets::TargetPtr target,
                                                   ReferencePtr reference,
                                                   const LocalKernelFactory& factory,
                                                   AnnealedImportanceOptions options)
    : target_(std::move(target)),
      reference_(std::move(reference)),
      options_(std::move(options)),
      levels_(target_, reference_, factory, static_cast<int>(options_.betas.size()),
              options_.n_kernel_bins),
      lse_w_(-kInf),
      lse_w2_(-kInf),
      max_w_(-kInf) {
  if (!reference_)
    throw ConfigError("annealed_importance: a reference is required (AIS starts from its draws)");
  if (reference_->density->dim() != target_->dim())
    throw ConfigError("annealed_importance.reference: dimension " +
                      std::to_string(reference_->density->dim()) + " differs from the target's " +
                      std::to_string(target_->dim()));
  try {
    check_ladder(options_.betas, "annealed_importance ladder");
  } catch (const std::invalid_argument& e) {
    throw ConfigError(e.what());
  }
  if (options_.betas.front() != 0.0)
    throw ConfigError("annealed_importance ladder: the first inverse temperature must be 0");
  if (options_.n_local_steps < 1)
    throw ConfigError("annealed_importance.n_local_steps must be >= 1");
}

void AnnealedImportanceKernel::begin_warmup(std::int64_t n_warmup) {
  warmup_ = n_warmup > 0;
  if (!warmup_) return;
  // Levels 1..M (the final beta = 1 moves included) in bins: at most ceil(M / bins) + 1 levels
  // per bin, n_local_steps transitions each, per run.
  const std::int64_t per_bin =
      (static_cast<std::int64_t>(n_levels()) / levels_.n_bins() + 1) * options_.n_local_steps;
  levels_.begin_warmup(n_warmup * per_bin);
}

void AnnealedImportanceKernel::end_warmup() {
  if (!warmup_) return;
  levels_.end_warmup();
  warmup_ = false;
}

kernels::TransitionStats AnnealedImportanceKernel::transition(kernels::ChainState& state,
                                                              rng::Stream& stream) {
  const int d = target_->dim();
  const auto& b = options_.betas;
  const int m = n_levels() - 1;
  kernels::TransitionStats stats;
  // x^(0) from the reference; rejected (redrawn) in the rare case phi is not finite there, which
  // restricts the reference to the target's support, as every tempered density is.
  Vector x0(d);
  for (int attempt = 0;; ++attempt) {
    reference_->density->sample(stream, x0);
    evaluate_path_point(*target_, reference_.get(), x0, point_);
    ++stats.n_gradient_evals;
    if (std::isfinite(point_.phi)) break;
    if (attempt == 1000)
      throw NumericalError("annealed_importance: 1000 reference draws without a finite potential");
  }
  double log_w = -(b[1] - b[0]) * point_.v();
  double sum_accept = 0.0;
  int n_moves = 0;
  for (int n = 1; n <= m; ++n) {
    const auto run = levels_.run(n, b[n], point_, options_.n_local_steps, stream);
    sum_accept += run.sum_accept;
    n_moves += options_.n_local_steps;
    stats.n_leapfrog += run.n_leapfrog;
    stats.divergent |= run.divergent;
    stats.nonfinite |= run.nonfinite;
    stats.n_gradient_evals += run.n_gradient_evals;
    if (n < m) log_w -= (b[n + 1] - b[n]) * point_.v();
  }
  if (std::isnan(log_w)) log_w = -kInf;
  stats.accept_stat = n_moves > 0 ? sum_accept / n_moves : 0.0;
  stats.accepted = true;
  stats.step_size = levels_.step_size(m);

  if (!warmup_) {
    ++n_runs_;
    lse_w_ = log_add_exp(lse_w_, log_w);
    lse_w2_ = log_add_exp(lse_w2_, 2.0 * log_w);
    if (log_w > max_w_) max_w_ = log_w;
    log_weights_.push_back(log_w);
    if (track_moments_) add_weighted(moments_, point_.x, log_w);
  }
  state.x.resize(d + 1);
  state.x.head(d) = point_.x;
  state.x[d] = log_w;
  state.potential = point_.phi;
  state.grad.resize(d + 1);
  state.grad.head(d) = point_.grad_phi;
  state.grad[d] = 0.0;
  return stats;
}

double AnnealedImportanceKernel::log_z() const {
  if (n_runs_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return lse_w_ - std::log(static_cast<double>(n_runs_));
}

double AnnealedImportanceKernel::ess() const {
  if (n_runs_ == 0 || lse_w_ == -kInf) return 0.0;
  return std::exp(2.0 * lse_w_ - lse_w2_);
}

double AnnealedImportanceKernel::log_z_se() const {
  // Var(r) / mean(r)^2 = (n / ess - 1) n / (n - 1) for the sample variance; divide by n.
  if (n_runs_ < 2) return std::numeric_limits<double>::quiet_NaN();
  const double n = static_cast<double>(n_runs_);
  const double rel_var = std::max(0.0, n / ess() - 1.0) / (n - 1.0);
  return std::sqrt(rel_var);
}

double AnnealedImportanceKernel::pareto_k() const {
  return estimators::pareto_k_hat(log_weights_);
}

std::vector<double> AnnealedImportanceKernel::largest_log_weights() const {
  std::vector<double> finite;
  for (double w : log_weights_)
    if (std::isfinite(w)) finite.push_back(w);
  const auto m = std::min(estimators::ais_tail_size(static_cast<double>(n_runs_)), finite.size());
  std::partial_sort(finite.begin(), finite.begin() + static_cast<std::ptrdiff_t>(m), finite.end(),
                    std::greater<>());
  finite.resize(m);
  return finite;
}

void AnnealedImportanceKernel::track_moments() {
  track_moments_ = true;
  moments_.resize(target_->dim());
}

bool AnnealedImportanceKernel::report_moments(Vector& mean, Matrix& covariance) const {
  return weighted_moments(track_moments_, moments_, mean, covariance);
}

bool AnnealedImportanceKernel::report_base(Vector& mean, Matrix& covariance,
                                           double& log_zeta) const {
  return reference_moments(reference_.get(), mean, covariance, log_zeta);
}

void AnnealedImportanceKernel::report_estimates(std::map<std::string, double>& e) const {
  e["log_z"] = log_z();
  e["log_z_se"] = log_z_se();
  e["ess"] = ess();
  e["ess_fraction"] = n_runs_ > 0 ? ess() / static_cast<double>(n_runs_) : 0.0;
  e["n_runs"] = static_cast<double>(n_runs_);
  e["n_levels"] = n_levels();
  e["log_weight_max"] = max_w_;
  // Undefined below 25 runs (too few tail weights): left out rather than written as NaN.
  if (const double k = pareto_k(); std::isfinite(k)) e["log_weight_pareto_k"] = k;

}

// ---- checkpoint (added methods) ----

void AnnealedImportanceKernel::save_state(pemc::v1::KernelState& state) const {
  state.Clear();
  state.set_kind(name());
  levels_.save_state(adapt::put_child(state, "levels"));
  adapt::put_int(state, "warmup", warmup_ ? 1 : 0);
  adapt::put_int(state, "n_runs", n_runs_);
  adapt::put_real(state, "lse_w", lse_w_);
  adapt::put_real(state, "lse_w2", lse_w2_);
  adapt::put_real(state, "max_w", max_w_);
  adapt::put_reals(state, "log_weights", log_weights_);
  if (track_moments_) save_moments(adapt::put_child(state, "moments"), moments_);
}

void AnnealedImportanceKernel::restore_state(const pemc::v1::KernelState& state) {
  adapt::expect_kind(state, name());
  levels_.restore_state(adapt::get_child(state, "levels"));
  warmup_ = adapt::get_int(state, "warmup") != 0;
  n_runs_ = adapt::get_int(state, "n_runs");
  lse_w_ = adapt::get_real(state, "lse_w");
  lse_w2_ = adapt::get_real(state, "lse_w2");
  max_w_ = adapt::get_real(state, "max_w");
  log_weights_ = adapt::get_real_vector(state, "log_weights");
  if (static_cast<std::int64_t>(log_weights_.size()) != n_runs_)
    adapt::state_error(state, "log_weights", "holds " + std::to_string(log_weights_.size()) +
                                                 " runs, n_runs is " + std::to_string(n_runs_));
  if (track_moments_) restore_moments(state, "moments", moments_);
}

}  // namespace pemc::tempering
