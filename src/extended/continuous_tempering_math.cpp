#include "extended/continuous_tempering_math.hpp"

#include <algorithm>
#include <cmath>

#include "core/numerics.hpp"

namespace pemc::extended {

double rb_log_w0(double delta) {
  if (std::isnan(delta)) return delta;
  if (delta == kInf) return kInf;
  if (delta == -kInf) return -kInf;
  if (delta == 0.0) return 0.0;
  if (std::fabs(delta) < 1.0) return std::log(delta / -std::expm1(-delta));
  if (delta > 0.0) return std::log(delta) - log1mexp(delta);
  const double a = -delta;
  return std::log(a) - a - log1mexp(a);
}

RbLogWeights rb_log_weights(double delta) {
  const double a = std::fabs(delta);
  if (a >= 1.0 && a < kInf) {
    // rb_log_w0's two branches at +a and -a share log a and log1mexp(a) (same expressions).
    const double log_a = std::log(a), m = log1mexp(a);
    const double at_plus = log_a - m;       // rb_log_w0(a)
    const double at_minus = log_a - a - m;  // rb_log_w0(-a)
    return delta > 0.0 ? RbLogWeights{at_plus, at_minus} : RbLogWeights{at_minus, at_plus};
  }
  return {rb_log_w0(delta), rb_log_w1(delta)};
}

double truncated_exponential_inverse_cdf(double delta, double u) {
  if (std::isnan(delta) || std::isnan(u)) return std::numeric_limits<double>::quiet_NaN();
  if (delta == kInf) return 0.0;
  if (delta == -kInf) return 1.0;
  if (delta == 0.0) return u;
  // With rate a > 0 and v the probability mass to invert, the log argument is
  // A = 1 - v (1 - e^{-a}) = (1 - v) + v e^{-a}. log1p(v expm1(-a)) is accurate while A is not
  // small; once A <= 1/2 (so v >= 1/2 and 1 - v is exact), the sum of the two positive terms is.
  // `one_minus_v` is passed separately so that the caller's exact u is used where it matters.
  auto log_a = [](double a, double v, double one_minus_v) {
    const double em1 = std::expm1(-a);  // -(1 - e^{-a})
    if (1.0 + v * em1 > 0.5) return std::log1p(v * em1);
    return std::log(one_minus_v + v * std::exp(-a));
  };
  double beta;
  if (delta > 0.0) {
    beta = -log_a(delta, u, 1.0 - u) / delta;
  } else {
    beta = 1.0 + log_a(-delta, 1.0 - u, u) / -delta;
  }
  return std::clamp(beta, 0.0, 1.0);
}

double log_beta_conditional_density(double beta, double delta) {
  if (beta < 0.0 || beta > 1.0) return -kInf;
  return rb_log_w0(delta) - beta * delta;
}

}  // namespace pemc::extended
