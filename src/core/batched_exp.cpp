#include "core/batched_exp.hpp"

#include <stdexcept>
#include <string>

namespace pemc {

void exp_nonpositive(std::span<const double> v, std::span<double> out) {
  if (out.size() < v.size())
    throw std::invalid_argument("exp_nonpositive: output (" + std::to_string(out.size()) +
                                " entries) shorter than input (" + std::to_string(v.size()) + ")");
  std::size_t k = 0;
#if defined(__SSE2__)
  for (; k + 2 <= v.size(); k += 2) {
    // Two 8-byte loads, not one 16-byte load: the callers fill v with scalar stores just before,
    // and a 16-byte load spanning two 8-byte stores cannot be store-forwarded (it stalls until
    // they retire). volatile: otherwise the compiler merges the two loads again.
    const volatile double* p = v.data() + k;
    const double lo = p[0], hi = p[1];
    _mm_storeu_pd(out.data() + k, exp_nonpositive(_mm_set_pd(hi, lo)));
  }
  // An odd tail through the same vector code, so a value does not depend on its position.
  if (k < v.size()) out[k] = _mm_cvtsd_f64(exp_nonpositive(_mm_set_sd(v[k])));
#else
  for (; k < v.size(); ++k) out[k] = exp_nonpositive(v[k]);
#endif
}

}  // namespace pemc
