#pragma once
// The AVX2/FMA kernels of Gaussian's product path (gaussian_fast.cpp; see gaussian.hpp): triangular
// matrix-vector products with the padded inverse factor T = L^{-1}, and where their rows go. Only
// gaussian_fast.cpp includes this header; everything here is compiled for avx2,fma and called only
// after cpu_has_avx2_fma().
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <cstddef>

#include "core/types.hpp"  // Eigen's EIGEN_VECTORIZE_* (the packet size the norm below matches)

#define PEMC_GAUSSIAN_AVX2 1

namespace pemc::densities::avx2 {

// y = A x for a triangular A, column-major and zero-padded to ld x ld (ld a multiple of 4; x has
// zero padding too): lower (row block v uses column blocks 0..v) or upper (v..ld/4 - 1). Each block
// of 4 rows is an independent dot product over whole 4-column blocks with four accumulators, so
// there is neither a remainder loop nor a long dependency chain.
template <bool kLower>
__attribute__((target("avx2,fma"))) void triangular_product(const double* a, int ld,
                                                            const double* x, double* y) {
  for (int v = 0; v < ld; v += 4) {
    const int k0 = kLower ? 0 : v;
    const int k1 = kLower ? v + 4 : ld;
    __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
    __m256d acc2 = _mm256_setzero_pd(), acc3 = _mm256_setzero_pd();
    for (int k = k0; k < k1; k += 4) {
      const double* c = a + static_cast<std::ptrdiff_t>(k) * ld + v;
      acc0 = _mm256_fmadd_pd(_mm256_loadu_pd(c), _mm256_broadcast_sd(x + k), acc0);
      acc1 = _mm256_fmadd_pd(_mm256_loadu_pd(c + ld), _mm256_broadcast_sd(x + k + 1), acc1);
      acc2 = _mm256_fmadd_pd(_mm256_loadu_pd(c + 2 * ld), _mm256_broadcast_sd(x + k + 2), acc2);
      acc3 = _mm256_fmadd_pd(_mm256_loadu_pd(c + 3 * ld), _mm256_broadcast_sd(x + k + 3), acc3);
    }
    _mm256_storeu_pd(y + v, _mm256_add_pd(_mm256_add_pd(acc0, acc1), _mm256_add_pd(acc2, acc3)));
  }
}

// a * b, rounded: the empty asm keeps GCC from contracting it with a following add into one FMA
// (it does so in functions compiled for FMA), which would change the rounding of the sums below.
__attribute__((target("avx2,fma"), always_inline)) inline __m256d mul_rounded(__m256d a,
                                                                              __m256d b) {
  __m256d p = _mm256_mul_pd(a, b);
  asm("" : "+x"(p));
  return p;
}

// 32 bytes as two 16-byte halves. Vectors shared with other code (x, grad phi, the gradient) are
// written and read by it 16 bytes (Eigen's SSE2 packets) or 8 bytes at a time; a 32-byte access
// over them would not be forwarded from (or to) those stores in flight and stalls (notably on AMD
// CPUs, which do not forward the upper half of a 32-byte store).
__attribute__((target("avx2,fma"), always_inline)) inline __m256d load_halves(const double* p) {
  return _mm256_loadu_pd(p);
}
__attribute__((target("avx2,fma"), always_inline)) inline void store_halves(double* p, __m256d v) {
  _mm256_storeu_pd(p, v);
}

// Lanes 0..3 of a row block starting at `row` that lie below n (the unpadded dimension).
__attribute__((target("avx2,fma"))) inline __m256i tail_mask(int n, int row) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n - row), _mm256_setr_epi64x(0, 1, 2, 3));
}

// Where a product's rows go: stored as they are (y = A x; the first n entries), or mixed into the
// tempered gradient as out = w_phi * grad_phi + w_psi * y (continuous tempering's
// beta grad phi + (1 - beta) grad psi), two products and a sum per entry — exactly the rounding of
// that expression in Eigen. Vectors have n entries (not padded): the last row block is masked.
struct PlainStore {
  double* y;
  int n;
};
struct MixedStore {
  double w_phi, w_psi;
  const double* grad_phi;
  double* out;
  double* y;  // null, or where y itself goes too
  int n;
};

// The first n - row (1..3) lanes of y to p: scalar and 2-wide stores (a masked store is slow on
// some CPUs, e.g. AMD's).
__attribute__((target("avx2,fma"), always_inline)) inline void store_tail(double* p, int count,
                                                                          __m256d y) {
  const __m128d lo = _mm256_castpd256_pd128(y);
  if (count == 1) {
    _mm_store_sd(p, lo);
    return;
  }
  _mm_storeu_pd(p, lo);
  if (count == 3) _mm_store_sd(p + 2, _mm256_extractf128_pd(y, 1));
}

__attribute__((target("avx2,fma"))) inline void store_rows(const PlainStore& s, int row,
                                                           __m256d y) {
  if (row + 4 <= s.n)
    store_halves(s.y + row, y);
  else
    store_tail(s.y + row, s.n - row, y);
}

__attribute__((target("avx2,fma"))) inline void store_rows(const MixedStore& s, int row,
                                                           __m256d y) {
  const __m256d wy = mul_rounded(_mm256_set1_pd(s.w_psi), y);
  if (row + 4 <= s.n) {
    const __m256d wg = mul_rounded(_mm256_set1_pd(s.w_phi), load_halves(s.grad_phi + row));
    if (s.y) store_halves(s.y + row, y);
    store_halves(s.out + row, _mm256_add_pd(wg, wy));
    return;
  }
  const __m256d wg = mul_rounded(_mm256_set1_pd(s.w_phi),
                                 _mm256_maskload_pd(s.grad_phi + row, tail_mask(s.n, row)));
  if (s.y) store_tail(s.y + row, s.n - row, y);
  store_tail(s.out + row, s.n - row, _mm256_add_pd(wg, wy));
}

// The same product for ld = 4 NV <= 32 with the column loop outside, x in registers (xv[kb] holds
// x_{4kb..4kb+3}) and the rows left in registers (out[v] = rows 4v..4v+3): each x_k is broadcast
// once, from its register (a shuffle, not a load: the loads of the factor are what bounds these
// products; ~10% faster than broadcasting from memory), and the NV row blocks accumulate in two
// sets of registers, even and odd columns, to halve the dependency chains. Fully unrolled for
// each NV.
template <int kLane>
__attribute__((target("avx2,fma"), always_inline)) inline __m256d lane(__m256d v) {
  return _mm256_permute4x64_pd(v, kLane * 0x55);
}
template <int NV, bool kLower>
__attribute__((target("avx2,fma"), always_inline)) inline void triangular_product_regs(
    const double* a, const __m256d* xv, __m256d* out) {
  constexpr int ld = 4 * NV;
  __m256d acc0[NV], acc1[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) acc0[v] = acc1[v] = _mm256_setzero_pd();
#pragma GCC unroll 8
  for (int kb = 0; kb < NV; ++kb) {
    const __m256d xs[4] = {lane<0>(xv[kb]), lane<1>(xv[kb]), lane<2>(xv[kb]), lane<3>(xv[kb])};
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      const int k = 4 * kb + c;
      const double* col = a + k * ld;
      __m256d* acc = (c & 1) ? acc1 : acc0;
#pragma GCC unroll 8
      for (int v = kLower ? kb : 0; v < (kLower ? NV : kb + 1); ++v)
        acc[v] = _mm256_fmadd_pd(_mm256_loadu_pd(col + 4 * v), xs[c], acc[v]);
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) out[v] = _mm256_add_pd(acc0[v], acc1[v]);
}

// |r|^2 of the padded r (4 NV entries, 32-byte chunks), summed in exactly the order of Eigen's
// vectorised r.squaredNorm() for this build's packet size, so the potential is bit-identical to
// that expression: packets of 2 (SSE2) accumulate in two interleaved partial sums, i.e. lanes
// (0, 1) and (2, 3) of one 4-wide sum; packets of 4 (AVX) in two sums over alternate chunks with an
// odd last chunk added after they are combined. Without a known packet size Eigen sums instead.
// (No Eigen code inside target("avx2") functions: its instantiations there could be the ones the
// linker keeps for the whole program.)
#if defined(EIGEN_VECTORIZE_AVX512) || !defined(EIGEN_VECTORIZE_SSE2)
#define PEMC_GAUSSIAN_EIGEN_NORM 1
#endif

__attribute__((target("avx2,fma"), always_inline)) inline __m256d squares(const double* r) {
  const __m256d x = _mm256_loadu_pd(r);
  return mul_rounded(x, x);
}

template <int NV>
__attribute__((target("avx2,fma"), always_inline)) inline double squared_norm_fixed(
    const double* r) {
#if defined(EIGEN_VECTORIZE_AVX)
  __m256d s0 = squares(r);
  if constexpr (NV >= 2) {
    __m256d s1 = squares(r + 4);
#pragma GCC unroll 8
    for (int v = 2; v + 1 < NV; v += 2) {
      s0 = _mm256_add_pd(s0, squares(r + 4 * v));
      s1 = _mm256_add_pd(s1, squares(r + 4 * (v + 1)));
    }
    s0 = _mm256_add_pd(s0, s1);
    if constexpr (NV % 2 == 1) s0 = _mm256_add_pd(s0, squares(r + 4 * (NV - 1)));
  }
#else
  __m256d s0 = squares(r);
#pragma GCC unroll 8
  for (int v = 1; v < NV; ++v) s0 = _mm256_add_pd(s0, squares(r + 4 * v));
#endif
  const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s0), _mm256_extractf128_pd(s0, 1));
  return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

// One call for psi's quadratic form and (optionally) its gradient, for ld = 4 NV <= 32:
// y = x - mu (zero-padded, in registers), r = T y (in registers, and to r_pad), |r|^2 (returned),
// then the upper product T' r to `store` when it is given. Raw pointers only: no Eigen expression or Ref on the
// way (their copies cost more than the products at this size).
struct FusedArgs {
  const double* t;   // T = L^{-1}, padded column-major
  const double* tt;  // T', padded column-major
  const double* x;   // n entries
  const double* mu;  // n entries
  double* r_pad;     // 4 NV entries
  int n;
};

template <int NV, class Store>
__attribute__((target("avx2,fma"))) double fused_fixed(const FusedArgs& a, const Store* store) {
  __m256d y[NV], r[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
    const int row = 4 * v;
    if (row + 4 <= a.n) {
      y[v] = _mm256_sub_pd(load_halves(a.x + row), _mm256_loadu_pd(a.mu + row));
    } else {
      const __m256i mask = tail_mask(a.n, row);
      y[v] = _mm256_sub_pd(_mm256_maskload_pd(a.x + row, mask), _mm256_maskload_pd(a.mu + row, mask));
    }
  }
  triangular_product_regs<NV, true>(a.t, y, r);
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) _mm256_storeu_pd(a.r_pad + 4 * v, r[v]);
#ifdef PEMC_GAUSSIAN_EIGEN_NORM
  const double norm = 0.0;  // the caller sums r_pad with Eigen
#else
  const double norm = squared_norm_fixed<NV>(a.r_pad);
#endif
  if (store) {
    triangular_product_regs<NV, false>(a.tt, r, y);
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) store_rows(*store, 4 * v, y[v]);
  }
  return norm;
}

// store's rows from a padded vector g (the general path's epilogue).
template <class Store>
__attribute__((target("avx2,fma"))) void store_padded(const Store& store, const double* g, int ld) {
  for (int row = 0; row < ld; row += 4) store_rows(store, row, _mm256_loadu_pd(g + row));
}

// fused_fixed for ld = 4 NV with NV = 1..8; false for larger ld.
template <class Store>
bool fused_small(int ld, const FusedArgs& a, const Store* store, double& norm) {
  switch (ld / 4) {
    case 1: norm = fused_fixed<1>(a, store); return true;
    case 2: norm = fused_fixed<2>(a, store); return true;
    case 3: norm = fused_fixed<3>(a, store); return true;
    case 4: norm = fused_fixed<4>(a, store); return true;
    case 5: norm = fused_fixed<5>(a, store); return true;
    case 6: norm = fused_fixed<6>(a, store); return true;
    case 7: norm = fused_fixed<7>(a, store); return true;
    case 8: norm = fused_fixed<8>(a, store); return true;
    default: return false;
  }
}


}  // namespace pemc::densities::avx2

#endif
