#include "extended/continuous_tempering.hpp"

#include "adapt/state_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "extended/base_density_fit.hpp"
#include "extended/continuous_tempering_math.hpp"
#include "pemc/v1/tempering.pb.h"

namespace pemc::extended {
namespace {

// -log p(x, beta) of eq. (16) up to the joint's constant: beta (phi + log zeta) + (1 - beta) psi.
// One formula for the Gibbs space and the tempered target, so the Gibbs kernel can hand the
// space's potential to the inner kernel unchanged.
inline double tempered_potential(double beta, double phi, double psi, double log_zeta) {
  return beta * (phi + log_zeta) + (1.0 - beta) * psi;
}

void fill_view(ConstVectorRef x, double phi, double psi, double beta, double log_zeta,
               targets::WeightedView& out) {
  const double delta = phi + log_zeta - psi;
  const RbLogWeights w = rb_log_weights(delta);
  out.samples = x;  // d x 1
  out.log_weights.resize(1);
  out.log_weights[0] = w.log_w1;
  out.extra.assign(kExtraSize, 0.0);
  out.extra[kExtraLogW0] = w.log_w0;
  out.extra[kExtraLogW1] = w.log_w1;
  out.extra[kExtraBeta] = beta;
  out.extra[kExtraDelta] = delta;
  out.extra[kExtraLogZeta] = log_zeta;
}

void check_parts(const TemperingParts& parts) {
  if (!parts.target || !parts.base) throw ConfigError("continuous tempering: no target or base");
  if (parts.base->dim() != parts.target->dim())
    throw ConfigError("continuous tempering: the base density has dimension " +
                      std::to_string(parts.base->dim()) + ", the target " +
                      std::to_string(parts.target->dim()));
  if (!std::isfinite(parts.log_zeta)) throw ConfigError("continuous tempering: log zeta is not finite");
}

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// beta = sigmoid(t), 1 - beta = sigmoid(-t) and -log beta'(u) + log c = softplus(t) + softplus(-t)
// = |t| + 2 log(1 + e^{-|t|}) from one exp and one log1p (the same values as logistic() and
// log1pexp() to rounding; this runs once per gradient evaluation).
struct Sigmoid {
  double beta, one_minus_beta, softplus_sum;
};
inline Sigmoid sigmoid_terms(double t) {
  const double a = std::fabs(t);
  const double e = std::exp(-a);
  const double inv = 1.0 / (1.0 + e);
  const double big = inv, small = e * inv;  // sigmoid(|t|), sigmoid(-|t|)
  return {t >= 0.0 ? big : small, t >= 0.0 ? small : big, a + 2.0 * std::log1p(e)};
}

}  // namespace

// ---- DeltaMemo -------------------------------------------------------------------------------

namespace {
// Raw memory as an Eigen vector for a Target call. (The extended targets hand x and the gradient on
// from raw pointers, not by copying the Eigen::Ref objects they were given: such a copy reads the
// caller's freshly written Ref with one wide load, which the CPU cannot forward from the narrower
// stores that wrote it, and stalls for about as long as the whole mixing takes.)
Eigen::Map<const Vector> const_map(std::span<const double> x) {
  return {x.data(), static_cast<Eigen::Index>(x.size())};
}
Eigen::Map<Vector> map(std::span<double> x) {
  return {x.data(), static_cast<Eigen::Index>(x.size())};
}

// g[d] = v, rewriting g[d - 1] in the same 16-byte store: kernels read the gradient 16 bytes at a
// time (Eigen's SSE2 packets), and a pair written by two 8-byte stores cannot be forwarded to
// such a load while the stores are in flight (a stall after every gradient evaluation).
inline void set_last(double* g, int d, double v) {
#ifdef __SSE2__
  if (d >= 1) {
    _mm_storeu_pd(g + d - 1, _mm_set_pd(v, g[d - 1]));
    return;
  }
#endif
  g[d] = v;
}

std::span<const double> span_of(ConstVectorRef x) {
  return {x.data(), static_cast<std::size_t>(x.size())};
}

bool same_bits(const double* a, const double* b, Eigen::Index n) {
  return std::memcmp(a, b, static_cast<std::size_t>(n) * sizeof(double)) == 0;
}
}  // namespace

void DeltaMemo::remember_slow(std::span<const double> x, double phi, double psi) const {
  const auto d = static_cast<Eigen::Index>(x.size());
  const auto stride = static_cast<std::size_t>(d + 2);
  if (d != dim_) {  // first use (or a different dimension): forget everything
    dim_ = d;
    capacity_ = static_cast<int>(std::clamp<std::size_t>(
        kMaxBytes / (stride * sizeof(double)), 16, static_cast<std::size_t>(kCapacity)));
    columns_.clear();
    view_.clear();
    start();
  }
  const auto slot = static_cast<std::size_t>(next_);
  if (columns_.size() < (slot + 1) * stride)
    columns_.resize(std::min<std::size_t>(std::max<std::size_t>(2 * columns_.size(), 8 * stride),
                                          static_cast<std::size_t>(capacity_) * stride));
  double* c = columns_.data() + slot * stride;
  copy_doubles(x.data(), c, d);
  c[d] = phi;
  c[d + 1] = psi;
  advance();
}

void DeltaMemo::remember_view(std::span<const double> x, double phi, double psi) const {
  const auto d = static_cast<Eigen::Index>(x.size());
  if (d != dim_) {
    remember_slow(x, phi, psi);  // sets the dimension up
    start();
  }
  view_.resize(static_cast<std::size_t>(d + 2));
  std::memcpy(view_.data(), x.data(), static_cast<std::size_t>(d) * sizeof(double));
  view_[d] = phi;
  view_[d + 1] = psi;
}

bool DeltaMemo::find(std::span<const double> x, double& phi, double& psi) const {
  const auto d = static_cast<Eigen::Index>(x.size());
  if (d != dim_) return false;
  const auto stride = static_cast<std::size_t>(d + 2);
  auto hit = [&](const double* c) {
    if (!same_bits(c, x.data(), d)) return false;
    phi = c[d];
    psi = c[d + 1];
    return true;
  };
  // The last evaluation (HMC accepted), the last view (rejected), then the rest, newest first.
  const int n = count_;
  const int last = next_ == 0 ? capacity_ - 1 : next_ - 1;
  if (n > 0 && hit(columns_.data() + static_cast<std::size_t>(last) * stride)) return true;
  if (!view_.empty() && hit(view_.data())) return true;
  for (int i = 1; i < n; ++i) {
    const int slot = (last - i + capacity_) % capacity_;
    if (hit(columns_.data() + static_cast<std::size_t>(slot) * stride)) return true;
  }
  return false;
}

// ---- joint ------------------------------------------------------------------------------------

JointTemperingTarget::JointTemperingTarget(TemperingParts parts, double control_scale,
                                           double initial_beta)
    : parts_(std::move(parts)), d_(0), scale_(control_scale), unit_scale_(control_scale == 1.0) {
  check_parts(parts_);
  d_ = parts_.target->dim();
  if (!(control_scale > 0.0) || !std::isfinite(control_scale))
    throw ConfigError("continuous tempering: the control scale must be finite and > 0");
  if (!(initial_beta > 0.0 && initial_beta < 1.0))
    throw ConfigError("continuous tempering (joint): initial beta must be in (0, 1)");
  initial_u_ = scale_ * std::log(initial_beta / (1.0 - initial_beta));
  log_scale_ = std::log(scale_);  // once, not in every (extended) gradient evaluation
}

double JointTemperingTarget::beta_of(double u) const { return logistic(scaled(u)); }

double JointTemperingTarget::potential(ConstVectorRef z) const {
  const ConstVectorRef x = z.head(d_);
  const double phi = parts_.target->potential(x);
  if (!(phi < kInfinity)) return kInfinity;
  const double psi = parts_.base->potential(x);
  memo_.remember(span_of(x), phi, psi);
  const Sigmoid sg = sigmoid_terms(scaled(z[d_]));
  // eq. (14) without the kinetic terms; -log beta'(u) = softplus(t) + softplus(-t) + log c.
  return sg.beta * (phi + parts_.log_zeta) + sg.one_minus_beta * psi + sg.softplus_sum +
         log_scale_;
}

double JointTemperingTarget::potential_and_gradient(ConstVectorRef z, VectorRef grad) const {
  // grad phi goes straight into grad's x part, where the base mixes grad psi into it in place.
  // (x and the gradient are passed on as raw spans: copies of Eigen::Ref objects cost more
  // here than the arithmetic around them.)
  const auto d = static_cast<std::size_t>(d_);
  const std::span<const double> x(z.data(), d);
  const std::span<double> gx(grad.data(), d);
  const double phi = parts_.target->potential_and_gradient(const_map(x), map(gx));
  if (!(phi < kInfinity)) {
    grad.setConstant(std::numeric_limits<double>::quiet_NaN());
    return kInfinity;
  }
  const Sigmoid sg = sigmoid_terms(scaled(z[d_]));
  const double beta = sg.beta, one_minus_beta = sg.one_minus_beta;
  // grad_x = beta grad phi + (1 - beta) grad psi.
  const double psi = parts_.base->potential_and_mixed_gradient(x, {beta, one_minus_beta, gx, gx, {}});
  memo_.remember(x, phi, psi);
  const double delta = phi + parts_.log_zeta - psi;
  // d/du [beta Delta + softplus(t) + softplus(-t)] = (beta (1 - beta) Delta + beta - (1 - beta)) / c
  grad[d_] = scaled(beta * one_minus_beta * delta + (beta - one_minus_beta));
  return beta * (phi + parts_.log_zeta) + one_minus_beta * psi + sg.softplus_sum + log_scale_;
}

bool JointTemperingTarget::weighted_view(ConstVectorRef z, targets::WeightedView& out) const {
  const ConstVectorRef x = z.head(d_);
  double phi, psi;
  if (!memo_.find(span_of(x), phi, psi)) {
    phi = parts_.target->potential(x);
    psi = parts_.base->potential(x);
  }
  memo_.remember_view(span_of(x), phi, psi);
  fill_view(x, phi, psi, beta_of(z[d_]), parts_.log_zeta, out);
  return true;
}

void JointTemperingTarget::initial_point(const std::function<void(VectorRef)>& draw_original,
                                         VectorRef z) const {
  auto x = z.head(d_);
  draw_original(x);
  z[d_] = initial_u_;
}

// ---- Gibbs space ------------------------------------------------------------------------------

GibbsTemperingSpace::GibbsTemperingSpace(TemperingParts parts, double initial_beta)
    : parts_(std::move(parts)), d_(0), initial_beta_(initial_beta) {
  check_parts(parts_);
  d_ = parts_.target->dim();
  if (!(initial_beta >= 0.0 && initial_beta <= 1.0))
    throw ConfigError("continuous tempering (Gibbs): initial beta must be in [0, 1]");
}

double GibbsTemperingSpace::potential(ConstVectorRef z) const {
  const double beta = z[d_];
  if (!(beta >= 0.0 && beta <= 1.0)) return kInfinity;
  const ConstVectorRef x = z.head(d_);
  const double phi = parts_.target->potential(x);
  if (!(phi < kInfinity)) return kInfinity;
  const double psi = parts_.base->potential(x);
  memo_.remember(span_of(x), phi, psi);
  return tempered_potential(beta, phi, psi, parts_.log_zeta);
}

double GibbsTemperingSpace::potential_and_gradient(ConstVectorRef z, VectorRef grad) const {
  const double beta = z[d_];
  const auto d = static_cast<std::size_t>(d_);
  const std::span<const double> x(z.data(), d);
  const std::span<double> gx(grad.data(), d);
  const double phi = (beta >= 0.0 && beta <= 1.0)
                         ? parts_.target->potential_and_gradient(const_map(x), map(gx))
                         : kInfinity;
  if (!(phi < kInfinity)) {
    grad.setConstant(std::numeric_limits<double>::quiet_NaN());
    return kInfinity;
  }
  const double psi = parts_.base->potential_and_mixed_gradient(x, {beta, 1.0 - beta, gx, gx, {}});
  memo_.remember(x, phi, psi);
  grad[d_] = phi + parts_.log_zeta - psi;  // d/d beta of eq. (16)'s exponent: Delta(x)
  return tempered_potential(beta, phi, psi, parts_.log_zeta);
}

bool GibbsTemperingSpace::weighted_view(ConstVectorRef z, targets::WeightedView& out) const {
  const ConstVectorRef x = z.head(d_);
  double phi, psi;
  if (!memo_.find(span_of(x), phi, psi)) {
    phi = parts_.target->potential(x);
    psi = parts_.base->potential(x);
  }
  memo_.remember_view(span_of(x), phi, psi);
  fill_view(x, phi, psi, z[d_], parts_.log_zeta, out);
  return true;
}

void GibbsTemperingSpace::initial_point(const std::function<void(VectorRef)>& draw_original,
                                        VectorRef z) const {
  auto x = z.head(d_);
  draw_original(x);
  z[d_] = initial_beta_;
}

// ---- tempered x | beta target -----------------------------------------------------------------

TemperedTarget::TemperedTarget(TemperingParts parts) : parts_(std::move(parts)), d_(0) {
  check_parts(parts_);
  d_ = parts_.target->dim();
  scratch_.x.resize(d_);
  scratch_.grad_phi.resize(d_);
  scratch_.grad_psi.resize(d_);
}

double TemperedTarget::potential(ConstVectorRef x) const {
  const double phi = parts_.target->potential(x);
  if (!(phi < kInfinity)) return kInfinity;
  return tempered_potential(beta_, phi, parts_.base->potential(x), parts_.log_zeta);
}

double TemperedTarget::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  Evaluation* e = &scratch_;
  if (n_recorded_ < kMaxRecordedEvaluations) {
    if (static_cast<int>(record_.size()) <= n_recorded_) {
      record_.emplace_back();
      record_.back().x.resize(d_);
      record_.back().grad_phi.resize(d_);
      record_.back().grad_psi.resize(d_);
    }
    e = &record_[n_recorded_];
  } else {
    overflowed_ = true;
  }
  const auto d = static_cast<std::size_t>(d_);
  const double* xd = x.data();
  e->phi = parts_.target->potential_and_gradient(const_map({xd, d}), e->grad_phi);
  if (!(e->phi < kInfinity)) {
    grad.setConstant(std::numeric_limits<double>::quiet_NaN());
    return kInfinity;  // not recorded: never the state a kernel ends on
  }
  // grad = beta grad phi + (1 - beta) grad psi, and grad psi kept for the Gibbs kernel.
  e->psi = parts_.base->potential_and_mixed_gradient(
      {xd, d}, {beta_, 1.0 - beta_, std::span<const double>(e->grad_phi.data(), d),
                      std::span<double>(grad.data(), d), std::span<double>(e->grad_psi.data(), d)});
  copy_doubles(xd, e->x.data(), d_);
  if (e != &scratch_) ++n_recorded_;
  return tempered_potential(beta_, e->phi, e->psi, parts_.log_zeta);
}

const TemperedTarget::Evaluation* TemperedTarget::find(ConstVectorRef x) const {
  for (int i = n_recorded_ - 1; i >= 0; --i)
    if (record_[i].x == x) return &record_[i];
  return nullptr;
}

// ---- RB tracking and the joint kernel ---------------------------------------------------------

void RbTracker::observe(const targets::Target& space, const kernels::ChainState& state) {
  if (in_warmup_) return;
  space.weighted_view(state.x, view_);
  acc_.add(view_.samples.col(0), view_.extra[kExtraLogW0], view_.extra[kExtraLogW1]);
  batches_.add(view_.extra[kExtraLogW1], view_.extra[kExtraLogW0]);
  sum_beta_ += view_.extra[kExtraBeta];
  log_zeta_ = view_.extra[kExtraLogZeta];
}

void RbTracker::report(std::map<std::string, double>& estimates) const {
  if (acc_.count() == 0) return;
  estimates["log_z"] = acc_.log_z(log_zeta_);
  // The batches saw every draw the sums did (a checkpoint of an older version has none: no SE).
  const double se = batches_.count() == acc_.count() ? batches_.log_ratio_se()
                                                     : std::numeric_limits<double>::quiet_NaN();
  if (std::isfinite(se)) {
    estimates["log_z_se"] = se;
    estimates["log_z_batches"] = batches_.n_full_batches();  // the SE's batches (k - 1 dof)
  }
  estimates["log_zeta"] = log_zeta_;
  estimates["log_sum_w0"] = acc_.log_sum_w0();
  estimates["log_sum_w1"] = acc_.log_sum_w1();
  estimates["ess_w0"] = acc_.ess_w0();
  estimates["ess_w1"] = acc_.ess_w1();
  estimates["mean_beta"] = sum_beta_ / static_cast<double>(acc_.count());
  estimates["rb_draws"] = static_cast<double>(acc_.count());
}

bool RbTracker::moments(Vector& mean, Matrix& covariance) const {
  if (acc_.count() == 0 || acc_.log_sum_w1() == -kInf) return false;
  mean = acc_.mean();
  covariance = acc_.covariance();
  return true;
}

bool report_tempering_base(const TemperingParts& parts, Vector& mean, Matrix& covariance,
                           double& log_zeta) {
  if (!parts.base) return false;
  mean = parts.base->mean();
  covariance = parts.base->covariance();
  log_zeta = parts.log_zeta;
  return true;
}

std::string describe_tempering_base(const TemperingParts& parts) {
  if (parts.description.empty()) return {};
  return fmt::format("fitted base: {}, log zeta {:.6g}", parts.description, parts.log_zeta);
}

JointTemperingKernel::JointTemperingKernel(std::shared_ptr<const JointTemperingTarget> space,
                                           kernels::KernelPtr inner, int n_batches,
                                           bool base_proposals)
    : space_(std::move(space)), inner_(std::move(inner)), tracker_(n_batches),
      base_proposals_(base_proposals) {
  if (!space_ || !inner_) throw ConfigError("joint continuous tempering: missing part");
}

kernels::TransitionStats JointTemperingKernel::transition(kernels::ChainState& state,
                                                          rng::Stream& stream) {
  space_->start_transition();
  auto stats = inner_->transition(state, stream);
  if (base_proposals_) stats.n_gradient_evals += propose_from_base(state, stream);
  tracker_.observe(*space_, state);
  return stats;
}

std::int64_t JointTemperingKernel::propose_from_base(kernels::ChainState& state,
                                                     rng::Stream& stream) {
  // log alpha = -(U(z') - U(z)) + psi(x') - psi(x), with U the joint potential at the same u:
  // the density ratio times q(x) / q(x') for q = exp(-psi) (see the top of the header).
  const auto& parts = space_->parts();
  const int d = space_->original_dim();
  proposal_.x = state.x;
  parts.base->sample(stream, proposal_.x.head(d));
  const double psi_new = parts.base->potential(proposal_.x.head(d));
  const double psi_old = parts.base->potential(state.x.head(d));
  proposal_.grad.resize(d + 1);
  proposal_.potential = space_->potential_and_gradient(proposal_.x, proposal_.grad);
  const double log_alpha = -(proposal_.potential - state.potential) + psi_new - psi_old;
  const double u = stream.uniform();
  if (std::isfinite(log_alpha) && std::log(u) < log_alpha) std::swap(state, proposal_);
  return 1;
}

void JointTemperingKernel::begin_warmup(std::int64_t n_warmup) {
  inner_->begin_warmup(n_warmup);
  tracker_.begin_warmup();
}

void JointTemperingKernel::end_warmup() {
  inner_->end_warmup();
  tracker_.end_warmup();
}

// ---- Gibbs kernel -----------------------------------------------------------------------------

GibbsTemperingKernel::GibbsTemperingKernel(std::shared_ptr<const GibbsTemperingSpace> space,
                                           std::shared_ptr<TemperedTarget> tempered,
                                           kernels::KernelPtr inner, int n_batches,
                                           bool base_proposals)
    : space_(std::move(space)), tempered_(std::move(tempered)), inner_(std::move(inner)),
      tracker_(n_batches), base_proposals_(base_proposals) {
  if (!space_ || !tempered_ || !inner_) throw ConfigError("Gibbs continuous tempering: missing part");
  const int d = space_->original_dim();
  inner_state_.x.resize(d);
  inner_state_.grad.resize(d);
  cur_x_.resize(0);
  grad_phi_.resize(d);
  grad_psi_.resize(d);
}

kernels::TransitionStats GibbsTemperingKernel::transition(kernels::ChainState& state,
                                                          rng::Stream& stream) {
  const auto& parts = space_->parts();
  const int d = space_->original_dim();
  const double beta = state.x[d];
  std::int64_t extra_evals = 0;

  // phi, psi and their gradients at the current x: kept from the previous transition.
  if (!(cur_x_.size() == d && cur_x_ == state.x.head(d))) {
    cur_x_ = state.x.head(d);
    cur_phi_ = parts.target->potential_and_gradient(cur_x_, grad_phi_);
    cur_psi_ = parts.base->potential_and_gradient(cur_x_, grad_psi_);
    ++extra_evals;
  }

  // x | beta: the space's potential at (x, beta) is the tempered potential at x (same formula).
  tempered_->set_beta(beta);
  inner_state_.x = cur_x_;
  inner_state_.potential = state.potential;
  inner_state_.grad = state.grad.head(d);
  tempered_->start_recording();
  kernels::TransitionStats stats = inner_->transition(inner_state_, stream);

  if (!(inner_state_.x == cur_x_)) {
    cur_x_ = inner_state_.x;
    if (const auto* e = tempered_->find(cur_x_)) {
      cur_phi_ = e->phi;
      cur_psi_ = e->psi;
      grad_phi_ = e->grad_phi;
      grad_psi_ = e->grad_psi;
    } else {  // only when the record overflowed
      cur_phi_ = parts.target->potential_and_gradient(cur_x_, grad_phi_);
      cur_psi_ = parts.base->potential_and_gradient(cur_x_, grad_psi_);
      ++extra_evals;
    }
  }

  // The base proposal at beta (see the header): accepted with min(1, exp(-beta [Delta' - Delta])).
  if (base_proposals_) {
    prop_x_.resize(d);
    prop_grad_phi_.resize(d);
    prop_grad_psi_.resize(d);
    parts.base->sample(stream, prop_x_);
    const double phi = parts.target->potential_and_gradient(prop_x_, prop_grad_phi_);
    const double psi = parts.base->potential_and_gradient(prop_x_, prop_grad_psi_);
    ++extra_evals;
    const double log_alpha = -beta * ((phi - psi) - (cur_phi_ - cur_psi_));
    const double u = stream.uniform();
    if (std::isfinite(log_alpha) && std::log(u) < log_alpha) {
      std::swap(cur_x_, prop_x_);
      std::swap(grad_phi_, prop_grad_phi_);
      std::swap(grad_psi_, prop_grad_psi_);
      cur_phi_ = phi;
      cur_psi_ = psi;
    }
  }

  // beta | x: exact draw from the truncated exponential (eq. (17)).
  const double delta = cur_phi_ + parts.log_zeta - cur_psi_;
  const double new_beta = truncated_exponential_inverse_cdf(delta, stream.uniform());
  if (std::isnan(new_beta))
    throw NumericalError("Gibbs continuous tempering: Delta(x) is NaN at the current state");

  state.x.head(d) = cur_x_;
  state.x[d] = new_beta;
  state.potential = tempered_potential(new_beta, cur_phi_, cur_psi_, parts.log_zeta);
  state.grad.resize(d + 1);
  state.grad.head(d).noalias() = new_beta * grad_phi_ + (1.0 - new_beta) * grad_psi_;
  state.grad[d] = delta;
  space_->remember(cur_x_, cur_phi_, cur_psi_);

  stats.n_gradient_evals += extra_evals;
  tracker_.observe(*space_, state);
  return stats;
}

void GibbsTemperingKernel::begin_warmup(std::int64_t n_warmup) {
  inner_->begin_warmup(n_warmup);
  tracker_.begin_warmup();
}

void GibbsTemperingKernel::end_warmup() {
  inner_->end_warmup();
  tracker_.end_warmup();
}

void GibbsTemperingKernel::adapt(std::int64_t warmup_iteration, const kernels::ChainState& state,
                                 const kernels::TransitionStats& stats) {
  // The inner kernel adapts to its own moves: x after the move, its acceptance statistic.
  inner_->adapt(warmup_iteration, inner_state_, stats);
}

// ---- factories --------------------------------------------------------------------------------

ExtendedSampler make_continuous_tempering(targets::TargetPtr target, BaseDensity base,
                                          const ContinuousTemperingOptions& options,
                                          const InnerKernelFactory& inner) {
  if (!base.density) throw ConfigError("continuous tempering: no base density");
  // The sampler's own copy: a kFast density's scratch serves one thread, and a caller may hand one
  // BaseDensity to several chains.
  TemperingParts parts{std::move(target),
                       base.density->copy_with_evaluation(base.density->evaluation()),
                       base.log_zeta, base.description};
  if (options.variant == TemperingVariant::kJoint) {
    auto space = std::make_shared<const JointTemperingTarget>(parts, options.control_scale,
                                                              options.initial_beta);
    auto kernel = std::make_unique<JointTemperingKernel>(space, inner(space), options.n_batches,
                                                         options.base_proposals);
    return {std::move(space), std::move(kernel)};
  }
  auto space = std::make_shared<const GibbsTemperingSpace>(parts, options.initial_beta);
  auto tempered = std::make_shared<TemperedTarget>(parts);
  tempered->set_beta(options.initial_beta);
  auto inner_kernel = inner(tempered);
  auto kernel = std::make_unique<GibbsTemperingKernel>(space, tempered, std::move(inner_kernel),
                                                       options.n_batches,
                                                       options.base_proposals);
  return {std::move(space), std::move(kernel)};
}

ExtendedSampler make_continuous_tempering(const v1::ContinuousTemperingConfig& config,
                                          targets::TargetPtr target,
                                          const InnerKernelFactory& inner,
                                          const modes::ModeSet* modes) {
  const std::string field = "sampler.continuous_tempering";
  if (config.kernel_case() == v1::ContinuousTemperingConfig::KERNEL_NOT_SET)
    throw ConfigError(field + ": no kernel is set (give hmc or nuts)");
  if (!config.has_base()) throw ConfigError(field + ".base: required");
  ContinuousTemperingOptions o;
  o.variant = config.variant() == v1::ContinuousTemperingConfig::GIBBS ? TemperingVariant::kGibbs
                                                                        : TemperingVariant::kJoint;
  const double sigmoid_scale = config.has_sigmoid_scale() ? config.sigmoid_scale() : 1.0;
  const double mass = config.has_control_mass() ? config.control_mass() : 1.0;
  if (!(sigmoid_scale > 0.0) || !std::isfinite(sigmoid_scale))
    throw ConfigError(field + ".sigmoid_scale: must be finite and > 0");
  if (!(mass > 0.0) || !std::isfinite(mass))
    throw ConfigError(field + ".control_mass: must be finite and > 0");
  o.control_scale = sigmoid_scale * std::sqrt(mass);
  o.initial_beta = config.has_initial_beta() ? config.initial_beta() : 0.5;
  o.base_proposals = !config.has_base_proposals() || config.base_proposals();
  if (config.has_n_batches()) {
    if (config.n_batches() < 2) throw ConfigError(field + ".n_batches: must be >= 2");
    o.n_batches = config.n_batches();
  }
  if (o.variant == TemperingVariant::kJoint && !(o.initial_beta > 0.0 && o.initial_beta < 1.0))
    throw ConfigError(field + ".initial_beta: must be in (0, 1) for the JOINT variant");
  if (o.variant == TemperingVariant::kGibbs && !(o.initial_beta >= 0.0 && o.initial_beta <= 1.0))
    throw ConfigError(field + ".initial_beta: must be in [0, 1]");
  BaseDensity base = make_base_density(config.base(), *target, field + ".base", modes);
  return make_continuous_tempering(std::move(target), std::move(base), o, inner);
}

// ---- checkpoint (added methods) -------------------------------------------------------------

void RbTracker::save_state(pemc::v1::KernelState& s) const {
  s.set_kind("rb_tracker");
  adapt::put_int(s, "in_warmup", in_warmup_ ? 1 : 0);
  adapt::put_reals(s, "accumulator", acc_.serialize());
  adapt::put_real(s, "sum_beta", sum_beta_);
  adapt::put_real(s, "log_zeta", log_zeta_);
  adapt::put_reals(s, "log_z_batches", batches_.serialize());
}

void RbTracker::restore_state(const pemc::v1::KernelState& s) {
  adapt::expect_kind(s, "rb_tracker");
  in_warmup_ = adapt::get_int(s, "in_warmup") != 0;
  const auto acc = adapt::get_real_vector(s, "accumulator");
  acc_ = estimators::TemperingRbAccumulator::deserialize(acc);
  sum_beta_ = adapt::get_real(s, "sum_beta");
  log_zeta_ = adapt::get_real(s, "log_zeta");
  // Absent in checkpoints written before log_z_se existed: the batches then start empty and
  // report() leaves the SE out (their count differs from the sums').
  if (s.reals().count("log_z_batches")) {
    try {
      batches_ = estimators::LogRatioBatchMeans::deserialize(adapt::get_real_vector(s, "log_z_batches"));
    } catch (const DataError& e) {
      adapt::state_error(s, "log_z_batches", e.what());
    }
  }
}

void JointTemperingKernel::save_state(pemc::v1::KernelState& state) const {
  state.Clear();
  state.set_kind(name());
  inner_->save_state(adapt::put_child(state, "inner"));
  tracker_.save_state(adapt::put_child(state, "tracker"));
}

void JointTemperingKernel::restore_state(const pemc::v1::KernelState& state) {
  adapt::expect_kind(state, name());
  inner_->restore_state(adapt::get_child(state, "inner"));
  tracker_.restore_state(adapt::get_child(state, "tracker"));
}

void GibbsTemperingKernel::save_state(pemc::v1::KernelState& state) const {
  state.Clear();
  state.set_kind(name());
  inner_->save_state(adapt::put_child(state, "inner"));
  tracker_.save_state(adapt::put_child(state, "tracker"));
  adapt::put_vector(state, "cur_x", cur_x_);
  adapt::put_real(state, "cur_phi", cur_phi_);
  adapt::put_real(state, "cur_psi", cur_psi_);
  adapt::put_vector(state, "grad_phi", grad_phi_);
  adapt::put_vector(state, "grad_psi", grad_psi_);
}

void GibbsTemperingKernel::restore_state(const pemc::v1::KernelState& state) {
  adapt::expect_kind(state, name());
  inner_->restore_state(adapt::get_child(state, "inner"));
  tracker_.restore_state(adapt::get_child(state, "tracker"));
  const Eigen::Index d = space_->original_dim();
  adapt::get_vector(state, "cur_x", cur_x_);
  if (cur_x_.size() != 0 && cur_x_.size() != d) adapt::state_error(state, "cur_x", "wrong length");
  cur_phi_ = adapt::get_real(state, "cur_phi");
  cur_psi_ = adapt::get_real(state, "cur_psi");
  adapt::get_vector(state, "grad_phi", grad_phi_, d);
  adapt::get_vector(state, "grad_psi", grad_psi_, d);
  // The space remembers phi and psi at x for its weighted view, as after the saved transition.
  if (cur_x_.size() == d) space_->remember(cur_x_, cur_phi_, cur_psi_);
}

}  // namespace pemc::extended
