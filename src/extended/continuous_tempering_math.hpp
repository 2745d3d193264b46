#pragma once
// Scalar pieces of continuous tempering (Graham & Storkey 2017), evaluated stably for every
// Delta(x) = phi(x) + log zeta - psi(x) in [-inf, +inf]:
//  - the Rao-Blackwellisation weights of eq. (20)
//        w0(x) = Delta / (1 - e^{-Delta}) = p[beta = 0 | x],   w1(x) = Delta / (e^{Delta} - 1) = p[beta = 1 | x]
//    (both -> 1 as Delta -> 0; note w1(Delta) = w0(-Delta));
//  - exact draws of beta | x from the exponential with rate Delta truncated to [0, 1], eq. (17),
//    by inverse transform.
namespace pemc::extended {

struct RbLogWeights {
  double log_w0 = 0.0;
  double log_w1 = 0.0;
};

// log w0(Delta) in closed form:
//   |Delta| < 1:  log(Delta / -expm1(-Delta))        (a ratio of two accurate same-sign numbers;
//                                                     exactly 0 at Delta = 0)
//   Delta >= 1:   log Delta - log(1 - e^{-Delta})
//   Delta <= -1:  log|Delta| - |Delta| - log(1 - e^{-|Delta|})   (e^{|Delta|} - 1 without overflow)
// Delta = +inf -> +inf, Delta = -inf -> -inf, NaN -> NaN.
double rb_log_w0(double delta);

// log w1(Delta) = log w0(-Delta) (computed that way, not as log w0 - Delta, which would cancel
// catastrophically for large |Delta|).
inline double rb_log_w1(double delta) { return rb_log_w0(-delta); }

// {rb_log_w0(delta), rb_log_w1(delta)}, the same bits; for |Delta| >= 1 both come from one log and
// one log1mexp of |Delta| (once per transition of a tempering chain, for its weighted view).
RbLogWeights rb_log_weights(double delta);

// The inverse CDF of p(beta | x) = Delta e^{-beta Delta} / (1 - e^{-Delta}) on [0, 1] (eq. (17))
// at u in (0, 1):
//   Delta > 0:  beta = -log1p(u expm1(-Delta)) / Delta
//   Delta < 0:  1 - beta is the Delta > 0 law with rate |Delta|, drawn at 1 - u so that the map stays
//               the (increasing) inverse CDF: beta = 1 + log1p((1 - u) expm1(-|Delta|)) / |Delta|
//   Delta = 0:  beta = u (the uniform limit; also the limit of both formulas)
// When the log's argument 1 - v (1 - e^{-a}) falls below 1/2 it is evaluated as (1 - v) + v e^{-a}
// instead (no cancellation; 1 - v is exact there), so beta keeps full relative accuracy at both
// ends of u. Delta = +inf -> 0, -inf -> 1. The result is clamped to [0, 1] against rounding.
// NaN -> NaN.
double truncated_exponential_inverse_cdf(double delta, double u);

// log p(beta | x) of eq. (17) (for tests): log Delta - beta Delta - log(1 - e^{-Delta}) = log w0 - beta Delta.
double log_beta_conditional_density(double beta, double delta);

}  // namespace pemc::extended
