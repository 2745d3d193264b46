#pragma once
// Accuracy of a double exp against the long double one, for the exp tests of core/.
#include <cmath>

namespace pemc::test {

// |got - exp(v)| in double ulps at exp(v) (2^(k-52) for exp(v) in [2^k, 2^(k+1))), exp(v) computed
// in long double (64-bit mantissa: its own error, ~2^-64 relative, is 1/4096 of the bound tested).
inline long double ulps_from_exact(double v, double got) {
  const long double exact = std::exp(static_cast<long double>(v));
  int e = 0;
  std::frexp(exact, &e);  // exact in [2^(e-1), 2^e)
  return std::fabs(static_cast<long double>(got) - exact) / std::ldexp(1.0L, e - 53);
}

}  // namespace pemc::test
