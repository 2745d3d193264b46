#pragma once
// exp(x) for one double, in about half the instructions of libm's (no call through the PLT, no
// errno), within 1 ulp, and with the same bits on every x86-64 CPU.
//
// Why: NUTS takes one exp per leapfrog step (the point's multinomial weight exp(H0 - H), which is
// also its acceptance statistic), and on a cheap target such as the 2-D Kou mixture that exp is a
// visible part of the sampler's own cost (libm's takes about twice the instructions of this one).
//
// How: exp(x) = 2^(k/128) * exp(r) with k = round(128 x / ln 2) and r = x - k ln 2 / 128
// (|r| <= ln 2 / 256, Cody-Waite reduction in two parts), 2^(k/128) from a 128-entry table of
// correctly rounded values with k / 128's integer part added to the exponent bits, and exp(r) by
// its Taylor polynomial to degree 5 (truncation error below 6e-19). Every multiply-add is a fused
// one (std::fma): with the FMA instruction where the CPU has it, else libm's exact software fma,
// so both paths round identically (tests check that bit for bit). Outside (-708, 709), and for
// NaN or infinities, the result is std::exp(x): the subnormal and overflow ranges are libm's.
namespace pemc {

namespace detail {
double scalar_exp_fma(double x);     // the FMA instruction (only on CPUs that have it)
double scalar_exp_soft_fma(double x);  // libm's fma: any CPU, same bits
extern const bool kScalarExpHasFma;
}  // namespace detail

inline double scalar_exp(double x) {
  return detail::kScalarExpHasFma ? detail::scalar_exp_fma(x) : detail::scalar_exp_soft_fma(x);
}

}  // namespace pemc
