#include "tempering/simulated_tempering.hpp"

#include "adapt/state_io.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "tempering/running_moments.hpp"
#include "tempering/schedule.hpp"

namespace pemc::tempering {

SimulatedTemperingSpace::SimulatedTemperingSpace(targets::TargetPtr target, ReferencePtr reference,
                                                 std::vector<double> betas,
                                                 std::vector<double> log_weights)
    : target_(std::move(target)), reference_(std::move(reference)), betas_(std::move(betas)) {
  try {
    check_ladder(betas_, "simulated_tempering ladder");
  } catch (const std::invalid_argument& e) {
    throw ConfigError(e.what());
  }
  if (!reference_ && !(betas_.front() > 0.0))
    throw ConfigError("simulated_tempering: without a reference the lowest beta must be > 0");
  if (reference_ && reference_->density->dim() != target_->dim())
    throw ConfigError("simulated_tempering.reference: dimension " +
                      std::to_string(reference_->density->dim()) + " differs from the target's " +
                      std::to_string(target_->dim()));
  if (log_weights.empty()) log_weights.assign(betas_.size(), 0.0);
  set_log_weights(std::move(log_weights));
}

void SimulatedTemperingSpace::set_log_weights(std::vector<double> w) {
  if (w.size() != betas_.size())
    throw ConfigError("simulated_tempering.log_weights: expected " + std::to_string(betas_.size()) +
                      " numbers (one per level), got " + std::to_string(w.size()));
  for (std::size_t i = 0; i < w.size(); ++i)
    if (!std::isfinite(w[i]))
      throw ConfigError("simulated_tempering.log_weights[" + std::to_string(i) + "] is not finite");
  log_weights_ = std::move(w);
}

int SimulatedTemperingSpace::level(ConstVectorRef xk) const {
  const double k = xk[xk.size() - 1];
  if (!(k >= 0.0) || !(k < static_cast<double>(betas_.size())) || k != std::floor(k)) return -1;
  return static_cast<int>(k);
}

void SimulatedTemperingSpace::log_conditional(double v, std::vector<double>& out) const {
  const std::size_t k = betas_.size();
  out.resize(k);
  for (std::size_t j = 0; j < k; ++j) {
    const double t = -betas_[j] * v + log_weights_[j];
    out[j] = std::isnan(t) ? -kInf : t;
  }
  const double norm = log_sum_exp(out);
  for (auto& o : out) o -= norm;
}

double SimulatedTemperingSpace::potential(ConstVectorRef xk) const {
  const int k = level(xk);
  if (k < 0) return kInf;
  const auto x = xk.head(target_->dim());
  const double phi = target_->potential(x);
  const double psi = reference_ ? reference_->density->potential(x) : 0.0;
  return betas_[k] * phi + (1.0 - betas_[k]) * psi - log_weights_[k];
}

double SimulatedTemperingSpace::potential_and_gradient(ConstVectorRef xk, VectorRef grad) const {
  const int d = target_->dim();
  const int k = level(xk);
  if (k < 0) {
    grad.setZero();
    return kInf;
  }
  evaluate_path_point(*target_, reference_.get(), xk.head(d), point_);
  grad.head(d) = betas_[k] * point_.grad_phi + (1.0 - betas_[k]) * point_.grad_psi;
  grad[d] = 0.0;
  return point_.potential(betas_[k]) - log_weights_[k];
}

bool SimulatedTemperingSpace::weighted_view(ConstVectorRef xk, targets::WeightedView& out) const {
  const int d = target_->dim();
  const int k = level(xk);
  const auto x = xk.head(d);
  out.samples = x;
  out.log_weights.resize(1);
  const double phi = target_->potential(x);
  const double psi = reference_ ? reference_->density->potential(x) : 0.0;
  log_conditional(phi - psi, scratch_);
  out.log_weights[0] = scratch_.back();
  out.extra = {static_cast<double>(k), k >= 0 ? betas_[k] : std::numeric_limits<double>::quiet_NaN()};
  return true;
}

void SimulatedTemperingSpace::initial_point(const std::function<void(VectorRef)>& draw_original,
                                            VectorRef xk) const {
  const int d = target_->dim();
  auto head = xk.head(d);
  draw_original(head);
  xk[d] = static_cast<double>(betas_.size() - 1);
}

SimulatedTemperingKernel::SimulatedTemperingKernel(std::shared_ptr<SimulatedTemperingSpace> space,
                                                   const LocalKernelFactory& factory,
                                                   SimulatedTemperingOptions options)
    : space_(std::move(space)),
      options_(options),
      levels_(space_->target(), space_->reference(), factory, space_->n_levels(),
              options.n_kernel_bins),
      d_(space_->original_dim()) {
  if (options_.n_local_steps < 1)
    throw ConfigError("simulated_tempering.n_local_steps must be >= 1");
  if (options_.first_pilot_length < 1)
    throw ConfigError("simulated_tempering.first_pilot_length must be >= 1");
  if (options_.n_batches < 2) throw ConfigError("simulated_tempering.n_batches must be >= 2");
  rb_.emplace(2, options_.n_batches);
  round_trips_.reset(1);
}

void SimulatedTemperingKernel::begin_warmup(std::int64_t n_warmup) {
  warmup_ = n_warmup > 0;
  if (!warmup_) return;
  warmup_iter_ = 0;
  pilot_length_ = options_.first_pilot_length;
  next_pilot_end_ = pilot_length_;
  pilot_n_ = 0;
  pilot_lse_.assign(space_->n_levels(), -kInf);
  levels_.begin_warmup(n_warmup * options_.n_local_steps);
}

void SimulatedTemperingKernel::end_warmup() {
  if (!warmup_) return;
  // A final, partial pilot phase still improves the weights if it is not too short.
  if (options_.adapt_weights && pilot_n_ >= options_.first_pilot_length) update_weights();
  levels_.end_warmup();
  warmup_ = false;
  n_samples_ = count_top_ = count_bottom_ = 0;
  rb_.emplace(2, options_.n_batches);
  tours_.reset();
  if (regenerates_at_bottom()) tours_.emplace();
  round_trips_.reset(1);
  if (track_moments_) moments_.resize(d_);
}

void SimulatedTemperingKernel::track_moments() {
  track_moments_ = true;
  moments_.resize(d_);
}

bool SimulatedTemperingKernel::report_moments(Vector& mean, Matrix& covariance) const {
  return weighted_moments(track_moments_, moments_, mean, covariance);
}

bool SimulatedTemperingKernel::report_base(Vector& mean, Matrix& covariance,
                                           double& log_zeta) const {
  return reference_moments(space_->reference().get(), mean, covariance, log_zeta);
}

void SimulatedTemperingKernel::update_weights() {
  // w_k <- w_k - log p^_k (p^_k: Rao-Blackwellised marginal of k over the pilot), then w_0 = 0.
  std::vector<double> w = space_->log_weights();
  const double log_n = std::log(static_cast<double>(pilot_n_));
  for (std::size_t k = 0; k < w.size(); ++k) w[k] -= pilot_lse_[k] - log_n;
  const double w0 = w[0];
  for (auto& v : w) v -= w0;
  space_->set_log_weights(std::move(w));
  std::fill(pilot_lse_.begin(), pilot_lse_.end(), -kInf);
  pilot_n_ = 0;
}

kernels::TransitionStats SimulatedTemperingKernel::transition(kernels::ChainState& state,
                                                              rng::Stream& stream) {
  const int k = space_->level(state.x);
  if (k < 0) throw NumericalError("simulated_tempering: the state's level coordinate is invalid");
  kernels::TransitionStats stats;
  const auto x = state.x.head(d_);
  if (!have_point_ || point_.x.size() != d_ ||
      std::memcmp(point_.x.data(), x.data(), sizeof(double) * d_) != 0) {
    evaluate_path_point(*space_->target(), space_->reference().get(), x, point_);
    stats.n_gradient_evals += 1;
    have_point_ = true;
  }
  const bool regenerated = k == 0 && regenerates_at_bottom();
  move_x(k, stream, stats);                // T1: x | k
  const int k_new = draw_level(stream);    // T2: k | x
  if (warmup_)
    record_warmup_round();
  else
    record_sample(k_new, regenerated);
  set_state(k_new, state);
  return stats;
}

bool SimulatedTemperingKernel::regenerates_at_bottom() const {
  return space_->betas()[0] == 0.0 && space_->reference() && options_.exact_reference_draws;
}

void SimulatedTemperingKernel::move_x(int k, rng::Stream& stream, kernels::TransitionStats& stats) {
  const auto& betas = space_->betas();
  if (k == 0 && regenerates_at_bottom()) {
    Vector fresh(d_);
    space_->reference()->density->sample(stream, fresh);
    evaluate_path_point(*space_->target(), space_->reference().get(), fresh, point_);
    stats.accept_stat = 1.0;
    stats.accepted = true;
    stats.n_gradient_evals += 1;
    return;
  }
  const auto run = levels_.run(k, betas[k], point_, options_.n_local_steps, stream);
  stats.accept_stat = run.sum_accept / options_.n_local_steps;
  stats.n_leapfrog = run.n_leapfrog;
  stats.divergent = run.divergent;
  stats.nonfinite = run.nonfinite;
  stats.accepted = run.moved;
  stats.step_size = levels_.step_size(k);
  stats.n_gradient_evals += run.n_gradient_evals;
}

int SimulatedTemperingKernel::draw_level(rng::Stream& stream) {
  const int k_levels = space_->n_levels();
  space_->log_conditional(point_.v(), log_cond_);
  const double u = stream.uniform();
  double cum = 0.0;
  for (int j = 0; j < k_levels; ++j) {
    cum += std::exp(log_cond_[j]);
    if (u < cum) return j;
  }
  return k_levels - 1;
}

void SimulatedTemperingKernel::record_warmup_round() {
  for (int j = 0; j < space_->n_levels(); ++j)
    pilot_lse_[j] = log_add_exp(pilot_lse_[j], log_cond_[j]);
  ++pilot_n_;
  ++warmup_iter_;
  if (options_.adapt_weights && warmup_iter_ == next_pilot_end_) {
    update_weights();
    pilot_length_ *= 2;
    next_pilot_end_ += pilot_length_;
  }
}

void SimulatedTemperingKernel::record_sample(int k_new, bool regenerated) {
  const int k_levels = space_->n_levels();
  const double terms[2] = {log_cond_.back(), log_cond_.front()};
  rb_->add(terms);
  if (tours_) tours_->add(terms[0], terms[1], regenerated);
  if (track_moments_) add_weighted(moments_, point_.x, log_cond_.back());
  ++n_samples_;
  count_top_ += k_new == k_levels - 1;
  count_bottom_ += k_new == 0;
  level_buf_[0] = k_new;
  round_trips_.observe(level_buf_, k_levels);
}

void SimulatedTemperingKernel::set_state(int k_new, kernels::ChainState& state) const {
  state.x.head(d_) = point_.x;
  state.x[d_] = static_cast<double>(k_new);
  const double b = space_->betas()[k_new];
  state.potential = point_.potential(b) - space_->log_weights()[k_new];
  state.grad.resize(d_ + 1);
  state.grad.head(d_) = b * point_.grad_phi + (1.0 - b) * point_.grad_psi;
  state.grad[d_] = 0.0;
}

double SimulatedTemperingKernel::log_z() const {
  if (n_samples_ == 0) return std::numeric_limits<double>::quiet_NaN();
  const auto& w = space_->log_weights();
  return w.front() - w.back() + rb_->total()[0] - rb_->total()[1];
}

void SimulatedTemperingKernel::report_estimates(std::map<std::string, double>& e) const {
  const auto& w = space_->log_weights();
  const bool normalised = space_->reference() && space_->betas().front() == 0.0;
  const std::string p = normalised ? "log_z" : "log_z_ratio";
  e[p] = log_z();
  const double shift = w.front() - w.back();
  if (tours_) {
    e[p + "_se"] = tours_->log_ratio_se();
    e["log_z_tours"] = static_cast<double>(tours_->n_tours());
    if (const double k = tours_->tour_pareto_k(); std::isfinite(k)) e["log_z_tour_pareto_k"] = k;
  } else {
    e[p + "_se"] = rb_->log_ratio_se(0, 1);
    e["log_z_batches"] = rb_->n_full_batches();
  }
  if (count_top_ > 0 && count_bottom_ > 0)
    e[p + "_count"] = shift + std::log(static_cast<double>(count_top_)) -
                      std::log(static_cast<double>(count_bottom_));
  e["n_levels"] = space_->n_levels();
  e["top_fraction"] = n_samples_ > 0 ? static_cast<double>(count_top_) / n_samples_
                                     : std::numeric_limits<double>::quiet_NaN();
  e["round_trips"] = static_cast<double>(round_trips_.round_trips());
  e["round_trip_rate"] = n_samples_ > 0
                             ? static_cast<double>(round_trips_.round_trips()) / n_samples_
                             : std::numeric_limits<double>::quiet_NaN();
  e["log_z_weights"] = w.front() - w.back();
}

// ---- checkpoint (added methods) ----

void SimulatedTemperingKernel::save_state(pemc::v1::KernelState& state) const {
  state.Clear();
  state.set_kind(name());
  adapt::put_reals(state, "log_weights", space_->log_weights());
  levels_.save_state(adapt::put_child(state, "levels"));
  adapt::put_int(state, "have_point", have_point_ ? 1 : 0);
  if (have_point_) put_path_point(state, "point", point_);
  adapt::put_int(state, "warmup", warmup_ ? 1 : 0);
  adapt::put_int(state, "warmup_iter", warmup_iter_);
  adapt::put_int(state, "next_pilot_end", next_pilot_end_);
  adapt::put_int(state, "pilot_length", pilot_length_);
  adapt::put_int(state, "pilot_n", pilot_n_);
  adapt::put_reals(state, "pilot_lse", pilot_lse_);
  adapt::put_int(state, "n_samples", n_samples_);
  adapt::put_int(state, "count_top", count_top_);
  adapt::put_int(state, "count_bottom", count_bottom_);
  if (rb_) rb_->save_state(adapt::put_child(state, "rb"));
  if (tours_) adapt::put_reals(state, "tours", tours_->serialize());
  round_trips_.save_state(adapt::put_child(state, "round_trips"));
  if (track_moments_) save_moments(adapt::put_child(state, "moments"), moments_);
}

void SimulatedTemperingKernel::restore_state(const pemc::v1::KernelState& state) {
  adapt::expect_kind(state, name());
  auto w = adapt::get_real_vector(state, "log_weights");
  if (static_cast<int>(w.size()) != space_->n_levels())
    adapt::state_error(state, "log_weights", "not one per level");
  space_->set_log_weights(std::move(w));
  levels_.restore_state(adapt::get_child(state, "levels"));
  have_point_ = adapt::get_int(state, "have_point") != 0;
  if (have_point_) get_path_point(state, "point", point_);
  warmup_ = adapt::get_int(state, "warmup") != 0;
  warmup_iter_ = adapt::get_int(state, "warmup_iter");
  next_pilot_end_ = adapt::get_int(state, "next_pilot_end");
  pilot_length_ = adapt::get_int(state, "pilot_length");
  pilot_n_ = adapt::get_int(state, "pilot_n");
  pilot_lse_ = adapt::get_real_vector(state, "pilot_lse");
  n_samples_ = adapt::get_int(state, "n_samples");
  count_top_ = adapt::get_int(state, "count_top");
  count_bottom_ = adapt::get_int(state, "count_bottom");
  if (adapt::has_child(state, "rb")) {
    rb_.emplace(2, options_.n_batches);
    rb_->restore_state(adapt::get_child(state, "rb"));
  } else {
    rb_.reset();
  }
  // A checkpoint written before tours were kept: the SE falls back on the batches.
  tours_.reset();
  if (state.reals().count("tours") > 0)
    tours_ = estimators::RegenerativeLogRatio::deserialize(adapt::get_real_vector(state, "tours"));
  round_trips_.restore_state(adapt::get_child(state, "round_trips"));
  if (track_moments_) restore_moments(state, "moments", moments_);
}

}  // namespace pemc::tempering
