#include "tempering/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/numerics.hpp"

namespace pemc::tempering {

std::vector<double> geometric_ladder(int k, double beta_min) {
  if (k < 2 || !(beta_min > 0.0) || !(beta_min < 1.0))
    throw std::invalid_argument("geometric_ladder: need k >= 2 and 0 < beta_min < 1");
  std::vector<double> b(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) b[i] = std::pow(beta_min, 1.0 - static_cast<double>(i) / (k - 1));
  b.front() = beta_min;
  b.back() = 1.0;
  return b;
}

std::vector<double> linear_ladder(int k, double beta_min) {
  if (k < 2 || !(beta_min >= 0.0) || !(beta_min < 1.0))
    throw std::invalid_argument("linear_ladder: need k >= 2 and 0 <= beta_min < 1");
  std::vector<double> b(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i)
    b[i] = beta_min + (1.0 - beta_min) * static_cast<double>(i) / (k - 1);
  b.back() = 1.0;
  return b;
}

std::vector<double> sigmoidal_ladder(int k, double beta_min, double scale) {
  if (k < 2 || !(beta_min >= 0.0) || !(beta_min < 1.0) || !(scale > 0.0))
    throw std::invalid_argument("sigmoidal_ladder: need k >= 2, 0 <= beta_min < 1, scale > 0");
  std::vector<double> s(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i)
    s[i] = logistic(scale * (2.0 * static_cast<double>(i) / (k - 1) - 1.0));
  const double lo = s.front(), hi = s.back();
  std::vector<double> b(s.size());
  for (int i = 0; i < k; ++i) b[i] = beta_min + (1.0 - beta_min) * (s[i] - lo) / (hi - lo);
  b.front() = beta_min;
  b.back() = 1.0;
  return b;
}

void check_ladder(const std::vector<double>& betas, const char* what) {
  const std::string w(what);
  if (betas.size() < 2) throw std::invalid_argument(w + ": needs at least 2 inverse temperatures");
  for (std::size_t i = 0; i < betas.size(); ++i) {
    if (!(betas[i] >= 0.0 && betas[i] <= 1.0))
      throw std::invalid_argument(w + ": beta[" + std::to_string(i) + "] = " +
                                  std::to_string(betas[i]) + " is outside [0, 1]");
    if (i > 0 && !(betas[i] > betas[i - 1]))
      throw std::invalid_argument(w + ": not strictly ascending at index " + std::to_string(i));
  }
  if (betas.back() != 1.0) throw std::invalid_argument(w + ": the last inverse temperature must be 1");
}

MonotoneCubic::MonotoneCubic(std::vector<double> x, std::vector<double> y)
    : x_(std::move(x)), y_(std::move(y)) {
  const std::size_t n = x_.size();
  if (n < 2 || y_.size() != n)
    throw std::invalid_argument("MonotoneCubic: need >= 2 knots and as many values");
  for (std::size_t i = 1; i < n; ++i) {
    if (!(x_[i] > x_[i - 1])) throw std::invalid_argument("MonotoneCubic: x not strictly ascending");
    if (!(y_[i] >= y_[i - 1])) throw std::invalid_argument("MonotoneCubic: y decreasing");
  }
  std::vector<double> delta(n - 1);
  for (std::size_t i = 0; i + 1 < n; ++i) delta[i] = (y_[i + 1] - y_[i]) / (x_[i + 1] - x_[i]);
  m_.assign(n, 0.0);
  m_[0] = delta[0];
  m_[n - 1] = delta[n - 2];
  for (std::size_t i = 1; i + 1 < n; ++i)
    m_[i] = (delta[i - 1] * delta[i] > 0.0) ? 0.5 * (delta[i - 1] + delta[i]) : 0.0;
  // Fritsch-Carlson: on each interval keep (alpha, beta) = (m_i, m_{i+1}) / delta_i inside the
  // circle of radius 3 (a sufficient condition for monotonicity); flat intervals get flat ends.
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (delta[i] == 0.0) {
      m_[i] = 0.0;
      m_[i + 1] = 0.0;
      continue;
    }
    const double a = m_[i] / delta[i], b = m_[i + 1] / delta[i];
    const double r2 = a * a + b * b;
    if (r2 > 9.0) {
      const double tau = 3.0 / std::sqrt(r2);
      m_[i] = tau * a * delta[i];
      m_[i + 1] = tau * b * delta[i];
    }
  }
}

double MonotoneCubic::operator()(double t) const {
  if (t <= x_.front()) return y_.front();
  if (t >= x_.back()) return y_.back();
  const auto it = std::upper_bound(x_.begin(), x_.end(), t);
  const std::size_t i = static_cast<std::size_t>(it - x_.begin()) - 1;
  const double h = x_[i + 1] - x_[i];
  const double s = (t - x_[i]) / h;
  const double s2 = s * s, s3 = s2 * s;
  const double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s;
  const double h01 = -2 * s3 + 3 * s2, h11 = s3 - s2;
  return h00 * y_[i] + h10 * h * m_[i] + h01 * y_[i + 1] + h11 * h * m_[i + 1];
}

double MonotoneCubic::inverse(double y) const {
  if (y <= y_.front()) return x_.front();
  if (y >= y_.back()) {
    // The first knot reaching the top value (later knots may share it on a flat tail).
    const auto it = std::lower_bound(y_.begin(), y_.end(), y_.back());
    double lo = it == y_.begin() ? x_.front() : x_[static_cast<std::size_t>(it - y_.begin()) - 1];
    double hi = x_[static_cast<std::size_t>(it - y_.begin())];
    for (int iter = 0; iter < 200 && hi - lo > 1e-15 * std::max(1.0, std::fabs(hi)); ++iter) {
      const double mid = 0.5 * (lo + hi);
      ((*this)(mid) >= y ? hi : lo) = mid;
    }
    return hi;
  }
  // Bracket by knots, then bisect inside the interval.
  const auto it = std::lower_bound(y_.begin(), y_.end(), y);
  const std::size_t j = static_cast<std::size_t>(it - y_.begin());  // y_[j] >= y, y_[j-1] < y
  double lo = x_[j - 1], hi = x_[j];
  for (int iter = 0; iter < 200 && hi - lo > 1e-15 * std::max(1.0, std::fabs(hi)); ++iter) {
    const double mid = 0.5 * (lo + hi);
    ((*this)(mid) >= y ? hi : lo) = mid;
  }
  return hi;
}

BarrierEstimate communication_barrier(const std::vector<double>& rejection) {
  BarrierEstimate e;
  e.cumulative.assign(rejection.size() + 1, 0.0);
  for (std::size_t i = 0; i < rejection.size(); ++i) {
    const double r = std::isfinite(rejection[i]) ? std::clamp(rejection[i], 0.0, 1.0) : 1.0;
    e.cumulative[i + 1] = e.cumulative[i] + r;
  }
  e.total = e.cumulative.back();
  return e;
}

std::vector<double> equalise_barrier(const std::vector<double>& betas,
                                     const std::vector<double>& rejection, int n_new) {
  check_ladder(betas, "equalise_barrier");
  if (rejection.size() + 1 != betas.size())
    throw std::invalid_argument("equalise_barrier: need one rejection rate per neighbour pair");
  if (n_new < 2) throw std::invalid_argument("equalise_barrier: need n_new >= 2");
  const auto barrier = communication_barrier(rejection);
  if (!(barrier.total > 0.0)) return linear_ladder(n_new, betas.front());
  const MonotoneCubic lambda(betas, barrier.cumulative);
  std::vector<double> out(static_cast<std::size_t>(n_new));
  out.front() = betas.front();
  out.back() = 1.0;
  for (int j = 1; j + 1 < n_new; ++j)
    out[j] = lambda.inverse(barrier.total * static_cast<double>(j) / (n_new - 1));
  for (int j = 1; j < n_new; ++j) {
    const double floor = out[j - 1] + 1e-12 * std::max(out[j - 1], 1e-300);
    if (!(out[j] > out[j - 1])) out[j] = floor;
  }
  if (!(out[n_new - 1] > out[n_new - 2]) || out[n_new - 1] != 1.0) {
    // Only reachable when interior levels crowd against 1: fall back to a linear ladder.
    return linear_ladder(n_new, betas.front());
  }
  return out;
}

int replicas_for_barrier(double barrier, double replicas_per_barrier, int min_replicas,
                         int max_replicas) {
  const double want = std::ceil(replicas_per_barrier * std::max(0.0, barrier)) + 1.0;
  const double clamped = std::clamp(want, static_cast<double>(min_replicas),
                                    static_cast<double>(max_replicas));
  return static_cast<int>(clamped);
}

}  // namespace pemc::tempering
