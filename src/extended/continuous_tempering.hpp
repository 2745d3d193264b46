#pragma once
// Continuous tempering (Graham & Storkey 2017, "Continuously tempered Hamiltonian Monte Carlo").
//
// The joint density on (x, beta), beta in [0, 1] (eq. (16), (26)):
//     p(x, beta) ∝ exp(-beta [phi(x) + log zeta] - (1 - beta) psi(x)),
// with phi the target's potential, psi the negative log of a normalised base density and
// log zeta an approximation to log Z = log ∫ exp(-phi). Two samplers leave it invariant:
//
// JOINT (JointTemperingTarget): HMC/NUTS on (x, u) with beta = beta(u) = sigmoid(u / c) and the
//   extended potential of eq. (14)/(15)
//     U(x, u) = beta(u) [phi(x) + log zeta] + (1 - beta(u)) psi(x) - log |d beta / d u|,
//   -log beta'(u) = softplus(u/c) + softplus(-u/c) + log c. The paper's mass m for u (v^2 / 2m in
//   eq. (14)) with its beta(u) = sigmoid(u) is the same dynamics as unit mass on u' = sqrt(m) u,
//   so the state stores u' and c = sigmoid_scale * sqrt(control_mass); the inner kernel's metric
//   (unit, or adapted diagonal/dense) then acts on (x, u') like any other coordinates.
//   State: [x (d), u'] (dim d + 1).
//
// GIBBS (GibbsTemperingKernel on a GibbsTemperingSpace): alternate an HMC/NUTS move of x | beta on
//   the tempered potential beta [phi + log zeta] + (1 - beta) psi (TemperedTarget, whose beta the
//   kernel sets before each move) with an exact draw beta | x from eq. (17).
//   State: [x (d), beta] (dim d + 1); the space's potential is -log p(x, beta) of eq. (16) and +inf
//   for beta outside [0, 1].
//
// Base proposals (base_proposals, default on): each transition ends its x move with an independence
// Metropolis-Hastings proposal x' drawn exactly from the base, at the state's beta, accepted with
// probability min(1, exp(-beta [Delta(x') - Delta(x)])) (the joint density over the base density
// q = exp(-psi): p(x', beta) q(x) / (p(x, beta) q(x'))). It leaves p(x, beta) invariant at every
// beta and is accepted almost always near beta = 0, where it jumps between the base's components
// as PT's exact reference draws do: without it, a base that is a mixture of narrow components over
// separated modes is as hard to move across at beta = 0 as the target itself. It costs one target
// gradient per transition (counted).
//
// Every draw, whatever its beta, contributes to the Rao-Blackwellised estimators through
// Delta(x) = phi(x) + log zeta - psi(x) and the weights w0, w1 (continuous_tempering_math.hpp):
//   log Z  = log zeta + log sum w1 - log sum w0        (eq. (20))
//   E[f]   = sum w1 f / sum w1  (target),  sum w0 f / sum w0  (base; eqs. (21), (22)).
// Both spaces' weighted_view(state) gives samples = x (d x 1), log_weights = {log w1(x)} (so a
// report's self-normalised weighted mean over draws is eq. (21)) and
//   extra = { log w0(x), log w1(x), beta, Delta(x), log zeta }   (indices kExtra* below),
// so per chain  log Z = extra[4] + LSE_draws(extra[1]) - LSE_draws(extra[0])  (eq. (20)).
//
// Gradient evaluations: each evaluation of the extended (or tempered) potential's gradient costs one
// target gradient plus one base gradient (O(d^2), K times that for a K-component mixture); kernels
// count it as one. The Gibbs kernel needs phi, psi and both gradients separately at the point its
// inner move ends on; it takes them from a per-transition record of the evaluations (no extra
// target evaluation), and counts one more gradient evaluation only when that record overflowed
// (more than kMaxRecordedEvaluations evaluations in one transition).
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "estimators/log_ratio_batch_means.hpp"
#include "estimators/rb_tempering.hpp"
#include "extended/base_density.hpp"
#include "extended/extended_sampler.hpp"
#include "kernels/kernel.hpp"
#include "modes/mode_set.hpp"
#include "targets/target.hpp"

namespace pemc::v1 {
class ContinuousTemperingConfig;
}

namespace pemc::extended {

// Layout of WeightedView::extra (and so of Draw.extra in the records).
inline constexpr int kExtraLogW0 = 0;
inline constexpr int kExtraLogW1 = 1;
inline constexpr int kExtraBeta = 2;
inline constexpr int kExtraDelta = 3;
inline constexpr int kExtraLogZeta = 4;
inline constexpr int kExtraSize = 5;

// What both variants share: the target phi, the base psi and log zeta.
struct TemperingParts {
  targets::TargetPtr target;
  densities::DensityPtr base;
  double log_zeta = 0.0;
  std::string description;  // how the base was obtained (BaseDensity::description)
};

// n doubles from `from` to `to` in 16-byte pieces, inline: it runs once per gradient evaluation,
// where a library memcpy call (and its size dispatch) is a large part of the cost of copying
// ~30 doubles.
inline void copy_doubles(const double* from, double* to, Eigen::Index n) {
  Eigen::Index i = 0;
#ifdef __SSE2__
  for (; i + 2 <= n; i += 2) _mm_storeu_pd(to + i, _mm_loadu_pd(from + i));
#endif
  for (; i < n; ++i) to[i] = from[i];
}

// phi(x) and psi(x) at recently evaluated points, so that weighted_view does not re-evaluate the
// target where a kernel has just evaluated it: every evaluation since the last start() (a kernel
// transition: HMC ends on the last point, NUTS on any point of its trajectory), up to
// capacity() of them (older ones are overwritten), and the latest view (a rejected transition
// leaves the state there). Points are matched bit for bit; a miss costs weighted_view one
// evaluation, never a wrong value.
class DeltaMemo {
 public:
  // A NUTS trajectory of tree depth 10; fewer when that would take more than kMaxBytes.
  static constexpr int kCapacity = 1024;
  static constexpr std::size_t kMaxBytes = std::size_t{4} << 20;
  int capacity() const { return capacity_; }

  void start() const {
    count_ = 0;
    next_ = 0;
  }
  // Once per gradient evaluation: inline, one short copy (no division, no library call) while
  // the storage is there; remember_slow() sets it up or grows it.
  void remember(std::span<const double> x, double phi, double psi) const {
    const auto d = static_cast<Eigen::Index>(x.size());
    const auto stride = static_cast<std::size_t>(d + 2);
    const auto end = (static_cast<std::size_t>(next_) + 1) * stride;
    if (d != dim_ || end > columns_.size()) {
      remember_slow(x, phi, psi);
      return;
    }
    double* c = columns_.data() + (end - stride);
    copy_doubles(x.data(), c, d);
    c[d] = phi;
    c[d + 1] = psi;
    advance();
  }
  void remember_view(std::span<const double> x, double phi, double psi) const;
  // True (and phi, psi set) if x was remembered.
  bool find(std::span<const double> x, double& phi, double& psi) const;

 private:
  void remember_slow(std::span<const double> x, double phi, double psi) const;
  void advance() const {
    next_ = next_ + 1 == capacity_ ? 0 : next_ + 1;
    if (count_ < capacity_) ++count_;
  }

  // Column i of (x, phi, psi) for slot i, grown on demand; evaluation k since start() goes to
  // slot k mod capacity_.
  mutable std::vector<double> columns_;
  mutable Eigen::Index dim_ = -1;
  mutable int capacity_ = kCapacity;
  mutable int count_ = 0;  // evaluations since start(), at most capacity_
  mutable int next_ = 0;   // the slot of the next evaluation
  mutable std::vector<double> view_;  // (x, phi, psi) of the latest view; empty before it
};

class JointTemperingTarget final : public targets::Target {
 public:
  // control_scale c > 0: beta(u') = sigmoid(u' / c). initial_beta in (0, 1).
  JointTemperingTarget(TemperingParts parts, double control_scale, double initial_beta);

  int dim() const override { return d_ + 1; }
  std::string name() const override { return "ct_joint(" + parts_.target->name() + ")"; }
  double potential(ConstVectorRef z) const override;
  double potential_and_gradient(ConstVectorRef z, VectorRef grad) const override;
  int original_dim() const override { return d_; }
  bool weighted_view(ConstVectorRef z, targets::WeightedView& out) const override;
  // x from the config's init, u' = c logit(initial_beta).
  void initial_point(const std::function<void(VectorRef)>& draw_original,
                     VectorRef z) const override;

  double beta_of(double u) const;
  double control_scale() const { return scale_; }
  const TemperingParts& parts() const { return parts_; }
  // The kernel's transition begins: weighted_view looks up its evaluations from here on.
  void start_transition() const { memo_.start(); }

 private:
  // t = u' / c; exact, and no division, for c = 1 (the default).
  double scaled(double u) const { return unit_scale_ ? u : u / scale_; }

  TemperingParts parts_;
  int d_;
  double scale_;
  bool unit_scale_;
  double log_scale_;
  double initial_u_;
  DeltaMemo memo_;
};

class GibbsTemperingSpace final : public targets::Target {
 public:
  GibbsTemperingSpace(TemperingParts parts, double initial_beta);

  int dim() const override { return d_ + 1; }
  std::string name() const override { return "ct_gibbs(" + parts_.target->name() + ")"; }
  // -log p(x, beta) = beta (phi + log zeta) + (1 - beta) psi; +inf for beta outside [0, 1] or a
  // non-finite phi. Gradient: (beta grad phi + (1 - beta) grad psi, Delta).
  double potential(ConstVectorRef z) const override;
  double potential_and_gradient(ConstVectorRef z, VectorRef grad) const override;
  int original_dim() const override { return d_; }
  bool weighted_view(ConstVectorRef z, targets::WeightedView& out) const override;
  void initial_point(const std::function<void(VectorRef)>& draw_original,
                     VectorRef z) const override;

  const TemperingParts& parts() const { return parts_; }
  // The Gibbs kernel tells the space phi and psi at the state it leaves (saves weighted_view an
  // evaluation).
  void remember(ConstVectorRef x, double phi, double psi) const {
    memo_.remember_view({x.data(), static_cast<std::size_t>(x.size())}, phi, psi);
  }

 private:
  TemperingParts parts_;
  int d_;
  double initial_beta_;
  DeltaMemo memo_;
};

// x -> beta [phi(x) + log zeta] + (1 - beta) psi(x) at a beta set from outside (the x | beta
// conditional of the Gibbs variant). Records each evaluation while recording is on.
class TemperedTarget final : public targets::Target {
 public:
  static constexpr int kMaxRecordedEvaluations = 1 << 14;

  explicit TemperedTarget(TemperingParts parts);

  int dim() const override { return d_; }
  std::string name() const override { return "ct_tempered(" + parts_.target->name() + ")"; }
  double potential(ConstVectorRef x) const override;
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;

  void set_beta(double beta) { beta_ = beta; }
  double beta() const { return beta_; }

  // Recording of (x, phi, psi, grad phi, grad psi) for every potential_and_gradient call.
  struct Evaluation {
    double phi = 0.0, psi = 0.0;
    Vector x, grad_phi, grad_psi;
  };
  void start_recording() const { n_recorded_ = 0; overflowed_ = false; }
  // The most recent recorded evaluation at exactly x, or null (not recorded / overflowed).
  const Evaluation* find(ConstVectorRef x) const;

 private:
  TemperingParts parts_;
  int d_;
  double beta_ = 1.0;
  mutable std::vector<Evaluation> record_;
  mutable int n_recorded_ = 0;
  mutable bool overflowed_ = false;
  mutable Evaluation scratch_;
};

// Accumulates the Rao-Blackwellised estimators (eqs. (20)-(22)) over every post-warmup
// transition of a chain (all of them, not only the thinned draws written to the records), from the
// space's weighted view. Estimates reported under these keys (ChainSummary.estimates):
//   "log_z"       log zeta + log sum w1 - log sum w0                       (eq. (20))
//   "log_z_se"    its batch-means standard error: the delta method on the batch sums of w1 and w0
//                 (estimators/log_ratio_batch_means.hpp; log zeta is a constant); absent with fewer
//                 than 2 full batches
//   "log_z_batches" the number k of full batches that SE rests on (its square has ~k - 1 dof)
//   "log_zeta"    the base's log zeta
//   "log_sum_w0", "log_sum_w1", "ess_w0", "ess_w1" (Kish), "mean_beta", "rb_draws"
class RbTracker {
 public:
  explicit RbTracker(int n_batches = estimators::LogRatioBatchMeans::kDefaultBatches)
      : batches_(n_batches) {}
  void begin_warmup() { in_warmup_ = true; }
  void end_warmup() { in_warmup_ = false; }
  // Adds the state's x with its weights unless in warmup.
  void observe(const targets::Target& space, const kernels::ChainState& state);
  void report(std::map<std::string, double>& estimates) const;
  // The target's mean and covariance by eq. (21); false before a post-warmup draw with w1 > 0.
  bool moments(Vector& mean, Matrix& covariance) const;
  const estimators::TemperingRbAccumulator& accumulator() const { return acc_; }
  // Checkpoint: the Rao-Blackwell sums, their batches and the warmup flag.
  void save_state(pemc::v1::KernelState& s) const;
  void restore_state(const pemc::v1::KernelState& s);

 private:
  bool in_warmup_ = false;
  targets::WeightedView view_;
  estimators::TemperingRbAccumulator acc_;
  estimators::LogRatioBatchMeans batches_;  // of (w1, w0), for log_z_se
  double sum_beta_ = 0.0;
  double log_zeta_ = 0.0;
};

// The base's moments and log zeta (Kernel::report_base of both variants).
bool report_tempering_base(const TemperingParts& parts, Vector& mean, Matrix& covariance,
                           double& log_zeta);
// How the base was obtained and its log zeta, for the log (Kernel::fit_description); empty for
// a base without a description.
std::string describe_tempering_base(const TemperingParts& parts);

// The joint variant's kernel: the inner HMC/NUTS kernel on the (x, u) space, plus RB tracking.
class JointTemperingKernel final : public kernels::Kernel {
 public:
  // n_batches: of the tracker's log_z_se (RbTracker). base_proposals: see the top of this file.
  JointTemperingKernel(std::shared_ptr<const JointTemperingTarget> space, kernels::KernelPtr inner,
                       int n_batches = estimators::LogRatioBatchMeans::kDefaultBatches,
                       bool base_proposals = false);

  std::string name() const override { return "ct_joint/" + inner_->name(); }
  kernels::TransitionStats transition(kernels::ChainState& state, rng::Stream& stream) override;
  void begin_warmup(std::int64_t n_warmup) override;
  void adapt(std::int64_t warmup_iteration, const kernels::ChainState& state,
             const kernels::TransitionStats& stats) override {
    inner_->adapt(warmup_iteration, state, stats);
  }
  void end_warmup() override;
  double step_size() const override { return inner_->step_size(); }
  void report_estimates(std::map<std::string, double>& estimates) const override {
    tracker_.report(estimates);
  }
  const estimators::TemperingRbAccumulator& rb_accumulator() const { return tracker_.accumulator(); }
  // eq. (21) from the tracker's sums (kept anyway for the bootstrap refit: track_moments is moot).
  bool report_moments(Vector& mean, Matrix& covariance) const override {
    return tracker_.moments(mean, covariance);
  }
  bool report_base(Vector& mean, Matrix& covariance, double& log_zeta) const override {
    return report_tempering_base(space_->parts(), mean, covariance, log_zeta);
  }
  std::string fit_description() const override { return describe_tempering_base(space_->parts()); }

  bool can_checkpoint() const override { return inner_->can_checkpoint(); }
  void save_state(pemc::v1::KernelState& state) const override;
  void restore_state(const pemc::v1::KernelState& state) override;

 private:
  // The base proposal after the inner move (the state stays valid whether or not it is accepted);
  // returns the target gradients it cost.
  std::int64_t propose_from_base(kernels::ChainState& state, rng::Stream& stream);

  std::shared_ptr<const JointTemperingTarget> space_;
  kernels::KernelPtr inner_;
  RbTracker tracker_;
  bool base_proposals_ = false;
  kernels::ChainState proposal_;
};

class GibbsTemperingKernel final : public kernels::Kernel {
 public:
  // `inner` is built on `tempered` (the caller's factory).
  GibbsTemperingKernel(std::shared_ptr<const GibbsTemperingSpace> space,
                       std::shared_ptr<TemperedTarget> tempered, kernels::KernelPtr inner,
                       int n_batches = estimators::LogRatioBatchMeans::kDefaultBatches,
                       bool base_proposals = false);

  std::string name() const override { return "ct_gibbs/" + inner_->name(); }
  // One sweep: x | beta by the inner kernel at the state's beta (and, with base proposals, the
  // base proposal at that beta), then beta | x exactly (eq. (17)) from one uniform of `stream`
  // drawn after them.
  kernels::TransitionStats transition(kernels::ChainState& state, rng::Stream& stream) override;

  void begin_warmup(std::int64_t n_warmup) override;
  void adapt(std::int64_t warmup_iteration, const kernels::ChainState& state,
             const kernels::TransitionStats& stats) override;
  void end_warmup() override;
  double step_size() const override { return inner_->step_size(); }
  void report_estimates(std::map<std::string, double>& estimates) const override {
    tracker_.report(estimates);
  }
  const estimators::TemperingRbAccumulator& rb_accumulator() const { return tracker_.accumulator(); }
  // eq. (21) from the tracker's sums (kept anyway for the bootstrap refit: track_moments is moot).
  bool report_moments(Vector& mean, Matrix& covariance) const override {
    return tracker_.moments(mean, covariance);
  }
  bool report_base(Vector& mean, Matrix& covariance, double& log_zeta) const override {
    return report_tempering_base(space_->parts(), mean, covariance, log_zeta);
  }
  std::string fit_description() const override { return describe_tempering_base(space_->parts()); }

  bool can_checkpoint() const override { return inner_->can_checkpoint(); }
  // Also saves phi, psi and their gradients at the current x (kept between transitions): a
  // restored kernel does not re-evaluate them, so gradient counts match the uninterrupted chain.
  void save_state(pemc::v1::KernelState& state) const override;
  void restore_state(const pemc::v1::KernelState& state) override;

 private:
  std::shared_ptr<const GibbsTemperingSpace> space_;
  std::shared_ptr<TemperedTarget> tempered_;
  kernels::KernelPtr inner_;
  kernels::ChainState inner_state_;
  // phi, psi and their gradients at cur_x_ (the x part of the state last returned).
  Vector cur_x_;
  double cur_phi_ = 0.0, cur_psi_ = 0.0;
  Vector grad_phi_, grad_psi_;
  RbTracker tracker_;
  bool base_proposals_ = false;
  Vector prop_x_, prop_grad_phi_, prop_grad_psi_;
};

enum class TemperingVariant { kJoint, kGibbs };

struct ContinuousTemperingOptions {
  TemperingVariant variant = TemperingVariant::kJoint;
  double control_scale = 1.0;  // JOINT: c = sigmoid_scale * sqrt(control_mass)
  double initial_beta = 0.5;
  int n_batches = estimators::LogRatioBatchMeans::kDefaultBatches;  // for log_z_se
  bool base_proposals = false;  // see the top of this file
};

// The extended space and its kernel; the inner kernel is built by `inner` on the joint space
// (JOINT) or on the tempered x | beta target (GIBBS).
ExtendedSampler make_continuous_tempering(targets::TargetPtr target, BaseDensity base,
                                          const ContinuousTemperingOptions& options,
                                          const InnerKernelFactory& inner);

// From the config: the base (base_density_fit.hpp) is built here, once per call, a `mixture` base
// from `modes` (the run's mode search). Throws ConfigError naming
// sampler.continuous_tempering.<field>.
ExtendedSampler make_continuous_tempering(const v1::ContinuousTemperingConfig& config,
                                          targets::TargetPtr target,
                                          const InnerKernelFactory& inner,
                                          const modes::ModeSet* modes = nullptr);

}  // namespace pemc::extended
