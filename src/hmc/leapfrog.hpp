#pragma once
// Leapfrog (velocity Verlet) integrator: symplectic, time-reversible, volume preserving.
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "hmc/hamiltonian.hpp"

namespace pemc::hmc {

namespace detail {

// The unit-metric leapfrog's two passes over coordinates [0, n) of a range, two coordinates per
// SSE2 instruction. Each lane does the scalar arithmetic (p - half g, q + eps p, p p: IEEE
// operations per element), so the results are those of the plain loops bit for bit; the point is
// the 16-byte stores. Later reads of p and v two at a time (the dot products and NUTS's copies,
// which Eigen and GCC vectorise) are then forwarded from one store; after two 8-byte stores such
// a read stalls (~95% of the partitioned kinetic energy's time at d = 15 before this).
inline void unit_drift(double* __restrict q, double* __restrict p, double* __restrict v,
                       const double* __restrict g, Eigen::Index n, double half, double eps) {
  Eigen::Index i = 0;
#if defined(__SSE2__)
  const __m128d h2 = _mm_set1_pd(half), e2 = _mm_set1_pd(eps);
  for (; i + 2 <= n; i += 2) {
    const __m128d pi = _mm_sub_pd(_mm_loadu_pd(p + i), _mm_mul_pd(h2, _mm_loadu_pd(g + i)));
    _mm_storeu_pd(p + i, pi);
    _mm_storeu_pd(v + i, pi);
    _mm_storeu_pd(q + i, _mm_add_pd(_mm_loadu_pd(q + i), _mm_mul_pd(e2, pi)));
  }
#endif
  for (; i < n; ++i) {
    const double pi = p[i] - half * g[i];
    p[i] = pi;
    v[i] = pi;
    q[i] += eps * pi;
  }
}

// p -= half g, v = p; with two_k: *two_k += p_i p_i in coordinate order.
inline void unit_kick(double* __restrict p, double* __restrict v, const double* __restrict g,
                      Eigen::Index n, double half, double* two_k) {
  Eigen::Index i = 0;
  double sum = two_k ? *two_k : 0.0;
#if defined(__SSE2__)
  const __m128d h2 = _mm_set1_pd(half);
  for (; i + 2 <= n; i += 2) {
    const __m128d pi = _mm_sub_pd(_mm_loadu_pd(p + i), _mm_mul_pd(h2, _mm_loadu_pd(g + i)));
    _mm_storeu_pd(p + i, pi);
    _mm_storeu_pd(v + i, pi);
    const __m128d sq = _mm_mul_pd(pi, pi);
    sum += _mm_cvtsd_f64(sq);
    sum += _mm_cvtsd_f64(_mm_unpackhi_pd(sq, sq));
  }
#endif
  for (; i < n; ++i) {
    const double pi = p[i] - half * g[i];
    p[i] = pi;
    v[i] = pi;
    sum += pi * pi;
  }
  if (two_k) *two_k = sum;
}

}  // namespace detail

// One step of size eps (negative eps integrates backwards). On entry z.grad is dU/dq at z.q.
// On exit z is fully updated (potential, gradient, kinetic, velocity). Returns false when the
// potential became non-finite: the caller must treat the trajectory as divergent/rejected.
inline bool leapfrog_step(PhasePoint& z, double eps, Hamiltonian& h) {
  // Only h.ranges() move (the whole vector, or this member's items of a partitioned space).
  if (h.metric().kind() == MetricKind::kUnit) {
    // Unit metric (velocity = p): the same arithmetic fused into one pass before and one after
    // the gradient, instead of six vector operations (NUTS calls this once per leaf).
    const double half = 0.5 * eps;
    for (const Partition::Range& r : h.ranges())
      detail::unit_drift(z.q.data() + r.begin, z.p.data() + r.begin, z.velocity.data() + r.begin,
                         z.grad.data() + r.begin, r.size, half, eps);
    h.update_potential_gradient(z);
    if (!std::isfinite(z.potential)) return false;
    if (h.partitioned()) {
      // The sum over this member's coordinates is not the kinetic energy; the per-item sums
      // reduced over the group are.
      for (const Partition::Range& r : h.ranges())
        detail::unit_kick(z.p.data() + r.begin, z.velocity.data() + r.begin,
                          z.grad.data() + r.begin, r.size, half, nullptr);
      z.kinetic = h.kinetic_energy(z.p, z.velocity);
      return true;
    }
    double two_k = 0.0;  // unpartitioned: the one range is [0, n)
    detail::unit_kick(z.p.data(), z.velocity.data(), z.grad.data(), z.q.size(), half, &two_k);
    z.kinetic = 0.5 * two_k;
    return true;
  }
  for (const Partition::Range& r : h.ranges()) {
    z.p.segment(r.begin, r.size).noalias() -= (0.5 * eps) * z.grad.segment(r.begin, r.size);
    h.metric().velocity(z.p, z.velocity, r.begin, r.size);
    z.q.segment(r.begin, r.size).noalias() += eps * z.velocity.segment(r.begin, r.size);
  }
  h.update_potential_gradient(z);
  if (!std::isfinite(z.potential)) return false;
  for (const Partition::Range& r : h.ranges())
    z.p.segment(r.begin, r.size).noalias() -= (0.5 * eps) * z.grad.segment(r.begin, r.size);
  h.update_kinetic(z);
  return true;
}

// leapfrog_step() for z of compile-time size N on an unpartitioned space with a unit or diagonal
// metric (h.fixed_size_ok()): the same arithmetic in the same order, hence the same results bit
// for bit, without the loops over ranges, Eigen::Ref hand-offs and dynamic reductions (NUTS on a
// 2-D target calls this for each of its ~3 leapfrogs per transition, each ~150 ns of gradient).
// p, v and q are written two coordinates per 16-byte store, as unit_drift/unit_kick do: NUTS
// copies p and v right after the step (its candidate and the subtree's end), and a 16-byte load
// of two values just written by two 8-byte stores cannot be store-forwarded; it waits until they
// reach the cache (~12 cycles per leaf each for p and v at d = 2, measured by BM_NutsCostModel).
template <int N>
[[gnu::always_inline]] inline bool leapfrog_step_fixed(PhasePoint& z, double eps, Hamiltonian& h) {
  const double half = 0.5 * eps;
  // (No __restrict: the gradient call writes z.grad between the two passes.)
  double* q = z.q.data();
  double* p = z.p.data();
  double* v = z.velocity.data();
  const double* g = z.grad.data();
  if (h.metric().kind() == MetricKind::kUnit) {
    detail::unit_drift(q, p, v, g, N, half, eps);
    h.update_potential_gradient_fixed<N>(z);
    if (!std::isfinite(z.potential)) return false;
    double two_k = 0.0;
    detail::unit_kick(p, v, g, N, half, &two_k);
    z.kinetic = 0.5 * two_k;
    return true;
  }
  const double* inv = h.metric().inverse_diagonal().data();
  int i = 0;
#if defined(__SSE2__)
  const __m128d h2 = _mm_set1_pd(half), e2 = _mm_set1_pd(eps);
  for (; i + 2 <= N; i += 2) {
    const __m128d pi = _mm_sub_pd(_mm_loadu_pd(p + i), _mm_mul_pd(h2, _mm_loadu_pd(g + i)));
    const __m128d vi = _mm_mul_pd(_mm_loadu_pd(inv + i), pi);
    _mm_storeu_pd(p + i, pi);
    _mm_storeu_pd(v + i, vi);
    _mm_storeu_pd(q + i, _mm_add_pd(_mm_loadu_pd(q + i), _mm_mul_pd(e2, vi)));
  }
#endif
  for (; i < N; ++i) {
    const double pi = p[i] - half * g[i];
    const double vi = inv[i] * pi;
    p[i] = pi;
    v[i] = vi;
    q[i] += eps * vi;
  }
  h.update_potential_gradient_fixed<N>(z);
  if (!std::isfinite(z.potential)) return false;
  i = 0;
#if defined(__SSE2__)
  for (; i + 2 <= N; i += 2) {
    const __m128d pi = _mm_sub_pd(_mm_loadu_pd(p + i), _mm_mul_pd(h2, _mm_loadu_pd(g + i)));
    _mm_storeu_pd(p + i, pi);
    _mm_storeu_pd(v + i, _mm_mul_pd(_mm_loadu_pd(inv + i), pi));
  }
#endif
  for (; i < N; ++i) {
    const double pi = p[i] - half * g[i];
    p[i] = pi;
    v[i] = inv[i] * pi;
  }
  // The generic path's kinetic energy: 0.5 p.dot(v) (Eigen's reduction order).
  z.kinetic = 0.5 * hmc::detail::fixed_dot<N>(p, v);
  return true;
}

}  // namespace pemc::hmc
