#include "extended/pseudo_extended_target.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <new>
#include <span>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/batched_exp.hpp"
#include "core/error.hpp"
#include "core/numerics.hpp"

namespace pemc::extended {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The record of one pseudo-sample that the members exchange (the same layout with one member):
// everything the log-sum-exp, the sums outside it and the eta-gradient need from item i.
enum Slot : int {
  kStatus,     // kOk, kNonFinite (phi or grad phi) or kThrew (the base target threw)
  kPhi,        // phi_i
  kA,          // a_i = log pi(beta_i) - log g(beta_i) - (1 - beta_i) phi_i
  kOuter,      // log g(beta_i) - |eta_i| - beta_i phi_i: item i's share of the sum outside the
               // log-sum-exp (log J_i's log(hi - lo) and -2 log(1 + e_i) are added in assemble)
  kJacFactor,  // 1 + e_i, e_i = exp(-|eta_i|)
  kDbeta,      // d beta_i / d eta_i
  kDjac,       // d log J_i / d eta_i
  kDlogRatio,  // (log pi - log g)'(beta_i)   (non-flat priors only)
  kDlogG,      // (log g)'(beta_i)             (non-flat priors only)
  kSlots
};
// Records hold only the slots the mode uses: fixed beta up to kOuter, flat priors up to kDjac.
constexpr int kSlotsFixed = kJacFactor, kSlotsFlat = kDlogRatio;
constexpr double kOk = 0.0, kNonFinite = 1.0, kThrew = 2.0;
// weighted_view's record: [a_i, beta_i, status].
constexpr int kViewSlots = 3;

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

// beta = lo + (hi - lo) logistic(eta) from e = exp(-|eta|): the logistic s = 1/(1+exp(-eta)) and
// 1 - s both formed from e, so that both stay accurate in the tails (1 - beta is formed from 1 - s,
// never as 1 - beta), selected without a branch on the sign of eta. Every path uses this one
// function, which keeps their bits equal (the group and one-member paths are compared bit for bit).
struct Logistic {
  double s, sm, beta, one_minus_beta;
};
inline Logistic logistic(double eta, double e, double lo, double hi) {
  const double range = hi - lo;
  const double inv = 1.0 / (1.0 + e);
  const double s = select(eta >= 0.0, inv, e * inv);
  const double sm = select(eta >= 0.0, e * inv, inv);
  return {s, sm, lo + range * s, (1.0 - hi) + range * sm};
}

// True when every v[0..n) is finite: v * 0 is 0 for finite v and NaN otherwise. Eigen's packet
// sum has no early exit (no data-dependent branch) and is 2-3x faster than allFinite() here.
inline bool all_finite(const double* v, std::size_t n) {
  return (Eigen::Map<const Eigen::ArrayXd>(v, static_cast<Eigen::Index>(n)) * 0.0).sum() == 0.0;
}

// v[0..n) *= c, two entries per SSE2 multiplication where it can (the same products): the
// kernel then reads the gradient two at a time (its copies of a point, the leapfrog), and such a
// read is forwarded from one 16-byte store but stalls on two 8-byte ones.
inline void scale(double* v, int n, double c) {
  int j = 0;
#if defined(__SSE2__)
  const __m128d c2 = _mm_set1_pd(c);
  for (; j + 2 <= n; j += 2) _mm_storeu_pd(v + j, _mm_mul_pd(_mm_loadu_pd(v + j), c2));
#endif
  for (; j < n; ++j) v[j] *= c;
}

// c * log(v), with the convention 0 * log(0) = 0 so that a flat density never produces NaN.
inline double c_log(double c, double v) { return c == 0.0 ? 0.0 : c * std::log(v); }
inline double c_div(double c, double v) { return c == 0.0 ? 0.0 : c / v; }

}  // namespace

PseudoExtendedTarget::PseudoExtendedTarget(targets::TargetPtr base, PseudoExtendedOptions options,
                                           parallel::GroupCommPtr group)
    : base_(std::move(base)),
      options_(options),
      group_(group ? std::move(group) : std::make_shared<parallel::SerialGroup>()),
      blocks_({std::max(1, options.n_pseudo), base_ ? std::max(1, base_->dim()) : 1,
               !options.fixed_beta.has_value()},
              group_) {
  if (!base_) throw ConfigError("pseudo-extended target: no base target");
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
  // The extended state must fit a Target's int dimension; one that does not (more than 2^31
  // doubles, 16 GiB) cannot be allocated either, which is how callers report it (runner/run_plan.cpp
  // turns std::bad_alloc into a size error naming the sampler and the target's dimension).
  const std::int64_t dim = static_cast<std::int64_t>(n_) * (d_ + (options_.fixed_beta ? 0 : 1));
  if (dim > std::numeric_limits<int>::max()) throw std::bad_alloc();
  dim_ = static_cast<int>(dim);
  log_n_ = std::log(static_cast<double>(n_));
  flat_priors_ = options_.beta_target.flat() && options_.beta_instrumental.flat();
  stride_ = options_.fixed_beta ? kSlotsFixed : flat_priors_ ? kSlotsFlat : kSlots;
  // weighted_view's records (kViewSlots) reuse these buffers.
  const std::size_t slots = static_cast<std::size_t>(std::max(stride_, kViewSlots));
  all_.assign(static_cast<std::size_t>(n_) * slots, 0.0);
  if (group_->size() > 1) mine_.assign(static_cast<std::size_t>(blocks_.n_local()) * slots, 0.0);
  w_.assign(static_cast<std::size_t>(n_), 0.0);
  e_.assign(static_cast<std::size_t>(std::max(1, blocks_.n_local())), 0.0);
  phi_.assign(static_cast<std::size_t>(std::max(1, blocks_.n_local())), 0.0);
  beta_.assign(static_cast<std::size_t>(n_), 0.0);
  omb_.assign(static_cast<std::size_t>(n_), 0.0);
  // (One member: e_ and phi_ above already hold all n_ items.)
  serial_fast_ = group_->size() == 1 && !options_.fixed_beta;
  if (serial_fast_) {
    s_.assign(static_cast<std::size_t>(n_), 0.0);
    sm_.assign(static_cast<std::size_t>(n_), 0.0);
    if (!flat_priors_)
      for (auto* v : {&log_ratio_, &log_g_, &dlog_ratio_, &dlog_g_})
        v->assign(static_cast<std::size_t>(n_), 0.0);
  }
}

PseudoExtendedTarget::Temper PseudoExtendedTarget::temper(double eta, double e) const {
  const Logistic l = logistic(eta, e, options_.beta_lower, options_.beta_upper);
  Temper t;
  t.beta = l.beta;
  t.one_minus_beta = l.one_minus_beta;
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

std::optional<estimators::WeightDegeneracy> PseudoExtendedTarget::make_degeneracy_tracker() const {
  if (n_ < 2) return std::nullopt;
  return estimators::WeightDegeneracy(n_, options_.beta_lower, options_.beta_upper);
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

void PseudoExtendedTarget::item_terms(const double* z, double* out) const {
  // The sampler's whole per-item overhead: one exp (batched over this member's items) and one
  // division per item (see temper() for the same quantities commented). None of it depends on
  // phi_i, so it runs before the base target's evaluations, and the CPU overlaps the two; the
  // terms that do depend on phi_i (a_i, the outer sum) are completed by evaluate_items.
  const bool sampled = !options_.fixed_beta;
  const double lo = options_.beta_lower, hi = options_.beta_upper, range = hi - lo;
  const std::size_t eta0 = static_cast<std::size_t>(n_) * d_;
  const int first = blocks_.first_item(), end = blocks_.end_item();
  const auto n_local = static_cast<std::size_t>(end - first);
  if (sampled) {
    // e_i = exp(-|eta_i|) for every local item at once (0 for |eta_i| > 708, where the exact
    // value is below 2^-1021 and every quantity below rounds as if it were 0).
    for (std::size_t j = 0; j < n_local; ++j) e_[j] = -std::fabs(z[eta0 + first + j]);
    exp_nonpositive(std::span<const double>(e_.data(), n_local),
                    std::span<double>(e_.data(), n_local));
  }
  for (int i = first; i < end; ++i) {
    const auto j = static_cast<std::size_t>(i - first);
    double* rec = out + j * stride_;
    double beta = fixed_.beta, omb = fixed_.one_minus_beta, log_ratio = 0.0, outer = 0.0;
    if (sampled) {
      const double eta = z[eta0 + i];
      const double e = e_[j];
      const Logistic l = logistic(eta, e, lo, hi);
      beta = l.beta;
      omb = l.one_minus_beta;
      rec[kJacFactor] = 1.0 + e;
      rec[kDbeta] = range * l.s * l.sm;
      rec[kDjac] = l.sm - l.s;
      outer = -std::fabs(eta);  // log J_i = log(hi - lo) - |eta_i| - 2 log(1 + e_i)
      if (!flat_priors_) {
        const Temper t = temper(eta, e);
        log_ratio = t.log_ratio;
        outer += t.log_g;
        rec[kDlogRatio] = t.dlog_ratio;
        rec[kDlogG] = t.dlog_g;
      }
    }
    beta_[static_cast<std::size_t>(i)] = beta;
    omb_[static_cast<std::size_t>(i)] = omb;
    // evaluate_items subtracts (1 - beta_i) phi_i and beta_i phi_i.
    rec[kA] = log_ratio;
    rec[kOuter] = outer;
  }
}

void PseudoExtendedTarget::evaluate_items(const double* z, double* grad) const {
  const int first = blocks_.first_item(), end = blocks_.end_item();
  const auto n_local = static_cast<std::size_t>(end - first);
  const auto d = static_cast<std::size_t>(d_);
  const bool serial = group_->size() == 1;
  // One member: the records go straight into all_ and exceptions propagate unchanged. Several:
  // an exception on one member must not leave the others waiting in the exchange, so it travels
  // as a status and every member throws after it.
  double* out = serial ? all_.data() : mine_.data();
  error_item_ = -1;
  item_terms(z, out);
  // phi_i (and grad phi_i into the gradient's x_i block) of every local item in one batch call:
  // this member's x_i are contiguous, and a target that vectorises across points (the mixture)
  // shares the work (Target::potential_and_gradient_batch; its per-point contract keeps a
  // chain's bits independent of how its items are split over members). Item by item only to
  // find which item threw.
  auto one = [&](int i) {
    Eigen::Map<const Vector> x(z + static_cast<std::size_t>(i) * d, d_);
    if (!grad) return base_->potential(x);
    Eigen::Map<Vector> g(grad + static_cast<std::size_t>(i) * d, d_);
    return base_->potential_and_gradient(x, g);
  };
  // potential() takes the same path, its gradients to scratch, so that its phi_i are those of
  // potential_and_gradient bit for bit (a batch may round differently from single calls).
  auto batch = [&] {
    const std::size_t cells = n_local * d, offset = static_cast<std::size_t>(first) * d;
    if (!grad && grad_scratch_.size() < cells) grad_scratch_.assign(cells, 0.0);
    base_->potential_and_gradient_batch(
        std::span<const double>(z + offset, cells), std::span<double>(phi_.data(), n_local),
        std::span<double>(grad ? grad + offset : grad_scratch_.data(), cells));
  };
  for (std::size_t j = 0; j < n_local; ++j) out[j * stride_ + kStatus] = kOk;
  if (serial) {
    batch();
  } else {
    bool threw = false;
    try {
      batch();
    } catch (const std::exception&) {
      threw = true;  // which item? evaluate them one by one below
    }
    if (threw) {
      for (int i = first; i < end; ++i) {
        const auto j = static_cast<std::size_t>(i - first);
        try {
          phi_[j] = one(i);
        } catch (const std::exception& e) {
          std::fill(out + j * stride_, out + (j + 1) * stride_, 0.0);
          out[j * stride_ + kStatus] = kThrew;
          phi_[j] = 0.0;
          if (error_item_ < 0) {
            error_item_ = i;
            local_error_ = e.what();
          }
        }
      }
    }
  }
  double phi_check = 0.0;  // sum of phi_i * 0: NaN unless every phi_i is finite
  for (std::size_t j = 0; j < n_local; ++j) {
    double* rec = out + j * stride_;
    if (rec[kStatus] == kThrew) continue;
    const double phi = phi_[j];
    const auto i = static_cast<std::size_t>(first) + j;
    phi_check += phi * 0.0;
    rec[kPhi] = phi;
    // a_i = log pi(beta_i) - log g(beta_i) - (1 - beta_i) phi_i and item i's outer term.
    rec[kA] -= omb_[i] * phi;
    rec[kOuter] -= beta_[i] * phi;
  }
  // One check over this member's phi_i and its whole (contiguous) block of grad phi_i, reported
  // as the status of its first item: any non-finite value rejects the point on every member.
  if (end > first) {
    const bool finite = phi_check == 0.0 &&
                        (!grad || all_finite(grad + static_cast<std::size_t>(first) * d, n_local * d));
    if (!finite && out[kStatus] == kOk) out[kStatus] = kNonFinite;
  }
  if (!serial) {
    const std::size_t n_mine = n_local * stride_;
    blocks_.gather_items(std::span<const double>(mine_.data(), n_mine), stride_,
                         std::span<double>(all_.data(), static_cast<std::size_t>(n_) * stride_));
  }
}

double PseudoExtendedTarget::assemble(double* grad) const {
  const int first = blocks_.first_item(), end = blocks_.end_item();
  const bool sampled = !options_.fixed_beta;
  const Eigen::Index eta0 = static_cast<Eigen::Index>(n_) * d_;
  const double* all = all_.data();
  auto rec = [&](int i) { return all + static_cast<std::size_t>(i) * stride_; };
  if (grad && group_->size() > 1) blocks_.zero_nonlocal(Eigen::Map<Vector>(grad, dim_));
  auto reject = [&] {
    if (grad)
      for (const auto& r : blocks_.local_ranges()) std::fill_n(grad + r.begin, r.size, kNaN);
    return kInf;
  };
  // In index order: the statuses, max a_i, the sums outside the log-sum-exp, and the product of
  // the (1 + e_i) of the logit Jacobians, flushed into log_prod before its square can overflow
  // (each factor is in (1, 2]); its log is taken together with the log-sum-exp's.
  int threw = -1;
  bool nonfinite = false;
  double max_a = -kInf, outer = 0.0, prod = 1.0, log_prod = 0.0;
  for (int i = 0; i < n_; ++i) {
    const double* r = rec(i);
    if (r[kStatus] != kOk) {
      if (r[kStatus] == kThrew && threw < 0) threw = i;
      nonfinite = true;
    }
    if (r[kA] > max_a) max_a = r[kA];
    outer += r[kOuter];
    if (sampled) {
      prod *= r[kJacFactor];
      if (prod > 1e150) {
        log_prod += std::log(prod);
        prod = 1.0;
      }
    }
  }
  // A throw anywhere throws on every member (the first in index order).
  if (threw >= 0)
    throw NumericalError(
        "pseudo-extended target: the target threw at pseudo-sample " + std::to_string(threw) +
        (threw == error_item_ ? ": " + local_error_ : " (on another member of the chain's group)"));
  if (nonfinite || !std::isfinite(max_a)) return reject();
  // Sum of log J_i (eq. 8 on the logit scale), except -2 log(prod); zero for fixed beta.
  if (sampled) outer += n_ * log_range_ - 2.0 * log_prod;
  // The unnormalised weights exp(a_i - max), batched (0 below 2^-1021, see item_terms).
  const auto n_items = static_cast<std::size_t>(n_);
  for (std::size_t i = 0; i < n_items; ++i) w_[i] = all[i * stride_ + kA] - max_a;
  exp_nonpositive(std::span<const double>(w_.data(), n_items),
                    std::span<double>(w_.data(), n_items));
  double sum = 0.0;
  for (std::size_t i = 0; i < n_items; ++i) sum += w_[i];
  // log sum - 2 log prod in one log (prod = 1 for fixed beta).
  const double log_density = max_a + std::log(sum / (prod * prod)) - log_n_ + outer;
  if (!std::isfinite(log_density)) return reject();
  if (!grad) return -log_density;
  const double inv_sum = 1.0 / sum;
  // Every member forms every eta-gradient (O(N) scalars) so that a non-finite one rejects the
  // point on all of them; each stores its own, and scales its own x-gradients. Only the
  // eta-gradients can overflow: the x-gradients are c_i (in [0, 1]) times finite values.
  double check = 0.0;
  for (int i = 0; i < n_; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const double w = w_[k] * inv_sum;
    const bool mine = i >= first && i < end;
    if (sampled) {
      const double* r = rec(i);
      double dlogp_dbeta = (w - 1.0) * r[kPhi];
      if (!flat_priors_) dlogp_dbeta += w * r[kDlogRatio] + r[kDlogG];
      const double g = -(dlogp_dbeta * r[kDbeta] + r[kDjac]);
      check += g * 0.0;
      if (mine) grad[eta0 + i] = g;
    }
    if (mine) {
      const double c = beta_[k] + w * omb_[k];
      scale(grad + k * static_cast<std::size_t>(d_), d_, c);
    }
  }
  if (!(check == 0.0)) return reject();
  return -log_density;
}

// z.data(), not the Ref: copying a Ref into a by-value parameter stalls on the caller's
// just-written Ref (a 16-byte load from two 8-byte stores defeats store forwarding).
double PseudoExtendedTarget::potential(ConstVectorRef z) const {
  evaluate_items(z.data(), nullptr);
  return assemble(nullptr);
}

double PseudoExtendedTarget::potential_and_gradient(ConstVectorRef z, VectorRef grad) const {
  if (serial_fast_) return serial_sampled(z.data(), grad.data());
  evaluate_items(z.data(), grad.data());
  return assemble(grad.data());
}

double PseudoExtendedTarget::potential_and_gradient_given(ConstVectorRef z,
                                                          std::span<const double> phi,
                                                          VectorRef grad) const {
  if (!serial_fast_)
    throw ConfigError("pseudo-extended target: given base values need one member with sampled "
                      "beta");
  if (phi.size() != static_cast<std::size_t>(n_) || z.size() != dim_ || grad.size() != dim_)
    throw ConfigError("pseudo-extended target: given base values of the wrong size");
  std::copy(phi.begin(), phi.end(), phi_.begin());
  return serial_sampled(z.data(), grad.data(), /*evaluate_base=*/false);
}

double PseudoExtendedTarget::serial_sampled(const double* z, double* grad,
                                            bool evaluate_base) const {
  // Every expression below is item_terms', evaluate_items' or assemble's for this case (with flat
  // priors: log_ratio = 0 and no prior terms), in the same order; the comments there say why.
  const double lo = options_.beta_lower, hi = options_.beta_upper, range = hi - lo;
  const auto n = static_cast<std::size_t>(n_), d = static_cast<std::size_t>(d_);
  const double* eta = z + n * d;
  double* e = e_.data();
  double* w = w_.data();
  for (std::size_t i = 0; i < n; ++i) e[i] = -std::fabs(eta[i]);
  exp_nonpositive(std::span<const double>(e, n), std::span<double>(e, n));
  for (std::size_t i = 0; i < n; ++i) {
    const Logistic l = logistic(eta[i], e[i], lo, hi);
    s_[i] = l.s;
    sm_[i] = l.sm;
    beta_[i] = l.beta;
    omb_[i] = l.one_minus_beta;
  }
  if (!flat_priors_)
    for (std::size_t i = 0; i < n; ++i) {
      const Temper t = temper(eta[i], e[i]);
      log_ratio_[i] = t.log_ratio;
      log_g_[i] = t.log_g;
      dlog_ratio_[i] = t.dlog_ratio;
      dlog_g_[i] = t.dlog_g;
    }
  if (evaluate_base)
    base_->potential_and_gradient_batch(std::span<const double>(z, n * d),
                                        std::span<double>(phi_.data(), n),
                                        std::span<double>(grad, n * d));
  // a_i, the sums outside the log-sum-exp, the Jacobians' product and max a_i, in index order.
  double phi_check = 0.0, max_a = -kInf, outer = 0.0, prod = 1.0, log_prod = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double phi = phi_[i];
    phi_check += phi * 0.0;
    const double log_ratio = flat_priors_ ? 0.0 : log_ratio_[i];
    const double a = log_ratio - omb_[i] * phi;
    w[i] = a;
    if (a > max_a) max_a = a;
    if (flat_priors_)
      outer += -std::fabs(eta[i]) - beta_[i] * phi;
    else
      outer += (-std::fabs(eta[i]) + log_g_[i]) - beta_[i] * phi;
    prod *= 1.0 + e[i];
    if (prod > 1e150) {
      log_prod += std::log(prod);
      prod = 1.0;
    }
  }
  auto reject = [&] {
    std::fill_n(grad, static_cast<std::size_t>(dim_), kNaN);
    return kInf;
  };
  if (!(phi_check == 0.0) || !all_finite(grad, n * d) || !std::isfinite(max_a)) return reject();
  outer += n_ * log_range_ - 2.0 * log_prod;
  for (std::size_t i = 0; i < n; ++i) w[i] = w[i] - max_a;
  exp_nonpositive(std::span<const double>(w, n), std::span<double>(w, n));
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += w[i];
  const double log_density = max_a + std::log(sum / (prod * prod)) - log_n_ + outer;
  if (!std::isfinite(log_density)) return reject();
  const double inv_sum = 1.0 / sum;
  double check = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double wi = w[i] * inv_sum;
    double dlogp_dbeta = (wi - 1.0) * phi_[i];
    if (!flat_priors_) dlogp_dbeta += wi * dlog_ratio_[i] + dlog_g_[i];
    const double g = -(dlogp_dbeta * (range * s_[i] * sm_[i]) + (sm_[i] - s_[i]));
    check += g * 0.0;
    grad[n * d + i] = g;
    scale(grad + i * d, d_, beta_[i] + wi * omb_[i]);
  }
  if (!(check == 0.0)) return reject();
  return -log_density;
}

bool PseudoExtendedTarget::weighted_view(ConstVectorRef z, targets::WeightedView& out) const {
  out.samples.resize(d_, n_);
  out.log_weights.resize(n_);
  out.extra.resize(static_cast<std::size_t>(n_));
  const Eigen::Index eta0 = static_cast<Eigen::Index>(n_) * d_;
  const int first = blocks_.first_item(), end = blocks_.end_item();
  const bool serial = group_->size() == 1;
  // [a_i, beta_i, status] per item: this member's into its own slots, then exchanged (k > 1).
  double* view = serial ? all_.data() : mine_.data();
  error_item_ = -1;
  for (int i = first; i < end; ++i) {
    double* rec = view + static_cast<std::size_t>(i - first) * kViewSlots;
    Eigen::Map<const Vector> x(z.data() + static_cast<Eigen::Index>(i) * d_, d_);
    const double eta = options_.fixed_beta ? 0.0 : z[eta0 + i];
    const Temper t = options_.fixed_beta ? fixed_ : temper(eta, std::exp(-std::fabs(eta)));
    double phi = kNaN;
    rec[2] = kOk;
    if (serial) {
      phi = base_->potential(x);
    } else {
      try {
        phi = base_->potential(x);
      } catch (const std::exception& e) {
        rec[2] = kThrew;
        if (error_item_ < 0) {
          error_item_ = i;
          local_error_ = e.what();
        }
      }
    }
    // Theorem 2.1: weight ∝ gamma(x_i) pi(beta_i) / q(x_i, beta_i) = exp(a_i). A pseudo-sample
    // with an unusable potential (never the case at a valid chain state) gets weight zero.
    const double a = t.log_ratio - t.one_minus_beta * phi;
    rec[0] = std::isnan(a) ? -kInf : a;
    rec[1] = t.beta;
  }
  if (!serial)
    blocks_.gather_items(
        std::span<const double>(mine_.data(), static_cast<std::size_t>(end - first) * kViewSlots),
        kViewSlots, std::span<double>(all_.data(), static_cast<std::size_t>(n_) * kViewSlots));
  for (int i = 0; i < n_; ++i) {
    const double* rec = all_.data() + static_cast<std::size_t>(i) * kViewSlots;
    if (rec[2] == kThrew)
      throw NumericalError(
          "pseudo-extended target: the target threw at pseudo-sample " + std::to_string(i) +
          (i == error_item_ ? ": " + local_error_ : " (on another member of the chain's group)"));
    out.samples.col(i) = Eigen::Map<const Vector>(z.data() + static_cast<Eigen::Index>(i) * d_, d_);
    out.log_weights[i] = rec[0];
    out.extra[static_cast<std::size_t>(i)] = rec[1];
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
