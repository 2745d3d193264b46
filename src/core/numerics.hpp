#pragma once
// Numerically stable scalar helpers used by estimators and extended targets.
#include <cmath>
#include <limits>
#include <span>

namespace pemc {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kLog2Pi = 1.8378770664093454835606594728112;

// log(exp(a) + exp(b)) without overflow; -inf is the identity.
inline double log_add_exp(double a, double b) {
  if (a == -kInf) return b;
  if (b == -kInf) return a;
  const double m = a > b ? a : b;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

// log(sum_i exp(v_i)); -inf for an empty span or all -inf; +inf/NaN propagate.
inline double log_sum_exp(std::span<const double> v) {
  double m = -kInf;
  for (double x : v) m = x > m ? x : m;
  if (!std::isfinite(m)) return m;  // empty/all -inf -> -inf, any +inf -> +inf
  double s = 0.0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}

// log(1 - exp(-a)) for a >= 0 (Maechler 2012: switch at log 2 for accuracy).
inline double log1mexp(double a) {
  return a <= 0.6931471805599453 ? std::log(-std::expm1(-a)) : std::log1p(-std::exp(-a));
}

// softplus(x) = log(1 + exp(x)), stable for large |x|.
inline double log1pexp(double x) {
  if (x <= -37.0) return std::exp(x);
  if (x <= 18.0) return std::log1p(std::exp(x));
  if (x <= 33.3) return x + std::exp(-x);
  return x;
}

// Logistic sigmoid 1 / (1 + exp(-x)), stable for large |x|.
inline double logistic(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

// log(1 + x) - x... is not needed; log_logistic(x) = -softplus(-x).
inline double log_logistic(double x) { return -log1pexp(-x); }

}  // namespace pemc
