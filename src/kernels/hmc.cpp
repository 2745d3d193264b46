#include "kernels/hmc.hpp"
#include "kernels/plain_state.hpp"

#include <algorithm>
#include <cmath>

#include "core/cpu_features.hpp"
#include "hmc/step_size_search.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PEMC_HMC_AVX2 1
#endif

namespace pemc::kernels {
namespace {

#ifdef PEMC_HMC_AVX2
// a * b rounded; the empty asm keeps GCC from contracting it with the following add into an FMA.
__attribute__((target("avx2,fma"), always_inline)) inline __m256d mul_rounded(__m256d a,
                                                                              __m256d b) {
  __m256d r = _mm256_mul_pd(a, b);
  asm("" : "+x"(r));
  return r;
}

__attribute__((target("avx2,fma"))) void kick_drift_avx2(double* p, double* q, const double* g,
                                                         double h, double e, int n) {
  const __m256d hv = _mm256_set1_pd(h), ev = _mm256_set1_pd(e);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d pi =
        _mm256_sub_pd(_mm256_loadu_pd(p + i), mul_rounded(hv, _mm256_loadu_pd(g + i)));
    _mm256_storeu_pd(p + i, pi);
    _mm256_storeu_pd(q + i, _mm256_add_pd(_mm256_loadu_pd(q + i), mul_rounded(ev, pi)));
  }
  for (; i < n; ++i) {  // scalar SSE2 builtins: never contracted
    const __m128d pi =
        _mm_sub_sd(_mm_load_sd(p + i), _mm_mul_sd(_mm_set_sd(h), _mm_load_sd(g + i)));
    _mm_store_sd(p + i, pi);
    _mm_store_sd(q + i, _mm_add_sd(_mm_load_sd(q + i), _mm_mul_sd(_mm_set_sd(e), pi)));
  }
}

const bool kAvx2 = cpu_has_avx2_fma();
#endif

// One pass of a full kick and the next drift of the unit-metric leapfrog, p -= h g then q += e p,
// with each entry rounded exactly as the two Eigen statements (a product, then a difference or
// sum; no fused multiply-add), so the trajectory is bit-identical to the two-pass form.
void kick_drift(hmc::PhasePoint& z, double h, double e) {
#ifdef PEMC_HMC_AVX2
  if (kAvx2) {
    kick_drift_avx2(z.p.data(), z.q.data(), z.grad.data(), h, e, static_cast<int>(z.p.size()));
    return;
  }
#endif
  z.p.noalias() -= h * z.grad;
  z.q.noalias() += e * z.p;
}

// p -= h g, then (with e != 0) q += e p, over N coordinates, two per SSE2 instruction: each lane
// does the scalar arithmetic (a product, then a difference or sum: this file is built without
// FMA), so the results are kick_drift's and Eigen's bit for bit.
template <int N>
[[gnu::always_inline]] inline void kick_then_drift(double* q, double* p, const double* g,
                                                   double h, double e, bool drift) {
  int i = 0;
#if defined(__SSE2__)
  const __m128d h2 = _mm_set1_pd(h), e2 = _mm_set1_pd(e);
  for (; i + 2 <= N; i += 2) {
    const __m128d pi = _mm_sub_pd(_mm_loadu_pd(p + i), _mm_mul_pd(h2, _mm_loadu_pd(g + i)));
    _mm_storeu_pd(p + i, pi);
    if (drift) _mm_storeu_pd(q + i, _mm_add_pd(_mm_loadu_pd(q + i), _mm_mul_pd(e2, pi)));
  }
#endif
  for (; i < N; ++i) {
    const double pi = p[i] - h * g[i];
    p[i] = pi;
    if (drift) q[i] = q[i] + e * pi;
  }
}

}  // namespace

// transition()'s trajectory on the whole vector with a unit metric, for a target of compile-time
// dimension N: the state's copy, the momentum draw (Hamiltonian::sample_momentum_fixed), the first
// half kick and drift, gradient, then a full kick fused with the next drift, a half kick after the
// last gradient, and the final kinetic energy; the same operations on the same values in the same
// order as the generic path, so the same bits. For a 2-D target of ~150 ns per gradient the
// generic path's own work (the loops over ranges, Eigen::Ref hand-offs, kick_drift's call and
// Eigen's dynamic reductions) is a tenth of the time at 20 steps and a third at 1-3 (short
// trajectories: BM_Overhead/hmc_steps*). Returns false at the first non-finite potential or
// gradient (z_.kinetic is then stale, as in the generic path).
template <int N>
bool HmcKernel::trajectory_fixed(const ChainState& state, rng::Stream& stream, double eps,
                                 int n_steps, int& taken, double& h0) {
  using Vec = Eigen::Matrix<double, N, 1>;
  double* q = z_.q.data();
  double* p = z_.p.data();
  const double* g = z_.grad.data();
  Eigen::Map<Vec>{q} = Eigen::Map<const Vec>{state.x.data()};
  Eigen::Map<Vec>{z_.grad.data()} = Eigen::Map<const Vec>{state.grad.data()};
  z_.potential = state.potential;
  hamiltonian_.sample_momentum_fixed<N>(stream, z_);
  h0 = z_.hamiltonian();
  // The first half kick and drift: p -= (eps / 2) g, q += eps p.
  kick_then_drift<N>(q, p, g, 0.5 * eps, eps, true);
  for (;;) {
    hamiltonian_.update_potential_gradient_fixed<N>(z_);
    ++taken;
    if (!std::isfinite(z_.potential)) return false;
    if (taken >= n_steps) {
      kick_then_drift<N>(q, p, g, 0.5 * eps, 0.0, false);
      break;
    }
    kick_then_drift<N>(q, p, g, eps, eps, true);
  }
  // update_kinetic() with a unit metric: v = p, K = 0.5 p.v (rounded as the generic dot).
  Eigen::Map<Vec>{z_.velocity.data()} = Eigen::Map<const Vec>{p};
  z_.kinetic = 0.5 * hmc::detail::fixed_dot<N>(p, z_.velocity.data());
  return true;
}

HmcKernel::HmcKernel(targets::TargetPtr target, hmc::Metric metric, HmcOptions options)
    : target_(std::move(target)),
      metric_(std::move(metric)),
      options_(options),
      hamiltonian_(*target_, metric_),
      z_(target_->dim()) {}

TransitionStats HmcKernel::transition(ChainState& state, rng::Stream& stream) {
  const std::int64_t evals_before = hamiltonian_.n_gradient_evals();
  double eps = options_.step_size;
  if (options_.jitter_step_size) eps *= 0.9 + 0.2 * stream.uniform();
  int n_steps = options_.n_leapfrog;
  if (options_.jitter_n_leapfrog && n_steps > 1)
    n_steps = 1 + static_cast<int>(stream.below(static_cast<std::uint64_t>(2 * n_steps - 1)));

  const auto ranges = hamiltonian_.ranges();
  const bool unit_metric = hamiltonian_.metric().kind() == hmc::MetricKind::kUnit;
  // Unit metric on the whole vector: each full kick and the drift after it in one pass.
  const bool fused = unit_metric && ranges.size() == 1 && ranges[0].begin == 0 &&
                     ranges[0].size == z_.q.size();
  const int d = static_cast<int>(z_.q.size());
  bool finite = true;
  int taken = 0;
  double h0;
  // (fixed_size_ok: unpartitioned, so the momentum and kinetic energy need no per-item sums.)
  if (fused && d <= 4 && n_steps > 0 && hamiltonian_.fixed_size_ok()) {
    switch (d) {
      case 1: finite = trajectory_fixed<1>(state, stream, eps, n_steps, taken, h0); break;
      case 2: finite = trajectory_fixed<2>(state, stream, eps, n_steps, taken, h0); break;
      case 3: finite = trajectory_fixed<3>(state, stream, eps, n_steps, taken, h0); break;
      default: finite = trajectory_fixed<4>(state, stream, eps, n_steps, taken, h0); break;
    }
  } else {
    finite = trajectory(state, stream, eps, n_steps, fused, taken, h0);
  }

  TransitionStats stats;
  stats.step_size = eps;
  stats.n_leapfrog = taken;
  stats.n_gradient_evals = hamiltonian_.n_gradient_evals() - evals_before;
  accept_or_reject(state, stream, finite, h0, stats);
  return stats;
}

bool HmcKernel::trajectory(const ChainState& state, rng::Stream& stream, double eps, int n_steps,
                           bool fused, int& taken, double& h0) {
  // Only the Hamiltonian's ranges() are read and moved: the whole vector, or this member's
  // pseudo-samples when the chain's space is partitioned over a group (hmc/partition.hpp).
  const auto ranges = hamiltonian_.ranges();
  const bool unit_metric = hamiltonian_.metric().kind() == hmc::MetricKind::kUnit;
  for (const auto& r : ranges) {
    z_.q.segment(r.begin, r.size) = state.x.segment(r.begin, r.size);
    z_.grad.segment(r.begin, r.size) = state.grad.segment(r.begin, r.size);
  }
  z_.potential = state.potential;
  hamiltonian_.sample_momentum(stream, z_);
  h0 = z_.hamiltonian();

  // Leapfrog with the half-kicks of consecutive steps fused into full kicks (the same map as
  // n_steps separate leapfrog_step calls): one velocity, one drift and one kick per gradient.
  auto kick = [&](double size) {
    for (const auto& r : ranges)
      z_.p.segment(r.begin, r.size).noalias() -= size * z_.grad.segment(r.begin, r.size);
  };
  kick(0.5 * eps);
  bool drifted = false;
  while (taken < n_steps) {
    if (!drifted) {
      for (const auto& r : ranges) {
        if (unit_metric) {
          // velocity = p: skip the copy
          z_.q.segment(r.begin, r.size).noalias() += eps * z_.p.segment(r.begin, r.size);
        } else {
          hamiltonian_.metric().velocity(z_.p, z_.velocity, r.begin, r.size);
          z_.q.segment(r.begin, r.size).noalias() += eps * z_.velocity.segment(r.begin, r.size);
        }
      }
    }
    hamiltonian_.update_potential_gradient(z_);
    ++taken;
    if (!std::isfinite(z_.potential)) return false;
    drifted = fused && taken < n_steps;
    if (drifted)
      kick_drift(z_, eps, eps);
    else
      kick(taken < n_steps ? eps : 0.5 * eps);
  }
  hamiltonian_.update_kinetic(z_);
  return true;
}

void HmcKernel::accept_or_reject(ChainState& state, rng::Stream& stream, bool finite, double h0,
                                 TransitionStats& stats) {
  const double h1 = finite ? z_.hamiltonian() : std::numeric_limits<double>::infinity();
  stats.nonfinite = !finite;
  // A NaN energy error counts as a rejection (accept probability 0).
  const double log_accept = std::isnan(h1) ? -std::numeric_limits<double>::infinity() : h0 - h1;
  stats.accept_stat = std::min(1.0, std::exp(log_accept));
  stats.divergent = !finite || (h1 - h0) > 1000.0;
  // Metropolis: log u < log_accept, which holds for every u in (0, 1) when log_accept >= 0 (the
  // log is then skipped; the uniform is drawn either way, keeping the stream's later draws).
  const double u = stream.uniform();
  if (log_accept >= 0.0 || std::log(u) < log_accept) {
    for (const auto& r : hamiltonian_.ranges()) {
      state.x.segment(r.begin, r.size) = z_.q.segment(r.begin, r.size);
      state.grad.segment(r.begin, r.size) = z_.grad.segment(r.begin, r.size);
    }
    state.potential = z_.potential;
    stats.accepted = true;
    stats.energy = h1;
  } else {
    stats.energy = h0;
  }
}

std::int64_t HmcKernel::choose_initial_step_size(const ChainState& state, rng::Stream& stream) {
  if (!options_.search_step_size) return 0;
  const std::int64_t evals_before = hamiltonian_.n_gradient_evals();
  options_.step_size = hmc::find_initial_step_size(hamiltonian_, z_, state.x, state.grad,
                                                   state.potential, options_.step_size, stream);
  return hamiltonian_.n_gradient_evals() - evals_before;
}

void HmcKernel::begin_warmup(std::int64_t n_warmup) {
  if (options_.adaptation) {
    adapter_.emplace(*options_.adaptation, n_warmup, options_.step_size, metric_);
  }
}

void HmcKernel::adapt(std::int64_t warmup_iteration, const ChainState& state,
                      const TransitionStats& stats) {
  if (!adapter_) return;
  const auto update = adapter_->observe(warmup_iteration, state.x, stats.accept_stat);
  options_.step_size = update.step_size;
  if (update.metric) {
    metric_ = *update.metric;
    hamiltonian_.set_metric(metric_);
  }
}

void HmcKernel::end_warmup() {
  if (!adapter_) return;
  options_.step_size = adapter_->final_step_size();
  adapter_.reset();
}

// ---- checkpoint (added methods) ----

void HmcKernel::save_state(pemc::v1::KernelState& state) const {
  save_plain_state(state, name(), options_.step_size, metric_, adapter_);
}

void HmcKernel::restore_state(const pemc::v1::KernelState& state) {
  restore_plain_state(state, name(), options_.step_size, metric_, adapter_);
  hamiltonian_.set_metric(metric_);
}

}  // namespace pemc::kernels
