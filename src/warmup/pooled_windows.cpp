#include "warmup/pooled_windows.hpp"

#include <cmath>
#include <limits>
#include <span>

#include "core/error.hpp"
#include "estimators/ess.hpp"

namespace pemc::warmup {

WindowSums::WindowSums(int dim, bool dense)
    : dense_(dense), mean_(Vector::Zero(dim)), m2_(Matrix::Zero(dim, dense ? dim : 1)) {}

void WindowSums::add(ConstVectorRef x) {
  ++n_;
  const Vector delta = x - mean_;
  mean_ += delta / static_cast<double>(n_);
  if (dense_)
    m2_.noalias() += (x - mean_) * delta.transpose();
  else
    m2_.col(0).array() += (x - mean_).array() * delta.array();
}

void WindowSums::merge(const WindowSums& o) {
  if (o.n_ == 0) return;
  if (n_ == 0) {
    *this = o;
    return;
  }
  if (o.dense_ != dense_ || o.dim() != dim())
    throw DataError("pooled warmup: window sums of different shapes");
  const double na = static_cast<double>(n_), nb = static_cast<double>(o.n_), n = na + nb;
  const Vector delta = o.mean_ - mean_;
  mean_ += delta * (nb / n);
  if (dense_)
    m2_ += o.m2_ + (delta * delta.transpose()) * (na * nb / n);
  else
    m2_.col(0) += o.m2_.col(0) + (delta.array().square() * (na * nb / n)).matrix();
  n_ += o.n_;
}

WindowSums WindowSums::from_parts(std::int64_t n, Vector mean, Matrix m2, bool dense) {
  if (n < 0 || m2.rows() != mean.size() || m2.cols() != (dense ? mean.size() : 1))
    throw DataError("pooled warmup: malformed window sums");
  WindowSums s;
  s.dense_ = dense;
  s.n_ = n;
  s.mean_ = std::move(mean);
  s.m2_ = std::move(m2);
  return s;
}

WindowSums WindowSums::diagonal() const {
  if (!dense_) return *this;
  return from_parts(n_, mean_, m2_.diagonal(), false);
}

std::vector<double> regularised_inverse_metric(const WindowSums& s) {
  if (s.count() < 2) throw DataError("pooled warmup: a metric needs at least 2 draws");
  const double n = static_cast<double>(s.count());
  const double shrink = n / (n + 5.0), ridge = 1e-3 * 5.0 / (n + 5.0);
  const int d = s.dim();
  std::vector<double> out;
  if (s.dense()) {
    Matrix c = s.m2() * (shrink / (n - 1.0));
    c = (0.5 * (c + c.transpose())).eval();  // symmetric up to rounding only
    c.diagonal().array() += ridge;
    out.resize(static_cast<std::size_t>(d) * d);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) out[static_cast<std::size_t>(i) * d + j] = c(i, j);
  } else {
    out.resize(static_cast<std::size_t>(d));
    for (int i = 0; i < d; ++i) out[static_cast<std::size_t>(i)] = s.m2()(i, 0) * shrink / (n - 1.0) + ridge;
  }
  return out;
}

void WindowHistory::add(int window, int chain_id, ChainWindow w) {
  auto& chains = windows_[window];
  if (!chains.emplace(chain_id, std::move(w)).second)
    throw DataError("pooled warmup: chain " + std::to_string(chain_id) + " reported window " +
                    std::to_string(window) + " twice");
}

void WindowHistory::forget(int chain_id) {
  for (auto& [window, chains] : windows_) chains.erase(chain_id);
}

WindowHistory WindowHistory::from_windows(Windows windows) {
  WindowHistory h;
  h.windows_ = std::move(windows);
  return h;
}

namespace {

// R-hat and bulk ESS of the log density over windows first..last of the live chains.
std::pair<double, double> log_density_diagnostics(
    const std::map<int, std::map<int, ChainWindow>>& windows, int first, int last,
    const std::vector<int>& live) {
  std::vector<std::vector<double>> series;
  for (int id : live) {
    std::vector<double> s;
    for (int w = first; w <= last; ++w) {
      const auto& lp = windows.at(w).at(id).log_density;
      s.insert(s.end(), lp.begin(), lp.end());
    }
    series.push_back(std::move(s));
  }
  std::vector<std::span<const double>> spans(series.begin(), series.end());
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  try {
    const auto d = estimators::rank_diagnostics(spans);
    return {d.rhat.rhat, d.bulk.ess};
  } catch (const Error&) {  // a non-finite log density: no verdict
    return {nan, nan};
  }
}

bool reported(const std::map<int, std::map<int, ChainWindow>>& windows, int w,
              const std::vector<int>& live) {
  const auto it = windows.find(w);
  if (it == windows.end()) return false;
  for (int id : live)
    if (!it->second.count(id)) return false;
  return true;
}

// The sums of the chains' draws over windows first..last: all pooled, or (kWithinChains) each
// chain's squared deviations about its own mean added up, counted as n - (chains - 1) draws so that
// the variance divides by the within-chain degrees of freedom n - chains.
WindowSums pooled_sums(const WindowHistory::Windows& windows, int first, int last,
                       const std::vector<int>& live, Pooling pooling) {
  WindowSums all;
  for (int id : live) {
    WindowSums chain;
    for (int w = first; w <= last; ++w) chain.merge(windows.at(w).at(id).sums);
    if (pooling == Pooling::kAllDraws || all.count() == 0) {
      all.merge(chain);
      continue;
    }
    if (chain.count() == 0) continue;
    all = WindowSums::from_parts(all.count() + chain.count() - 1, all.mean(),
                                 all.m2() + chain.m2(), all.dense());
  }
  return all;
}

}  // namespace

WindowDecision WindowHistory::decide(int last, const std::vector<int>& live, Pooling pooling,
                                     bool diagonal_metric) const {
  if (live.empty() || !reported(windows_, last, live))
    throw DataError("pooled warmup: window " + std::to_string(last) + " is not complete");
  WindowDecision d;
  d.first_window = d.last_window = last;
  bool found = false;
  double best_ess = -1.0;
  for (int first = last; first >= 1 && reported(windows_, first, live); --first) {
    const auto [rhat, ess] = log_density_diagnostics(windows_, first, last, live);
    if (first == last) {  // the fallback when no run of windows qualifies
      d.rhat = rhat;
      d.bulk_ess = ess;
    }
    if (!(rhat <= kRhatConverged) || !(ess > best_ess)) continue;
    found = true;
    best_ess = ess;
    d.first_window = first;
    d.rhat = rhat;
    d.bulk_ess = ess;
  }
  d.converged = found && best_ess >= kEssConverged;
  const WindowSums pooled = pooled_sums(windows_, d.first_window, last, live, pooling);
  d.n_draws = pooled.count();
  if (pooling == Pooling::kWithinChains) d.n_draws += static_cast<std::int64_t>(live.size()) - 1;
  d.inverse_metric = regularised_inverse_metric(diagonal_metric ? pooled.diagonal() : pooled);
  return d;
}

std::map<int, ChainFit> WindowHistory::chain_fits(const WindowDecision& d,
                                                  const std::vector<int>& live) const {
  std::map<int, ChainFit> out;
  for (int id : live) {
    ChainFit fit;
    double sum = 0.0;
    for (int w = d.first_window; w <= d.last_window; ++w) {
      const auto& one = windows_.at(w).at(id);
      fit.sums.merge(one.sums);
      for (double lp : one.log_density) sum += lp;
    }
    if (fit.sums.count() == 0) continue;
    fit.mean_log_density = sum / static_cast<double>(fit.sums.count());
    out.emplace(id, std::move(fit));
  }
  return out;
}

}  // namespace pemc::warmup
