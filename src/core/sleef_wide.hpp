#pragma once
// SLEEF's fixed-width AVX2 and AVX-512F variants, which the targets call directly (fixed variants,
// so a value never depends on SLEEF's dispatcher). sleef.h declares them only when the translation
// unit itself is compiled for AVX / AVX-512F (e.g. -march=native); otherwise they are declared here,
// and only code compiled for those widths (target attributes) calls them. Declaring them both ways
// does not compile: sleef.h's declarations carry its `const` qualifier on the return type.
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <sleef.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // the ABI notes on __m256d / __m512d: only code built
                                          // for those widths calls them
// clang refuses a call passing __m256d / __m512d unless caller and callee agree on AVX / AVX-512F
// (GCC only notes it), so for clang the declarations carry the callers' target too.
#if defined(__clang__)
#define PEMC_SLEEF_TARGET(isa) __attribute__((target(isa)))
#else
#define PEMC_SLEEF_TARGET(isa)
#endif
#if !defined(__AVX__)
extern "C" PEMC_SLEEF_TARGET("avx2,fma") __m256d Sleef_expd4_u10avx2(__m256d);
extern "C" PEMC_SLEEF_TARGET("avx2,fma") __m256d Sleef_logd4_u10avx2(__m256d);
extern "C" PEMC_SLEEF_TARGET("avx2,fma") __m256d Sleef_log1pd4_u10avx2(__m256d);
#endif
#if !defined(__AVX512F__)
extern "C" PEMC_SLEEF_TARGET("avx512f") __m512d Sleef_expd8_u10avx512f(__m512d);
extern "C" PEMC_SLEEF_TARGET("avx512f") __m512d Sleef_logd8_u10avx512f(__m512d);
#endif
#pragma GCC diagnostic pop
#define PEMC_SLEEF_WIDE 1
#endif
