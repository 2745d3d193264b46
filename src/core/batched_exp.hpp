#pragma once
// exp of non-positive arguments, batched, by SLEEF's 1-ULP vectorised exp (Debian's libsleef-dev),
// with a cut: exactly 0 below kExpCut (including -inf).
//
// Why the cut: in a log-sum-exp or softmax the arguments are v_k = t_k - max t <= 0, and a term
// more than 708 below the largest weighs less than 2^-1021 relative to it, which the exact sum
// rounds away. Dropping those terms keeps every result a normal double (subnormal arithmetic is
// slow on x86) and gives exactly-zero weights, which the callers rely on (the mixture's gradient
// skips 0 * inf products; the pseudo-extended target's logistic terms round as for e = 0).
#include <span>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <sleef.h>

namespace pemc {

inline constexpr double kExpCut = -708.0;

// exp(v) for kExpCut <= v <= 0 (SLEEF's u10: error < 1 ulp; exp(0) = 1 exactly), 0 for v < kExpCut
// (and for NaN v).
inline double exp_nonpositive(double v) { return v >= kExpCut ? Sleef_exp_u10(v) : 0.0; }

#if defined(__SSE2__)
// Both lanes of exp_nonpositive(double) at once. Sleef_expd2_u10 is SLEEF's dispatcher: it runs the
// best 128-bit variant this CPU has (SSE2, SSE4.1, or AVX2's FMA on 128-bit lanes), chosen at the
// first call. Arguments are clamped to the cut before the call (so SLEEF never sees -inf or works
// in its subnormal range) and results below it masked to +0 after.
inline __m128d exp_nonpositive(__m128d v) {
  const __m128d cut = _mm_set1_pd(kExpCut);
  const __m128d e = Sleef_expd2_u10(_mm_max_pd(v, cut));  // max: the cut for v < cut or NaN v
  return _mm_and_pd(e, _mm_cmpge_pd(v, cut));
}
#endif

// out_k = exp_nonpositive(v_k) for every k (out may be v itself). Throws std::invalid_argument if
// out is shorter than v.
void exp_nonpositive(std::span<const double> v, std::span<double> out);

}  // namespace pemc
