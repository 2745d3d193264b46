#include "extended/pseudo_extended_target.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <span>

#include "core/error.hpp"
#include "core/numerics.hpp"

namespace pemc::extended {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Per-item header in the gathered array: [phi, status], then grad phi when gradients are wanted.
constexpr int kItemHeader = 2;

std::string num(double v) { return fmt::format("{}", v); }

void check_shape(const BetaShape& s, const std::string& what) {
  if (!(std::isfinite(s.a) && s.a > 0.0) || !(std::isfinite(s.b) && s.b > 0.0))
    throw ConfigError("pseudo-extended target: " + what +
                      " Beta shapes must be finite and > 0 (got a " + num(s.a) + ", b " + num(s.b) +
                      ")");
}

// `pick ? a : b` without a branch (the sign of eta is a coin flip per item, so a branch on it is
// mispredicted half the time); the values are exactly a or b.
inline double select(bool pick, double a, double b) {
  const std::uint64_t mask = std::uint64_t{0} - static_cast<std::uint64_t>(pick);
  return std::bit_cast<double>((std::bit_cast<std::uint64_t>(a) & mask) |
                               (std::bit_cast<std::uint64_t>(b) & ~mask));
}

// True when every v[0..n) is finite: v * 0 is 0 for finite v and NaN otherwise. Eigen's packet
// sum has no early exit (no data-dependent branch) and is 2-3x faster than allFinite() here.
inline bool all_finite(const double* v, std::size_t n) {
  return (Eigen::Map<const Eigen::ArrayXd>(v, static_cast<Eigen::Index>(n)) * 0.0).sum() == 0.0;
}

// c * log(v), with the convention 0 * log(0) = 0 so that a flat density never produces NaN.
inline double c_log(double c, double v) { return c == 0.0 ? 0.0 : c * std::log(v); }
inline double c_div(double c, double v) { return c == 0.0 ? 0.0 : c / v; }

}  // namespace

PseudoExtendedTarget::PseudoExtendedTarget(targets::TargetPtr base, PseudoExtendedOptions options,
                                           parallel::GroupCommPtr group)
    : base_(std::move(base)), options_(options), group_(std::move(group)) {
  if (!base_) throw ConfigError("pseudo-extended target: no base target");
  if (!group_) group_ = std::make_shared<parallel::SerialGroup>();
  n_ = options_.n_pseudo;
  d_ = base_->dim();
  if (n_ < 1)
    throw ConfigError("pseudo-extended target: n_pseudo must be >= 1 (got " + std::to_string(n_) +
                      ")");
  if (d_ < 1)
    throw ConfigError("pseudo-extended target: the base target has dimension " +
                      std::to_string(d_));
  const double lo = options_.beta_lower, hi = options_.beta_upper;
  if (options_.fixed_beta) {
    const double b = *options_.fixed_beta;
    if (!(b >= 0.0 && b <= 1.0))
      throw ConfigError("pseudo-extended target: fixed_beta must be in [0, 1] (got " + num(b) +
                        ")");
    fixed_.beta = b;
    fixed_.one_minus_beta = 1.0 - b;
    // pi(beta) and g(beta) are constants when beta is fixed: they cancel.
  } else {
    if (!(std::isfinite(lo) && std::isfinite(hi) && lo >= 0.0 && lo < hi && hi <= 1.0))
      throw ConfigError("pseudo-extended target: need 0 <= beta_lower < beta_upper <= 1 (got " +
                        num(lo) + ", " + num(hi) + ")");
    if (options_.beta_init && !(*options_.beta_init > lo && *options_.beta_init < hi))
      throw ConfigError("pseudo-extended target: beta_init must lie strictly inside (" + num(lo) +
                        ", " + num(hi) + ") (got " + num(*options_.beta_init) + ")");
    check_shape(options_.beta_target, "pi(beta)");
    check_shape(options_.beta_instrumental, "g(beta)");
    log_range_ = std::log(hi - lo);
  }
  dim_ = n_ * d_ + (options_.fixed_beta ? 0 : n_);
  log_n_ = std::log(static_cast<double>(n_));
  stride_grad_ = kItemHeader + d_;
  all_.assign(static_cast<std::size_t>(n_) * stride_grad_, 0.0);
  const int k = group_->size();
  const int max_block = (n_ + k - 1) / k;
  mine_.assign(static_cast<std::size_t>(max_block) * stride_grad_, 0.0);
  a_.assign(static_cast<std::size_t>(n_), 0.0);
  for (auto* v : {&beta_, &omb_, &dbeta_, &djac_, &dlog_ratio_, &dlog_g_})
    v->assign(static_cast<std::size_t>(n_), 0.0);
  flat_priors_ = options_.beta_target.flat() && options_.beta_instrumental.flat();
}

PseudoExtendedTarget::Temper PseudoExtendedTarget::temper(double eta, double e) const {
  // Logistic s = 1/(1+exp(-eta)) and 1 - s from e = exp(-|eta|), so that both stay accurate in
  // the tails (1 - beta is formed from 1 - s, never as 1 - beta). assemble() inlines the same.
  const double lo = options_.beta_lower, hi = options_.beta_upper, range = hi - lo;
  const double inv = 1.0 / (1.0 + e);
  const double s = eta >= 0.0 ? inv : e * inv;
  const double sm = eta >= 0.0 ? e * inv : inv;
  Temper t;
  t.beta = lo + range * s;
  t.one_minus_beta = (1.0 - hi) + range * sm;
  // log pi(beta) - log g(beta) and log g(beta) for Beta shapes (eq. 8); flat shapes cost nothing.
  const BetaShape& p = options_.beta_target;
  const BetaShape& g = options_.beta_instrumental;
  const double ca = p.a - g.a, cb = p.b - g.b;
  t.log_ratio = c_log(ca, t.beta) + c_log(cb, t.one_minus_beta);
  t.dlog_ratio = c_div(ca, t.beta) - c_div(cb, t.one_minus_beta);
  t.log_g = c_log(g.a - 1.0, t.beta) + c_log(g.b - 1.0, t.one_minus_beta);
  t.dlog_g = c_div(g.a - 1.0, t.beta) - c_div(g.b - 1.0, t.one_minus_beta);
  return t;
}

double PseudoExtendedTarget::beta(ConstVectorRef z, int i) const {
  if (options_.fixed_beta) return *options_.fixed_beta;
  const double eta = z[static_cast<Eigen::Index>(n_) * d_ + i];
  return temper(eta, std::exp(-std::fabs(eta))).beta;
}

double PseudoExtendedTarget::eta_of_beta(double beta) const {
  const double u = (beta - options_.beta_lower) / (options_.beta_upper - options_.beta_lower);
  return std::log(u) - std::log1p(-u);
}

void PseudoExtendedTarget::evaluate_items(ConstVectorRef z, bool with_grad) const {
  const int stride = with_grad ? stride_grad_ : kItemHeader;
  const int k = group_->size();
  if (k == 1) {
    // One member: evaluate straight into the global array; exceptions propagate unchanged.
    for (int i = 0; i < n_; ++i) {
      double* item = all_.data() + static_cast<std::size_t>(i) * stride;
      Eigen::Map<const Vector> x(z.data() + static_cast<Eigen::Index>(i) * d_, d_);
      if (with_grad) {
        Eigen::Map<Vector> g(item + kItemHeader, d_);
        item[0] = base_->potential_and_gradient(x, g);
      } else {
        item[0] = base_->potential(x);
      }
      item[1] = 0.0;
    }
    return;
  }
  // Several members: an exception on one member must not leave the others waiting in the
  // collective, so it travels as a status flag and every member throws after the gather.
  const auto block = group_->my_block(n_);
  for (int i = block.begin; i < block.end; ++i) {
    double* item = mine_.data() + static_cast<std::size_t>(i - block.begin) * stride;
    Eigen::Map<const Vector> x(z.data() + static_cast<Eigen::Index>(i) * d_, d_);
    try {
      if (with_grad) {
        Eigen::Map<Vector> g(item + kItemHeader, d_);
        item[0] = base_->potential_and_gradient(x, g);
      } else {
        item[0] = base_->potential(x);
      }
      item[1] = 0.0;
    } catch (const std::exception& e) {
      item[0] = kNaN;
      item[1] = 1.0;
      local_error_ = e.what();
    }
  }
  const std::size_t n_mine = static_cast<std::size_t>(block.end - block.begin) * stride;
  group_->allgather_blocks(std::span<const double>(mine_.data(), n_mine), n_, stride,
                           std::span<double>(all_.data(), static_cast<std::size_t>(n_) * stride));
  for (int i = 0; i < n_; ++i) {
    if (all_[static_cast<std::size_t>(i) * stride + 1] == 0.0) continue;
    const bool mine = i >= block.begin && i < block.end;
    throw NumericalError(
        "pseudo-extended target: the target threw at pseudo-sample " + std::to_string(i) +
        (mine ? ": " + local_error_ : " (on another member of the chain's group)"));
  }
}

double PseudoExtendedTarget::assemble(ConstVectorRef z, double* grad) const {
  const int stride = grad ? stride_grad_ : kItemHeader;
  auto reject = [&] {
    if (grad)
      for (int j = 0; j < dim_; ++j) grad[j] = kNaN;
    return kInf;
  };
  // A non-finite potential or gradient at any pseudo-sample rejects the whole point (the status
  // slots are 0 here, so every gathered value must be finite).
  if (!all_finite(all_.data(), static_cast<std::size_t>(n_) * stride)) return reject();
  // a_i (eq. 8: the terms of the sum) and the sums outside it, in global index order. This loop
  // is the sampler's whole per-item overhead, so it keeps to one exp and one division per item
  // and stores only what the gradient needs (see temper() for the same quantities commented).
  const bool sampled = !options_.fixed_beta;
  const Eigen::Index eta0 = static_cast<Eigen::Index>(n_) * d_;
  const double lo = options_.beta_lower, range = options_.beta_upper - options_.beta_lower;
  const double one_minus_hi = 1.0 - options_.beta_upper;
  double max_a = -kInf, outer = 0.0;
  // Product of the (1 + e_i) of the logit Jacobians, flushed into log_prod before its square can
  // overflow (each factor is in (1, 2]); its log is taken together with the log-sum-exp's.
  double prod = 1.0, log_prod = 0.0;
  for (int i = 0; i < n_; ++i) {
    const double phi = all_[static_cast<std::size_t>(i) * stride];
    double beta = fixed_.beta, omb = fixed_.one_minus_beta, log_ratio = 0.0;
    if (sampled) {
      const double eta = z[eta0 + i];
      const double e = std::exp(-std::fabs(eta));
      const double inv = 1.0 / (1.0 + e);
      const double s = select(eta >= 0.0, inv, e * inv);
      const double sm = select(eta >= 0.0, e * inv, inv);
      beta = lo + range * s;
      omb = one_minus_hi + range * sm;
      dbeta_[i] = range * s * sm;
      djac_[i] = sm - s;
      outer -= std::fabs(eta);  // log J_i = log(hi - lo) - |eta_i| - 2 log(1 + e_i)
      prod *= 1.0 + e;
      if (prod > 1e150) {
        log_prod += std::log(prod);
        prod = 1.0;
      }
      if (!flat_priors_) {
        const Temper t = temper(eta, e);
        log_ratio = t.log_ratio;
        outer += t.log_g;
        dlog_ratio_[i] = t.dlog_ratio;
        dlog_g_[i] = t.dlog_g;
      }
    }
    beta_[i] = beta;
    omb_[i] = omb;
    const double a = log_ratio - omb * phi;
    a_[i] = a;
    if (a > max_a) max_a = a;
    outer -= beta * phi;
  }
  if (!std::isfinite(max_a)) return reject();
  // Sum of log J_i (eq. 8 on the logit scale), except -2 log(prod); zero for fixed beta.
  if (sampled) outer += n_ * log_range_ - 2.0 * log_prod;
  double sum = 0.0;
  for (int i = 0; i < n_; ++i) {
    a_[i] = std::exp(a_[i] - max_a);  // now the unnormalised weights exp(a_i - max)
    sum += a_[i];
  }
  // log sum - 2 log prod in one log (prod = 1 for fixed beta).
  const double log_density = max_a + std::log(sum / (prod * prod)) - log_n_ + outer;
  if (!std::isfinite(log_density)) return reject();
  if (grad) {
    const double inv_sum = 1.0 / sum;
    for (int i = 0; i < n_; ++i) {
      const double* item = all_.data() + static_cast<std::size_t>(i) * stride;
      const double w = a_[i] * inv_sum;
      const double c = beta_[i] + w * omb_[i];
      double* gx = grad + static_cast<std::size_t>(i) * d_;
      for (int j = 0; j < d_; ++j) gx[j] = c * item[kItemHeader + j];
      if (sampled) {
        const double phi = item[0];
        double dlogp_dbeta = (w - 1.0) * phi;
        if (!flat_priors_) dlogp_dbeta += w * dlog_ratio_[i] + dlog_g_[i];
        grad[eta0 + i] = -(dlogp_dbeta * dbeta_[i] + djac_[i]);
      }
    }
    // The x-gradients are c_i (in [0, 1]) times finite values; only the eta-gradients can overflow.
    if (sampled && !all_finite(grad + eta0, static_cast<std::size_t>(n_))) return reject();
  }
  return -log_density;
}

double PseudoExtendedTarget::potential(ConstVectorRef z) const {
  evaluate_items(z, false);
  return assemble(z, nullptr);
}

double PseudoExtendedTarget::potential_and_gradient(ConstVectorRef z, VectorRef grad) const {
  evaluate_items(z, true);
  return assemble(z, grad.data());
}

bool PseudoExtendedTarget::weighted_view(ConstVectorRef z, targets::WeightedView& out) const {
  out.samples.resize(d_, n_);
  out.log_weights.resize(n_);
  out.extra.resize(static_cast<std::size_t>(n_));
  const Eigen::Index eta0 = static_cast<Eigen::Index>(n_) * d_;
  for (int i = 0; i < n_; ++i) {
    Eigen::Map<const Vector> x(z.data() + static_cast<Eigen::Index>(i) * d_, d_);
    out.samples.col(i) = x;
    const double eta = options_.fixed_beta ? 0.0 : z[eta0 + i];
    const Temper t = options_.fixed_beta ? fixed_ : temper(eta, std::exp(-std::fabs(eta)));
    const double phi = base_->potential(x);
    // Theorem 2.1: weight ∝ gamma(x_i) pi(beta_i) / q(x_i, beta_i) = exp(a_i). A pseudo-sample
    // with an unusable potential (never the case at a valid chain state) gets weight zero.
    const double a = t.log_ratio - t.one_minus_beta * phi;
    out.log_weights[i] = std::isnan(a) ? -kInf : a;
    out.extra[static_cast<std::size_t>(i)] = t.beta;
  }
  return true;
}

void PseudoExtendedTarget::initial_point(const std::function<void(VectorRef)>& draw_original,
                                         VectorRef z) const {
  for (int i = 0; i < n_; ++i) {
    Eigen::Map<Vector> x(z.data() + static_cast<Eigen::Index>(i) * d_, d_);
    draw_original(x);
  }
  if (options_.fixed_beta) return;
  const double eta = options_.beta_init ? eta_of_beta(*options_.beta_init) : 0.0;
  z.tail(n_).setConstant(eta);
}

}  // namespace pemc::extended
