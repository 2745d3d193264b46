#include "modes/mode_occupancy.hpp"

#include <boost/math/distributions/chi_squared.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "pemc/v1/records.pb.h"

namespace pemc::modes {
namespace {

constexpr double kOutsideTail = 1e-6;        // chi-square tail beyond which a point is outside
constexpr double kRescaleMargin = 30.0;      // rescale global weights when one exceeds the scale by this
constexpr double kRhatLimit = 1.05;
constexpr double kMinUnvisitedShare = 1e-3;  // Laplace share a never-visited mode must have ...
constexpr double kMinExpectedDraws = 10.0;   // ... and its expected effective draws over the run

}  // namespace

// ---- assignment --------------------------------------------------------------------------------

ModeAssigner::ModeAssigner(const ModeSet& set) {
  const auto shares = set.laplace_shares();
  const auto n = static_cast<Eigen::Index>(set.modes.size());
  means_.resize(set.dim, n);
  log_weight_norms_.resize(n);
  mean_norms2_.resize(n);
  half_min_curvature_.resize(n);
  for (std::size_t k = 0; k < set.modes.size(); ++k) {
    const Mode& m = set.modes[k];
    const auto i = static_cast<Eigen::Index>(k);
    r_upper_.push_back(m.hessian_cholesky.transpose());
    means_.col(i) = m.location;
    mean_norms2_[i] = m.location.squaredNorm();
    log_weight_norms_[i] =
        std::log(shares[k]) + m.hessian_cholesky.diagonal().array().log().sum();
    // lambda_min(H) from the symmetric eigensolver, whose eigenvalues are exact to about
    // d eps lambda_max: shrunk by far more than that (and by 1e-6 relative for the rounding of
    // the distances), the bound holds for the computed scores too.
    const Matrix h = m.hessian_cholesky * m.hessian_cholesky.transpose();
    const Eigen::SelfAdjointEigenSolver<Matrix> eigen(h, Eigen::EigenvaluesOnly);
    const double lo = eigen.eigenvalues().minCoeff(), hi = eigen.eigenvalues().maxCoeff();
    const double safe = (1.0 - 1e-6) * lo - 1e-10 * std::max(hi, 0.0);
    half_min_curvature_[i] = eigen.info() == Eigen::Success && std::isfinite(safe)
                                 ? 0.5 * std::max(safe, 0.0)
                                 : 0.0;  // no bound: always scored
  }
  const boost::math::chi_squared_distribution<double> chi2(std::max(1, set.dim));
  outside_distance2_ = boost::math::quantile(boost::math::complement(chi2, kOutsideTail));
  scratch_.resize(set.dim);
}

double ModeAssigner::distance2(int k, ConstVectorRef x) const {
  scratch_ = x - means_.col(k);
  scratch_ = r_upper_[static_cast<std::size_t>(k)].triangularView<Eigen::Upper>() * scratch_;
  return scratch_.squaredNorm();
}

ModeAssigner::Scored ModeAssigner::score_every_mode(ConstVectorRef x) const {
  Scored s;
  double best_score = -std::numeric_limits<double>::infinity();
  for (int k = 0; k < n_modes(); ++k) {
    const double d2 = distance2(k, x);
    s.inside_any = s.inside_any || d2 <= outside_distance2_;
    const double score = log_weight_norms_[k] - 0.5 * d2;
    if (score > best_score) {
      best_score = score;
      s.best = k;
    }
  }
  return s;
}

int ModeAssigner::assign_exhaustively(ConstVectorRef x) const {
  const auto s = score_every_mode(x);
  return s.inside_any ? s.best : n_modes();
}

int ModeAssigner::best_mode(ConstVectorRef x) const { return score_every_mode(x).best; }

int ModeAssigner::assign(ConstVectorRef x) const {
  const int n = n_modes();
  if (n == 0) return 0;
  // lower_k <= |R_k'(x - m_k)|^2 is lambda_min |x - m_k|^2, shrunk, and bound_k the most mode k
  // can score. |x - m_k|^2 = |x|^2 - 2 m_k'x + |m_k|^2 comes from one matrix-vector product, less
  // a margin for the cancellation in that sum (far above its rounding, ~d eps (|x|^2 + |m_k|^2)).
  const double x2 = x.squaredNorm();
  euclid_scratch_.noalias() = means_.transpose() * x;
  lower_scratch_ =
      (2.0 * half_min_curvature_.array() *
       ((mean_norms2_.array() - 2.0 * euclid_scratch_.array() + x2) -
        1e-10 * (mean_norms2_.array() + x2))
           .max(0.0))
          .matrix();
  bound_scratch_ = log_weight_norms_ - 0.5 * lower_scratch_;
  const int first = last_;  // a mode index: set only from an answer below n
  int best = first;
  double best_d2 = distance2(first, x);
  double best_score = log_weight_norms_[first] - 0.5 * best_d2;
  for (int k = 0; k < n; ++k) {
    // Scored only when it could beat the best, or equal it with a lower index.
    if (k == first || bound_scratch_[k] < best_score ||
        (bound_scratch_[k] == best_score && k > best))
      continue;
    const double d2 = distance2(k, x);
    const double score = log_weight_norms_[k] - 0.5 * d2;
    if (score > best_score || (score == best_score && k < best)) {
      best_score = score;
      best = k;
      best_d2 = d2;
    }
  }
  // NaN scores (a non-finite point) never win: the brute force returns "outside" then.
  if (!(best_d2 <= outside_distance2_)) {
    bool inside_any = false;
    for (int k = 0; k < n && !inside_any; ++k)
      if (k != best && !(lower_scratch_[k] > outside_distance2_))
        inside_any = distance2(k, x) <= outside_distance2_;
    if (!inside_any) return n;
  }
  last_ = best;
  return best;
}

// ---- one chain's occupancy ---------------------------------------------------------------------

ModeOccupancy::ModeOccupancy(const ModeSet& set, std::int64_t n_draws, bool weights_within_draw)
    : assigner_(set), half_boundary_(n_draws / 2), within_draw_(weights_within_draw) {
  for (auto& h : halves_) h.weight.assign(static_cast<std::size_t>(assigner_.n_modes()) + 1, 0.0);
}

void ModeOccupancy::rescale(double new_log_scale) {
  const double f = std::exp(log_scale_ - new_log_scale);
  for (auto& h : halves_) {
    for (auto& w : h.weight) w *= f;
    h.total *= f;
    h.total_sq *= f * f;
  }
  log_scale_ = new_log_scale;
}

void ModeOccupancy::add(std::int64_t index, ConstVectorRef x) {
  Half& h = halves_[index < half_boundary_ ? 0 : 1];
  h.weight[static_cast<std::size_t>(assigner_.assign(x))] += 1.0;
  h.total += 1.0;
  h.total_sq += 1.0;
}

void ModeOccupancy::add(std::int64_t index, const Matrix& samples,
                        std::span<const double> log_weights) {
  const auto n = static_cast<std::size_t>(samples.cols());
  if (log_weights.empty()) {
    for (Eigen::Index j = 0; j < samples.cols(); ++j) add(index, samples.col(j));
    return;
  }
  if (log_weights.size() != n)
    throw NumericalError("mode occupancy: " + std::to_string(log_weights.size()) +
                         " log weights for " + std::to_string(n) + " samples");
  Half& h = halves_[index < half_boundary_ ? 0 : 1];
  if (within_draw_) {
    // The draw's unit weight shared by its samples (Theorem 2.1 of the PE paper).
    const double total = log_sum_exp(log_weights);
    if (!std::isfinite(total)) return;
    for (std::size_t j = 0; j < n; ++j)
      h.weight[static_cast<std::size_t>(assigner_.assign(samples.col(static_cast<Eigen::Index>(j))))] +=
          std::exp(log_weights[j] - total);
    h.total += 1.0;
    h.total_sq += 1.0;
    return;
  }
  double draw_total = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    const double lw = log_weights[j];
    if (!std::isfinite(lw)) continue;
    if (!scaled_) {
      log_scale_ = lw;
      scaled_ = true;
    } else if (lw > log_scale_ + kRescaleMargin) {
      rescale(lw);
    }
    const double w = std::exp(lw - log_scale_);
    h.weight[static_cast<std::size_t>(assigner_.assign(samples.col(static_cast<Eigen::Index>(j))))] += w;
    draw_total += w;
  }
  h.total += draw_total;
  h.total_sq += draw_total * draw_total;
}

v1::ModeOccupancy ModeOccupancy::to_record() const {
  v1::ModeOccupancy r;
  r.mutable_first_half()->Assign(halves_[0].weight.begin(), halves_[0].weight.end());
  r.mutable_second_half()->Assign(halves_[1].weight.begin(), halves_[1].weight.end());
  r.set_first_half_weight(halves_[0].total);
  r.set_second_half_weight(halves_[1].total);
  const auto kish = [](const Half& h) { return h.total_sq > 0.0 ? h.total * h.total / h.total_sq : 0.0; };
  r.set_first_half_ess(kish(halves_[0]));
  r.set_second_half_ess(kish(halves_[1]));
  return r;
}

std::vector<double> ModeOccupancy::save() const {
  std::vector<double> out{log_scale_, scaled_ ? 1.0 : 0.0};
  for (const auto& h : halves_) {
    out.insert(out.end(), h.weight.begin(), h.weight.end());
    out.push_back(h.total);
    out.push_back(h.total_sq);
  }
  return out;
}

void ModeOccupancy::restore(std::span<const double> sums) {
  const std::size_t per = halves_[0].weight.size() + 2;
  if (sums.size() != 2 + 2 * per)
    throw DataError("checkpoint: mode occupancy has " + std::to_string(sums.size()) +
                    " numbers, expected " + std::to_string(2 + 2 * per) +
                    " (the mode search found a different number of modes)");
  log_scale_ = sums[0];
  scaled_ = sums[1] != 0.0;
  std::size_t at = 2;
  for (auto& h : halves_) {
    std::copy(sums.begin() + static_cast<std::ptrdiff_t>(at),
              sums.begin() + static_cast<std::ptrdiff_t>(at + h.weight.size()), h.weight.begin());
    at += h.weight.size();
    h.total = sums[at++];
    h.total_sq = sums[at++];
  }
}

// ---- the run's verdict -------------------------------------------------------------------------

// A half's share is the ratio of two sums of the same weights: when every weight fell in one mode,
// rounding can leave it a few ulps from 1, even above it.
constexpr double kPureShareTolerance = 1e-12;

double split_rhat_of_shares(const std::vector<double>& shares, const std::vector<double>& sizes) {
  const auto m = shares.size();
  if (m < 2) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> p(m);
  for (std::size_t h = 0; h < m; ++h)
    p[h] = shares[h] < kPureShareTolerance         ? 0.0
           : shares[h] > 1.0 - kPureShareTolerance ? 1.0
                                                   : shares[h];
  double n = 0.0, mean = 0.0, w = 0.0;
  for (std::size_t h = 0; h < m; ++h) {
    n += sizes[h];
    mean += p[h];
    w += sizes[h] > 1.0 ? p[h] * (1.0 - p[h]) * sizes[h] / (sizes[h] - 1.0) : 0.0;
  }
  n /= static_cast<double>(m);
  mean /= static_cast<double>(m);
  w /= static_cast<double>(m);
  double var = 0.0;
  for (double v : p) var += (v - mean) * (v - mean);
  var /= static_cast<double>(m - 1);
  const double b = n * var;
  if (w <= 0.0) return b <= 0.0 ? 1.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(((n - 1.0) / n * w + b / n) / w);
}

ModeCheck check_mode_occupancy(const std::vector<const v1::ModeOccupancy*>& chains,
                               const std::vector<double>& laplace_shares) {
  ModeCheck c;
  c.n_modes = static_cast<int>(laplace_shares.size());
  const auto slots = static_cast<std::size_t>(c.n_modes) + 1;
  c.pooled_share.assign(slots, 0.0);
  c.rhat.assign(slots, 1.0);
  if (chains.empty()) return c;
  std::vector<std::vector<double>> half_share(slots);
  std::vector<double> half_size;
  double total_weight_share = 0.0, total_ess = 0.0;
  for (const auto* ch : chains) {
    std::vector<double> share(slots, 0.0);
    const double weight = ch->first_half_weight() + ch->second_half_weight();
    for (int h = 0; h < 2; ++h) {
      const auto& sums = h == 0 ? ch->first_half() : ch->second_half();
      const double hw = h == 0 ? ch->first_half_weight() : ch->second_half_weight();
      const double ess = h == 0 ? ch->first_half_ess() : ch->second_half_ess();
      if (sums.size() != static_cast<int>(slots))
        throw DataError("mode check: a chain's occupancy has " + std::to_string(sums.size()) +
                        " slots, the search " + std::to_string(slots));
      if (!(hw > 0.0)) continue;
      for (std::size_t k = 0; k < slots; ++k) {
        half_share[k].push_back(sums[static_cast<int>(k)] / hw);
        share[k] += sums[static_cast<int>(k)] / std::max(weight, 1e-300);
      }
      half_size.push_back(ess);
      total_ess += ess;
    }
    // Chains count equally in the pooled share (their weights are on different scales).
    for (std::size_t k = 0; k < slots; ++k) c.pooled_share[k] += share[k];
    total_weight_share += 1.0;
    c.chain_share.push_back(std::move(share));
  }
  for (auto& s : c.pooled_share) s /= std::max(total_weight_share, 1.0);
  for (std::size_t k = 0; k < slots; ++k) {
    c.rhat[k] = half_share[k].size() >= 2 ? split_rhat_of_shares(half_share[k], half_size) : 1.0;
    if (!(c.rhat[k] <= c.max_rhat)) {
      c.max_rhat = c.rhat[k];
      c.worst_rhat_mode = static_cast<int>(k);
    }
  }
  c.disagree = !(c.max_rhat <= kRhatLimit);
  for (int k = 0; k < c.n_modes; ++k) {
    const double share = laplace_shares[static_cast<std::size_t>(k)];
    if (c.pooled_share[static_cast<std::size_t>(k)] == 0.0 && share >= kMinUnvisitedShare &&
        share * total_ess >= kMinExpectedDraws)
      c.unvisited.push_back(k);
  }
  return c;
}

std::vector<std::string> describe_mode_doubts(const ModeCheck& c) {
  std::vector<std::string> out;
  if (!c.unvisited.empty()) {
    std::string modes;
    for (std::size_t i = 0; i < c.unvisited.size() && i < 8; ++i)
      modes += (i ? ", #" : "#") + std::to_string(c.unvisited[i] + 1);
    if (c.unvisited.size() > 8) modes += ", ...";
    out.push_back(fmt::format(
        "mode check: {} mode{} found by the mode search ({}) never visited by any chain: the "
        "estimates and log Z miss {} mass and cannot be trusted",
        c.unvisited.size(), c.unvisited.size() == 1 ? "" : "s", modes,
        c.unvisited.size() == 1 ? "its" : "their"));
  }
  if (c.disagree) {
    const auto k = static_cast<std::size_t>(c.worst_rhat_mode);
    std::string shares;
    for (std::size_t ch = 0; ch < c.chain_share.size() && ch < 8; ++ch)
      shares += fmt::format("{}{:.3f}", ch ? ", " : "", c.chain_share[ch][k]);
    if (c.chain_share.size() > 8) shares += ", ...";
    const std::string name = c.worst_rhat_mode == c.n_modes
                                 ? std::string("outside every mode found")
                                 : "mode #" + std::to_string(c.worst_rhat_mode + 1);
    out.push_back(fmt::format(
        "mode check: the chains disagree on how much mass lies in {} (split R-hat {:.3g} > {}; "
        "share per chain {}): the estimates and log Z cannot be trusted; run longer or with a "
        "sampler that moves between modes",
        name, c.max_rhat, kRhatLimit, shares));
  }
  return out;
}

}  // namespace pemc::modes
