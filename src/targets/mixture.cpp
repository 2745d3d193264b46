#include "targets/mixture.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
// SLEEF's AVX2 and AVX-512F exp and log, called directly (core/sleef_wide.hpp). The avx512f and
// avx2 u10 exp and log are one algorithm with FMAs: the same bits lane by lane
// (MixtureBatch.Avx512MatchesAvx2BitForBit checks it, also at extreme arguments).
#include "core/sleef_wide.hpp"
#ifdef PEMC_SLEEF_WIDE
#define PEMC_MIXTURE_LANES4 1
#endif

#include "core/batched_exp.hpp"
#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "core/numerics.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::targets {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string component_field(int k) {
  return "target.mixture.components[" + std::to_string(k) + "]";
}

// A pair of doubles and the few operations evaluate() needs: SSE2 where available (every x86-64
// build), otherwise two plain doubles with the same IEEE operations (the exp may round differently:
// SLEEF's scalar and vector exps are each within 1 ulp, not bit-identical).
namespace simd {
#if defined(__SSE2__)
using Pack = __m128d;
inline Pack load(const double* p) { return _mm_loadu_pd(p); }
inline Pack pair(double lo, double hi) { return _mm_set_pd(hi, lo); }
inline void store(double* p, Pack v) { _mm_storeu_pd(p, v); }
inline Pack splat(double v) { return _mm_set1_pd(v); }
inline Pack add(Pack a, Pack b) { return _mm_add_pd(a, b); }
inline Pack sub(Pack a, Pack b) { return _mm_sub_pd(a, b); }
inline Pack mul(Pack a, Pack b) { return _mm_mul_pd(a, b); }
// Lane-wise a > b ? a : b (b when either is NaN).
inline Pack max(Pack a, Pack b) { return _mm_max_pd(a, b); }
inline double lane(Pack v, int i) {
  alignas(16) double a[2];
  _mm_store_pd(a, v);
  return a[i];
}
// Whether some lane of v is >= c.
inline bool any_at_least(Pack v, double c) { return _mm_movemask_pd(_mm_cmpge_pd(v, _mm_set1_pd(c))) != 0; }
#else
struct Pack {
  double v[2];
};
inline Pack load(const double* p) { return {{p[0], p[1]}}; }
inline Pack pair(double lo, double hi) { return {{lo, hi}}; }
inline void store(double* p, Pack a) { p[0] = a.v[0], p[1] = a.v[1]; }
inline Pack splat(double v) { return {{v, v}}; }
inline Pack add(Pack a, Pack b) { return {{a.v[0] + b.v[0], a.v[1] + b.v[1]}}; }
inline Pack sub(Pack a, Pack b) { return {{a.v[0] - b.v[0], a.v[1] - b.v[1]}}; }
inline Pack mul(Pack a, Pack b) { return {{a.v[0] * b.v[0], a.v[1] * b.v[1]}}; }
inline Pack max(Pack a, Pack b) {
  return {{a.v[0] > b.v[0] ? a.v[0] : b.v[0], a.v[1] > b.v[1] ? a.v[1] : b.v[1]}};
}
inline double lane(Pack v, int i) { return v.v[i]; }
inline bool any_at_least(Pack v, double c) { return v.v[0] >= c || v.v[1] >= c; }
#endif
inline double lane_sum(Pack v) { return lane(v, 0) + lane(v, 1); }
inline double lane_max(Pack v) { return std::max(lane(v, 0), lane(v, 1)); }

// exp(v) for kExpCut <= v <= 0, exactly 0 below (core/batched_exp.hpp: SLEEF's 1-ULP exp, one
// call per pair of components).
#if defined(__SSE2__)
inline Pack exp_nonpositive(Pack v) { return pemc::exp_nonpositive(v); }
#else
inline Pack exp_nonpositive(Pack v) {
  return {{pemc::exp_nonpositive(v.v[0]), pemc::exp_nonpositive(v.v[1])}};
}
#endif
}  // namespace simd

#ifdef PEMC_MIXTURE_LANES4
// The mixture's arrays, for the lane kernel below (a free function: GCC's target attribute does
// not mix well with member functions declared in a header compiled for plain x86-64).
struct LaneLayout {
  const double* mean;          // [i * n_pad + k]
  const double* half_inv_var;  // [i * n_pad + k]
  const double* log_norm;      // [k]
  std::size_t n_comp, n_pad, d;
  double* scaled;              // [(k * d + i) * W + lane]
  double* terms;               // [k * W + lane]
  // The packed exp arguments (n_comp * 8 + 8 doubles) and per-component lane masks.
  double* packed;
  std::uint8_t* masks;
  std::size_t real;            // lanes holding the batch's points (the rest repeat the last one)
};


// The 4-lane pass's compress and expand as vpermd indices (two 32-bit halves per double), for
// each 4-bit lane mask: compress moves the kept lanes, in order, to the lowest lanes; expand
// sends packed element r to the lane holding the mask's r-th set bit (the other lanes are then
// zeroed with kLaneMask4: all-ones in the kept lanes).
struct LaneTables4 {
  alignas(32) std::int32_t compress[16][8];
  alignas(32) std::int32_t expand[16][8];
  alignas(32) std::uint64_t lane_mask[16][4];
};
constexpr LaneTables4 make_lane_tables4() {
  LaneTables4 t{};
  for (int m = 0; m < 16; ++m) {
    int rank = 0;
    for (int lane = 0; lane < 4; ++lane) {
      const bool kept = ((m >> lane) & 1) != 0;
      t.lane_mask[m][lane] = kept ? ~std::uint64_t{0} : 0;
      t.expand[m][2 * lane] = 2 * (kept ? rank : 0);
      t.expand[m][2 * lane + 1] = 2 * (kept ? rank : 0) + 1;
      if (kept) {
        t.compress[m][2 * rank] = 2 * lane;
        t.compress[m][2 * rank + 1] = 2 * lane + 1;
        ++rank;
      }
    }
  }
  return t;
}
alignas(32) constexpr LaneTables4 kLaneTables4 = make_lane_tables4();
constexpr const auto& kCompress4 = kLaneTables4.compress;
constexpr const auto& kExpand4 = kLaneTables4.expand;
constexpr const auto& kLaneMask4 = kLaneTables4.lane_mask;

#define PEMC_AVX2 __attribute__((target("avx2,fma"), always_inline)) static inline
#define PEMC_AVX512 __attribute__((target("avx512f,avx2,fma"), always_inline)) static inline
// W points per register: W = 8 (512-bit, on CPUs with AVX-512F), 4 (256-bit) or 2 (128-bit, for
// the last one or two points of a batch), with the same operations lane by lane: the same IEEE
// arithmetic, explicit fused multiply-adds and SLEEF's exp and log in their avx512f, avx2 and
// avx2128 builds of one algorithm. So a point's bits do not depend on which width evaluates it,
// nor on whether its node has AVX-512. (GCC's C++ default -ffp-contract=fast may fuse other
// products too, but it compiles one kernel text for every width: the tests compare the bits.)
// M is a lane mask: a vector of all-ones / all-zeros lanes up to 256 bits, a mask register for 8.
// The 4- and 8-lane passes pack their exps (kPacked: bits, store_compressed, load_expanded, and
// the exps in ExpLanes); the 2-lane pass skips whole components instead (keep, any). TwoLanes4
// (below) is the eight-lane pass of AVX2 CPUs.
template <int W>
struct Lanes;
// GCC 12's AVX-512 intrinsics start from a self-initialised "undefined" vector, which its
// uninitialised-use warnings flag wherever they are inlined (GCC bug 105593, fixed in 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <>
struct Lanes<8> {
  using V = __m512d;
  using M = __mmask8;
  using ExpLanes = Lanes<8>;
  static constexpr int kWidth = 8;
  static constexpr bool kPacked = true;
  PEMC_AVX512 V set1(double v) { return _mm512_set1_pd(v); }
  PEMC_AVX512 V zero() { return _mm512_setzero_pd(); }
  PEMC_AVX512 V load(const double* p) { return _mm512_loadu_pd(p); }
  PEMC_AVX512 void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  PEMC_AVX512 V add(V a, V b) { return _mm512_add_pd(a, b); }
  PEMC_AVX512 V sub(V a, V b) { return _mm512_sub_pd(a, b); }
  PEMC_AVX512 V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  PEMC_AVX512 V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  PEMC_AVX512 V div(V a, V b) { return _mm512_div_pd(a, b); }
  PEMC_AVX512 V max(V a, V b) { return _mm512_max_pd(a, b); }  // b on NaN, as maxpd
  PEMC_AVX512 M ge_mask(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ); }
  // A mask as bits (bit l: lane l), and the lanes of v whose bits are set moved to the lowest
  // lanes in order (compress; the other lanes unspecified) and back (expand; +0 elsewhere).
  PEMC_AVX512 unsigned bits(M mask) { return mask; }
  PEMC_AVX512 V compress(unsigned keep, V v) {
    return _mm512_maskz_compress_pd(static_cast<M>(keep), v);
  }
  PEMC_AVX512 V expand(unsigned keep, V v) {
    return _mm512_maskz_expand_pd(static_cast<M>(keep), v);
  }
  PEMC_AVX512 void store_compressed(double* p, unsigned keep, V v) { store(p, compress(keep, v)); }
  PEMC_AVX512 V load_expanded(unsigned keep, const double* p) { return expand(keep, load(p)); }
  PEMC_AVX512 V exp(V v) { return Sleef_expd8_u10avx512f(v); }
  PEMC_AVX512 V log(V v) { return Sleef_logd8_u10avx512f(v); }
  PEMC_AVX512 V coordinate(const double* const* x, std::size_t i) {
    return _mm512_set_pd(x[7][i], x[6][i], x[5][i], x[4][i], x[3][i], x[2][i], x[1][i], x[0][i]);
  }
  PEMC_AVX512 void store_pairs(V a, V b, double* const* g) {
    const V lo = _mm512_unpacklo_pd(a, b), hi = _mm512_unpackhi_pd(a, b);  // (a0 b0 a2 b2 ..) ..
    const __m256d lo0 = _mm512_castpd512_pd256(lo), lo1 = _mm512_extractf64x4_pd(lo, 1);
    const __m256d hi0 = _mm512_castpd512_pd256(hi), hi1 = _mm512_extractf64x4_pd(hi, 1);
    _mm_storeu_pd(g[0], _mm256_castpd256_pd128(lo0));
    _mm_storeu_pd(g[1], _mm256_castpd256_pd128(hi0));
    _mm_storeu_pd(g[2], _mm256_extractf128_pd(lo0, 1));
    _mm_storeu_pd(g[3], _mm256_extractf128_pd(hi0, 1));
    _mm_storeu_pd(g[4], _mm256_castpd256_pd128(lo1));
    _mm_storeu_pd(g[5], _mm256_castpd256_pd128(hi1));
    _mm_storeu_pd(g[6], _mm256_extractf128_pd(lo1, 1));
    _mm_storeu_pd(g[7], _mm256_extractf128_pd(hi1, 1));
  }
};
#pragma GCC diagnostic pop
template <>
struct Lanes<4> {
  using V = __m256d;
  using M = V;
  using ExpLanes = Lanes<4>;
  static constexpr int kWidth = 4;
  static constexpr bool kPacked = true;
  PEMC_AVX2 V set1(double v) { return _mm256_set1_pd(v); }
  PEMC_AVX2 V zero() { return _mm256_setzero_pd(); }
  PEMC_AVX2 V load(const double* p) { return _mm256_loadu_pd(p); }
  PEMC_AVX2 void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  PEMC_AVX2 V add(V a, V b) { return _mm256_add_pd(a, b); }
  PEMC_AVX2 V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  PEMC_AVX2 V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  PEMC_AVX2 V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  PEMC_AVX2 V div(V a, V b) { return _mm256_div_pd(a, b); }
  PEMC_AVX2 V max(V a, V b) { return _mm256_max_pd(a, b); }
  PEMC_AVX2 M ge_mask(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_GE_OQ); }
  // AVX2 has no vcompresspd / vexpandpd: the same moves as one vpermd each, by tables indexed by
  // the 4 mask bits (kCompress4, kExpand4), and the expansion's zeros by an and (kLaneMask4).
  PEMC_AVX2 unsigned bits(M mask) { return static_cast<unsigned>(_mm256_movemask_pd(mask)); }
  PEMC_AVX2 V compress(unsigned keep, V v) {
    const __m256i order = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCompress4[keep]));
    return _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(v), order));
  }
  PEMC_AVX2 V expand(unsigned keep, V v) {
    const __m256i order = _mm256_load_si256(reinterpret_cast<const __m256i*>(kExpand4[keep]));
    const V moved = _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(v), order));
    return _mm256_and_pd(moved, _mm256_load_pd(reinterpret_cast<const double*>(kLaneMask4[keep])));
  }
  PEMC_AVX2 void store_compressed(double* p, unsigned keep, V v) { store(p, compress(keep, v)); }
  PEMC_AVX2 V load_expanded(unsigned keep, const double* p) { return expand(keep, load(p)); }
  PEMC_AVX2 V exp(V v) { return Sleef_expd4_u10avx2(v); }
  PEMC_AVX2 V log(V v) { return Sleef_logd4_u10avx2(v); }
  PEMC_AVX2 V coordinate(const double* const* x, std::size_t i) {
    return _mm256_set_pd(x[3][i], x[2][i], x[1][i], x[0][i]);
  }
  // (a_l, b_l) to g[l][0..2) for each lane l.
  PEMC_AVX2 void store_pairs(V a, V b, double* const* g) {
    const V lo = _mm256_unpacklo_pd(a, b), hi = _mm256_unpackhi_pd(a, b);  // (a0 b0 a2 b2) ...
    _mm_storeu_pd(g[0], _mm256_castpd256_pd128(lo));
    _mm_storeu_pd(g[1], _mm256_castpd256_pd128(hi));
    _mm_storeu_pd(g[2], _mm256_extractf128_pd(lo, 1));
    _mm_storeu_pd(g[3], _mm256_extractf128_pd(hi, 1));
  }
};
template <>
struct Lanes<2> {
  using V = __m128d;
  using M = V;
  static constexpr int kWidth = 2;
  static constexpr bool kPacked = false;
  PEMC_AVX2 V set1(double v) { return _mm_set1_pd(v); }
  PEMC_AVX2 V zero() { return _mm_setzero_pd(); }
  PEMC_AVX2 V load(const double* p) { return _mm_loadu_pd(p); }
  PEMC_AVX2 void store(double* p, V v) { _mm_storeu_pd(p, v); }
  PEMC_AVX2 V add(V a, V b) { return _mm_add_pd(a, b); }
  PEMC_AVX2 V sub(V a, V b) { return _mm_sub_pd(a, b); }
  PEMC_AVX2 V mul(V a, V b) { return _mm_mul_pd(a, b); }
  PEMC_AVX2 V fma(V a, V b, V c) { return _mm_fmadd_pd(a, b, c); }
  PEMC_AVX2 V div(V a, V b) { return _mm_div_pd(a, b); }
  PEMC_AVX2 V max(V a, V b) { return _mm_max_pd(a, b); }
  PEMC_AVX2 M ge_mask(V a, V b) { return _mm_cmp_pd(a, b, _CMP_GE_OQ); }
  PEMC_AVX2 V keep(V v, M mask) { return _mm_and_pd(v, mask); }
  PEMC_AVX2 bool any(M mask) { return _mm_movemask_pd(mask) != 0; }
  PEMC_AVX2 V exp(V v) { return Sleef_expd2_u10avx2128(v); }
  PEMC_AVX2 V log(V v) { return Sleef_logd2_u10avx2128(v); }
  PEMC_AVX2 V coordinate(const double* const* x, std::size_t i) { return _mm_set_pd(x[1][i], x[0][i]); }
  PEMC_AVX2 void store_pairs(V a, V b, double* const* g) {
    _mm_storeu_pd(g[0], _mm_unpacklo_pd(a, b));
    _mm_storeu_pd(g[1], _mm_unpackhi_pd(a, b));
  }
};
// Eight lanes on AVX2: two 256-bit halves, each doing Lanes<4>'s operations, so every lane gets
// the bits it gets in a 4-lane pass. One pass over the components for 5 to 8 points instead of
// a 4-lane pass and a 2-lane one: the halves' independent instructions overlap (the passes'
// chains of dependent adds, maxima and exps are their cost, not the instruction count), and the
// components' means and variances are broadcast once for both. The exps run packed across both
// halves, four at a time (ExpLanes): a point's kept components take the same number of exp
// lanes as in any other pass.
struct TwoLanes4 {
  using H = Lanes<4>;
  struct V {
    __m256d lo, hi;
  };
  using M = V;
  using ExpLanes = Lanes<4>;
  static constexpr int kWidth = 8;
  static constexpr bool kPacked = true;
  PEMC_AVX2 V set1(double v) {
    const __m256d b = H::set1(v);
    return {b, b};
  }
  PEMC_AVX2 V zero() { return {H::zero(), H::zero()}; }
  PEMC_AVX2 V load(const double* p) { return {H::load(p), H::load(p + 4)}; }
  PEMC_AVX2 void store(double* p, V v) {
    H::store(p, v.lo);
    H::store(p + 4, v.hi);
  }
  PEMC_AVX2 V add(V a, V b) { return {H::add(a.lo, b.lo), H::add(a.hi, b.hi)}; }
  PEMC_AVX2 V sub(V a, V b) { return {H::sub(a.lo, b.lo), H::sub(a.hi, b.hi)}; }
  PEMC_AVX2 V mul(V a, V b) { return {H::mul(a.lo, b.lo), H::mul(a.hi, b.hi)}; }
  PEMC_AVX2 V fma(V a, V b, V c) { return {H::fma(a.lo, b.lo, c.lo), H::fma(a.hi, b.hi, c.hi)}; }
  PEMC_AVX2 V div(V a, V b) { return {H::div(a.lo, b.lo), H::div(a.hi, b.hi)}; }
  PEMC_AVX2 V max(V a, V b) { return {H::max(a.lo, b.lo), H::max(a.hi, b.hi)}; }
  PEMC_AVX2 M ge_mask(V a, V b) { return {H::ge_mask(a.lo, b.lo), H::ge_mask(a.hi, b.hi)}; }
  PEMC_AVX2 unsigned bits(M mask) { return H::bits(mask.lo) | (H::bits(mask.hi) << 4); }
  // The low half's kept lanes at p, the high half's right after them (its store overwrites the
  // low half's unspecified lanes), and back.
  PEMC_AVX2 void store_compressed(double* p, unsigned keep, V v) {
    const unsigned low = keep & 15u;
    H::store(p, H::compress(low, v.lo));
    H::store(p + __builtin_popcount(low), H::compress(keep >> 4, v.hi));
  }
  PEMC_AVX2 V load_expanded(unsigned keep, const double* p) {
    const unsigned low = keep & 15u;
    return {H::load_expanded(low, p), H::load_expanded(keep >> 4, p + __builtin_popcount(low))};
  }
  PEMC_AVX2 V log(V v) { return {H::log(v.lo), H::log(v.hi)}; }
  PEMC_AVX2 V coordinate(const double* const* x, std::size_t i) {
    return {H::coordinate(x, i), H::coordinate(x + 4, i)};
  }
  PEMC_AVX2 void store_pairs(V a, V b, double* const* g) {
    H::store_pairs(a.lo, b.lo, g);
    H::store_pairs(a.hi, b.hi, g + 4);
  }
};
#undef PEMC_AVX2
#undef PEMC_AVX512

// clang has no `#pragma GCC target`: there the same targets are given to every function of the
// included lane kernel through `#pragma clang attribute`.
namespace avx2 {
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#include "targets/mixture_lanes.inc"
#pragma clang attribute pop
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include "targets/mixture_lanes.inc"
#pragma GCC pop_options
#endif
}  // namespace avx2

namespace avx512 {
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#include "targets/mixture_lanes.inc"
#pragma clang attribute pop
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
#include "targets/mixture_lanes.inc"
#pragma GCC pop_options
#endif
}  // namespace avx512
#endif  // PEMC_MIXTURE_LANES4

}  // namespace

GaussianMixture::GaussianMixture(std::vector<Component> components)
    : components_(std::move(components)) {
  const auto n_comp = static_cast<Eigen::Index>(components_.size());
  if (n_comp == 0) throw ConfigError("mixture target: no components");
  const Eigen::Index d = components_.front().mean.size();
  if (d < 1) throw ConfigError("mixture target: component 0 has an empty mean");
  double total_weight = 0.0;
  for (Eigen::Index k = 0; k < n_comp; ++k) {
    const Component& c = components_[k];
    const std::string where = "mixture target: component " + std::to_string(k) + ": ";
    if (!(std::isfinite(c.weight) && c.weight > 0.0))
      throw ConfigError(where + "weight must be finite and > 0 (got " + std::to_string(c.weight) +
                        ")");
    if (c.mean.size() != d)
      throw ConfigError(where + "mean has " + std::to_string(c.mean.size()) +
                        " entries, expected " + std::to_string(d));
    if (c.variance.size() != d)
      throw ConfigError(where + "variance has " + std::to_string(c.variance.size()) +
                        " entries, expected " + std::to_string(d));
    if (!c.mean.allFinite()) throw ConfigError(where + "mean is not finite");
    for (Eigen::Index i = 0; i < d; ++i)
      if (!(std::isfinite(c.variance[i]) && c.variance[i] > 0.0))
        throw ConfigError(where + "variance[" + std::to_string(i) +
                          "] must be finite and > 0 (got " + std::to_string(c.variance[i]) + ")");
    total_weight += c.weight;
  }
  if (!std::isfinite(total_weight)) throw ConfigError("mixture target: weights sum to infinity");

  dim_ = static_cast<int>(d);
  n_pad_ = static_cast<int>(n_comp + (n_comp % 2));
  const auto n_pad = static_cast<std::size_t>(n_pad_);
  const auto cells = n_pad * static_cast<std::size_t>(d);
  mean_.assign(cells, 0.0);
  half_inv_var_.assign(cells, 0.5);
  log_norm_.assign(n_pad, -kInf);
  scaled_.assign(cells, 0.0);
  terms_.assign(n_pad, 0.0);
#ifdef PEMC_MIXTURE_LANES4
  lanes4_ = cpu_has_avx2_fma();
  lanes8_ = lanes4_ && cpu_has_avx512f();
#endif
  if (lanes4_) {
    const std::size_t w = 8;  // the widest pass (AVX-512, or TwoLanes4)
    lane_scaled_.assign(static_cast<std::size_t>(n_comp) * static_cast<std::size_t>(d) * w, 0.0);
    lane_terms_.assign(static_cast<std::size_t>(n_comp) * w, 0.0);
    lane_pad_grad_.assign(static_cast<std::size_t>(d) * w, 0.0);
    lane_packed_.assign(static_cast<std::size_t>(n_comp) * w + w, 0.0);
    lane_masks_.assign(static_cast<std::size_t>(n_comp), 0);
  }
  for (Eigen::Index k = 0; k < n_comp; ++k) {
    Component& c = components_[k];
    c.weight /= total_weight;
    for (Eigen::Index i = 0; i < d; ++i) {
      const auto at = static_cast<std::size_t>(i) * n_pad + static_cast<std::size_t>(k);
      mean_[at] = c.mean[i];
      half_inv_var_[at] = 0.5 / c.variance[i];
    }
    log_norm_[k] = std::log(c.weight) - 0.5 * static_cast<double>(d) * kLog2Pi -
                   0.5 * c.variance.array().log().sum();
  }
}

// Two components at a time (one SSE2 register; the plain x86-64 build has nothing wider), with
// every step branch-free: which components are near x changes from call to call, so branches on
// it (the old per-component underflow test and zero-responsibility skip) were mispredicted.
//   s_ki = (x_i - mu_ki) / var_ki,  t_k = log_norm_k - 1/2 sum_i s_ki (x_i - mu_ki),
//   e_k = exp(t_k - max t) (exp_nonpositive: 0 below kExpCut),  potential = -(max t + log sum e),
//   d potential / dx_i = sum_k e_k s_ki / sum_k e_k   (e_k / sum = the responsibilities).
// D > 0: the dimension as a compile-time constant (small d: the coordinate loops unroll and the
// gradient sums ride along in the exp pass); D = 0: any dimension.
template <int D>
double GaussianMixture::evaluate_dim(const double* x, double* grad) const {
  using namespace simd;
  const std::size_t d = D > 0 ? static_cast<std::size_t>(D) : static_cast<std::size_t>(dim_);
  const std::size_t n = static_cast<std::size_t>(n_pad_);
  const double* mean = mean_.data();
  const double* half_inv_var = half_inv_var_.data();
  const double* log_norm = log_norm_.data();
  double* scaled = scaled_.data();
  double* t = terms_.data();
  // x_i in both lanes, loaded once (the stores below could alias x as far as the compiler knows).
  Pack xs[D > 0 ? D : 1];
  if constexpr (D > 0)
    for (std::size_t i = 0; i < d; ++i) xs[i] = splat(x[i]);
  // Pass 1: the log terms, their sum (NaN exactly when one is: each t_k is finite, -inf for an
  // infinite coordinate or an overflowing square, or NaN for a NaN coordinate; never +inf) and
  // their maximum. scaled_ holds half the gradient terms (x_i - mu_ki) / (2 var_ki): halving is
  // exact, and the gradient doubles them back at the end.
  Pack total = splat(0.0), top = splat(-kInf);
  for (std::size_t k = 0; k < n; k += 2) {
    Pack q = splat(0.0);
    for (std::size_t i = 0; i < d; ++i) {
      const std::size_t at = i * n + k;
      const Pack xi = D > 0 ? xs[i] : splat(x[i]);
      const Pack z = sub(xi, load(mean + at));
      const Pack s = mul(z, load(half_inv_var + at));
      store(scaled + at, s);
      q = add(q, mul(z, s));
    }
    const Pack tk = sub(load(log_norm + k), q);
    store(t + k, tk);
    total = add(total, tk);
    top = max(top, tk);
  }
  const bool saw_nan = std::isnan(lane_sum(total));
  const double max_term = lane_max(top);
  if (saw_nan || max_term == -kInf) {
    // NaN input -> NaN; an infinite coordinate -> density 0 -> potential +inf. Both reject.
    if (grad != nullptr)
      for (std::size_t i = 0; i < d; ++i) grad[i] = kNaN;
    return saw_nan ? kNaN : kInf;
  }
  // Pass 2: e_k = exp(t_k - max), a loop of its own: the exp is a call into SLEEF, across which
  // every vector register is caller-saved, so sums accumulated in the same loop were spilled and
  // reloaded around each call (BM_Gradient/kou_a: 80 ns fused, 72 ns split).
  const Pack shift = splat(max_term);
  // A pair of components both below the cut is exactly 0 without the exp call (at the Kou (a)
  // mixture's sigma^2 = 0.01 that is most pairs at most points; BM_GradientChained/kou_a -8%).
  for (std::size_t k = 0; k < n; k += 2) {
    const Pack v = sub(load(t + k), shift);
    store(t + k, any_at_least(v, kExpCut) ? exp_nonpositive(v) : splat(0.0));
  }
  // Pass 3: sum_k e_k (>= 1: the maximal term contributes exp(0) = 1); with D > 0 also the
  // gradient sums sum_k e_k scaled_ki.
  Pack sum_pack = splat(0.0);
  Pack g[D > 0 ? D : 1];
  for (auto& gi : g) gi = splat(0.0);
  for (std::size_t k = 0; k < n; k += 2) {
    const Pack e = load(t + k);
    sum_pack = add(sum_pack, e);
    if constexpr (D > 0)
      for (std::size_t i = 0; i < d; ++i) g[i] = add(g[i], mul(e, load(scaled + i * n + k)));
  }
  const double sum = lane_sum(sum_pack);
  const double u = -(max_term + std::log(sum));
  if (grad == nullptr) return u;
  const double inv_sum = 2.0 / sum;  // 2: scaled_ holds half terms
  auto gradient_sum = [&](std::size_t i) {
    if constexpr (D > 0) return lane_sum(g[i]) * inv_sum;
    Pack gi = splat(0.0);
    for (std::size_t k = 0; k < n; k += 2) gi = add(gi, mul(load(t + k), load(scaled + i * n + k)));
    return lane_sum(gi) * inv_sum;
  };
  // Stored in pairs: callers (the kernels' vector updates, the pseudo-extended finiteness check)
  // read the gradient with 16-byte loads, which cannot be store-forwarded from two 8-byte stores.
  double check = 0.0;
  std::size_t i = 0;
  for (; i + 2 <= d; i += 2) {
    const double g0 = gradient_sum(i), g1 = gradient_sum(i + 1);
    store(grad + i, pair(g0, g1));
    check += g0 * 0.0 + g1 * 0.0;
  }
  if (i < d) {
    grad[i] = gradient_sum(i);
    check += grad[i] * 0.0;
  }
  // Dropped components have e_k = 0 exactly, and scaled_ki is finite unless |x_i - mu_ki| / var_ki
  // overflows (x ~1e300 or a tiny variance), which makes that t_k = -inf, so e_k = 0, but
  // 0 * inf = NaN above: then sum again, skipping them (their exact contribution is 0).
  if (!(check == 0.0)) {
    for (std::size_t i = 0; i < d; ++i) {
      double gi = 0.0;
      for (std::size_t k = 0; k < n; ++k)
        if (t[k] != 0.0) gi += t[k] * scaled[i * n + k];
      grad[i] = gi * inv_sum;
    }
  }
  return u;
}

double GaussianMixture::evaluate(const double* x, double* grad) const {
  switch (dim_) {
    case 1:
      return evaluate_dim<1>(x, grad);
    case 2:
      return evaluate_dim<2>(x, grad);
    case 3:
      return evaluate_dim<3>(x, grad);
    case 4:
      return evaluate_dim<4>(x, grad);
    default:
      return evaluate_dim<0>(x, grad);
  }
}

// x.data(), not the Ref: copying the Ref into a by-value parameter cost a stalled 16-byte load
// of the caller's just-written Ref (store-forwarding failure) on every call.
double GaussianMixture::potential(ConstVectorRef x) const { return evaluate(x.data(), nullptr); }

double GaussianMixture::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  return evaluate(x.data(), grad.data());
}

void GaussianMixture::potential_and_gradient_batch(std::span<const double> points,
                                                   std::span<double> potentials,
                                                   std::span<double> grads) const {
#ifdef PEMC_MIXTURE_LANES4
  if (lanes4_) {
    check_batch_shape(points, potentials, grads);
    const std::size_t m = potentials.size(), d = static_cast<std::size_t>(dim_);
    LaneLayout layout{mean_.data(),
                      half_inv_var_.data(),
                      log_norm_.data(),
                      components_.size(),
                      static_cast<std::size_t>(n_pad_),
                      d,
                      lane_scaled_.data(),
                      lane_terms_.data(),
                      lane_packed_.data(),
                      lane_masks_.data(),
                      0};
    // Eight points per pass while five or more are left (AVX-512: one register; AVX2: two,
    // TwoLanes4); a remainder of one or two takes a two-lane pass, of three or four a four-lane
    // pass. Spare lanes repeat the last point (results to scratch). A pass's cost grows far less
    // than its width (BM_PeGradient/pe10_hmc/kou_a with AVX-512, batch of 10: 8 + 2 lanes 572 ns,
    // 8 + 8 613, 4 + 4 + 2 760; of 5: one 8-lane pass 310 ns, 4 + 2 470), and an 8-lane pass exps
    // only its points' components above the cut, packed (evaluate_lanes). On AVX2 the two-register
    // pass gains the same way: its halves' dependent chains overlap and each component's
    // constants are broadcast once (docs/performance.md has the current figures).
    for (std::size_t j = 0; j < m;) {
      const std::size_t left = m - j;
      const std::size_t w = left >= 5 ? 8 : left >= 3 ? 4 : 2;
      const double* x[8];
      double* g[8];
      double u[8];
      lane_pointers(points, grads, j, w, lane_pad_grad_.data(), x, g);
      layout.real = std::min(w, left);
      if (w == 8 && lanes8_)
        avx512::evaluate_lanes_dim<Lanes<8>>(layout, x, u, g);
      else if (w == 8)
        avx2::evaluate_lanes_dim<TwoLanes4>(layout, x, u, g);
      else if (w == 4)
        avx2::evaluate_lanes_dim<Lanes<4>>(layout, x, u, g);
      else
        avx2::evaluate_lanes_dim<Lanes<2>>(layout, x, u, g);
      for (std::size_t l = 0; l < layout.real; ++l) potentials[j + l] = u[l];
      j += layout.real;
    }
    return;
  }
#endif
  Target::potential_and_gradient_batch(points, potentials, grads);
}

Truth GaussianMixture::truth() const {
  const Eigen::Index d = dim_;
  Vector mean = Vector::Zero(d);
  Vector second = Vector::Zero(d);
  Matrix cross = Matrix::Zero(d, d);
  for (const Component& c : components_) {
    mean += c.weight * c.mean;
    second += c.weight * (c.mean.array().square() + c.variance.array()).matrix();
    cross += c.weight * (c.mean * c.mean.transpose());
    cross.diagonal() += c.weight * c.variance;
  }
  Truth t;
  t.mean = mean;
  t.second_moment = second;
  t.cross_moment = cross;
  t.log_z = 0.0;  // the potential includes all normalising constants
  return t;
}

std::vector<Vector> kou_means() {
  static constexpr double kMeans[20][2] = {{2.18, 5.76}, {8.67, 9.59}, {4.24, 8.48}, {8.41, 1.68},
                                           {3.93, 8.82}, {3.25, 3.47}, {1.70, 0.50}, {4.59, 5.60},
                                           {6.91, 5.81}, {6.87, 5.40}, {5.41, 2.65}, {2.70, 7.88},
                                           {4.98, 3.70}, {1.14, 2.39}, {8.33, 9.50}, {4.93, 1.50},
                                           {1.83, 0.09}, {2.26, 0.31}, {5.54, 6.86}, {1.69, 8.11}};
  std::vector<Vector> out;
  out.reserve(20);
  for (const auto& m : kMeans) out.push_back(Eigen::Vector2d(m[0], m[1]));
  return out;
}

std::shared_ptr<GaussianMixture> make_mixture(const v1::MixtureTarget& config) {
  using Component = GaussianMixture::Component;
  std::vector<Component> comps;
  if (config.preset() != v1::MixtureTarget::PRESET_UNSPECIFIED && config.components_size() > 0)
    throw ConfigError("target.mixture: give either a preset or components, not both (preset " +
                      v1::MixtureTarget::Preset_Name(config.preset()) + " with " +
                      std::to_string(config.components_size()) + " components)");
  switch (config.preset()) {
    case v1::MixtureTarget::BIMODAL_1D:
      // 0.5 N(-1, 0.1) + 0.5 N(1, 0.02); the second parameter is a variance.
      comps.push_back({0.5, Vector::Constant(1, -1.0), Vector::Constant(1, 0.1)});
      comps.push_back({0.5, Vector::Constant(1, 1.0), Vector::Constant(1, 0.02)});
      break;
    case v1::MixtureTarget::KOU_A:
      // Scenario (a): w_j = 1/20, sigma_j^2 = 1/100 (pseudo-extended paper Section 4.1).
      for (const Vector& mu : kou_means())
        comps.push_back({1.0 / 20.0, mu, Vector::Constant(2, 0.01)});
      break;
    case v1::MixtureTarget::KOU_B: {
      // Scenario (b): w_j ∝ 1/||mu_j - (5,5)||, sigma_j^2 = ||mu_j - (5,5)|| / 20.
      const Eigen::Vector2d centre(5.0, 5.0);
      for (const Vector& mu : kou_means()) {
        const double dist = (mu - centre).norm();
        comps.push_back({1.0 / dist, mu, Vector::Constant(2, dist / 20.0)});
      }
      break;
    }
    case v1::MixtureTarget::PRESET_UNSPECIFIED: {
      if (config.components_size() == 0)
        throw ConfigError("target.mixture: neither a preset nor any components given");
      const int d = config.components(0).mean_size();
      for (int k = 0; k < config.components_size(); ++k) {
        const v1::MixtureComponent& pc = config.components(k);
        const std::string f = component_field(k);
        if (pc.mean_size() < 1) throw ConfigError(f + ".mean: empty");
        if (pc.mean_size() != d)
          throw ConfigError(f + ".mean: has " + std::to_string(pc.mean_size()) +
                            " entries, but components[0].mean has " + std::to_string(d));
        if (!(std::isfinite(pc.weight()) && pc.weight() > 0.0))
          throw ConfigError(f + ".weight: must be finite and > 0 (got " +
                            std::to_string(pc.weight()) + ")");
        Component c;
        c.weight = pc.weight();
        c.mean = Eigen::Map<const Vector>(pc.mean().data(), d);
        if (pc.has_variance() && pc.diag_variance_size() > 0)
          throw ConfigError(f + ": give either variance or diag_variance, not both");
        if (pc.has_variance()) {
          if (!(std::isfinite(pc.variance()) && pc.variance() > 0.0))
            throw ConfigError(f + ".variance: must be finite and > 0 (got " +
                              std::to_string(pc.variance()) + ")");
          c.variance = Vector::Constant(d, pc.variance());
        } else if (pc.diag_variance_size() > 0) {
          if (pc.diag_variance_size() != d)
            throw ConfigError(f + ".diag_variance: has " + std::to_string(pc.diag_variance_size()) +
                              " entries, expected " + std::to_string(d));
          for (int i = 0; i < d; ++i)
            if (!(std::isfinite(pc.diag_variance(i)) && pc.diag_variance(i) > 0.0))
              throw ConfigError(f + ".diag_variance[" + std::to_string(i) +
                                "]: must be finite and > 0 (got " +
                                std::to_string(pc.diag_variance(i)) + ")");
          c.variance = Eigen::Map<const Vector>(pc.diag_variance().data(), d);
        } else {
          throw ConfigError(f + ": no variance given (set variance or diag_variance)");
        }
        if (!c.mean.allFinite()) throw ConfigError(f + ".mean: not finite");
        comps.push_back(std::move(c));
      }
      break;
    }
    default:
      throw ConfigError("target.mixture.preset: unknown value " +
                        std::to_string(static_cast<int>(config.preset())));
  }
  return std::make_shared<GaussianMixture>(std::move(comps));
}

}  // namespace pemc::targets
