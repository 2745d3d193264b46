#include "core/batched_exp.hpp"
#include "core/cpu_features.hpp"

#include <stdexcept>
#include <string>

#include "core/sleef_wide.hpp"
#ifdef PEMC_SLEEF_WIDE
#define PEMC_EXP_AVX2 1
#endif

namespace pemc {
namespace {

#ifdef PEMC_EXP_AVX2
const bool kAvx2 = cpu_has_avx2_fma();

// Four at a time with SLEEF's 256-bit AVX2 exp: on a CPU with AVX2 the 128-bit dispatcher
// (Sleef_expd2_u10, used for the remainder) runs the 128-bit build of the same AVX2 code, so an
// element gets the same bits wherever it sits. Returns how many elements it did.
__attribute__((target("avx2,fma"))) std::size_t exp_nonpositive4(const double* v, double* out,
                                                                  std::size_t n) {
  const __m256d cut = _mm256_set1_pd(kExpCut);
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    // Four 8-byte loads (see below: a wide load cannot be forwarded from narrow stores).
    const volatile double* p = v + k;
    const double a = p[0], b = p[1], c = p[2], d = p[3];
    const __m256d x = _mm256_set_pd(d, c, b, a);
    const __m256d e = Sleef_expd4_u10avx2(_mm256_max_pd(x, cut));
    _mm256_storeu_pd(out + k, _mm256_and_pd(e, _mm256_cmp_pd(x, cut, _CMP_GE_OQ)));
  }
  return k;
}
#endif

}  // namespace

void exp_nonpositive(std::span<const double> v, std::span<double> out) {
  if (out.size() < v.size())
    throw std::invalid_argument("exp_nonpositive: output (" + std::to_string(out.size()) +
                                " entries) shorter than input (" + std::to_string(v.size()) + ")");
  std::size_t k = 0;
#ifdef PEMC_EXP_AVX2
  if (kAvx2) k = exp_nonpositive4(v.data(), out.data(), v.size());
#endif
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
