#pragma once
// H(q, p) = U(q) + 0.5 p' M^{-1} p for a Target and a Metric; counts gradient evaluations exactly.
//
// Partitioned spaces (hmc/partition.hpp: a pseudo-extended chain whose pseudo-samples are spread
// over the members of a group): when the target is a PartitionedSpace and the metric is not
// dense, this member draws momenta for its own items only (zero elsewhere, so the integrators,
// which touch ranges() only, leave the other members' coordinates alone), and the kinetic energy
// and the dot products are per-item partial sums reduced over the group in item order — the same
// arithmetic for any group size, so a chain's draws do not depend on it. Every call that reduces
// (update_kinetic, kinetic_energy, dot, no_u_turn, sample_momentum, update_potential_gradient)
// is then collective: every member makes the same calls in the same order.
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "core/error.hpp"
#include "hmc/metric.hpp"
#include "hmc/partition.hpp"
#include "hmc/phase_point.hpp"
#include "targets/target.hpp"

namespace pemc::hmc {

namespace detail {
// The fixed-size paths below and in leapfrog.hpp promise the generic path's bits, i.e. the
// rounding of Eigen's sums over dynamic-size vectors. Eigen sums a dynamic vector in packets of the
// build's widest SIMD width and a fixed-size one in packets that fit it: with 2-wide packets (SSE2,
// the default build) the two orders agree for every N, with AVX or AVX-512 (e.g. -march=native)
// they differ from N = 3 on; there the dynamic-size sum, on the same storage, is used.
template <int N>
inline constexpr bool kFixedSumIsDynamicSum =
    N <= 2 || Eigen::internal::packet_traits<double>::size == 2;

// a . b for N-vectors, rounded as the generic path's dot().
template <int N>
inline double fixed_dot(const double* a, const double* b) {
  if constexpr (kFixedSumIsDynamicSum<N>) {
    using Vec = Eigen::Matrix<double, N, 1>;
    return Eigen::Map<const Vec>(a).dot(Eigen::Map<const Vec>(b));
  } else {
    return Eigen::Map<const Vector>(a, N).dot(Eigen::Map<const Vector>(b, N));
  }
}
// |a|^2 likewise (the generic path's squaredNorm()).
template <int N>
inline double fixed_squared_norm(const double* a) {
  if constexpr (kFixedSumIsDynamicSum<N>) {
    return Eigen::Map<const Eigen::Matrix<double, N, 1>>(a).squaredNorm();
  } else {
    return Eigen::Map<const Vector>(a, N).squaredNorm();
  }
}
}  // namespace detail

class Hamiltonian {
 public:
  // Throws ConfigError for a dense metric on a space partitioned over several members.
  Hamiltonian(const targets::Target& target, const Metric& metric) : target_(&target) {
    if (const auto* space = dynamic_cast<const PartitionedSpace*>(&target)) {
      partition_ = &space->partition();
      if (partition_->dim() != target.dim())
        throw ConfigError("hmc: the partition of " + target.name() + " covers " +
                          std::to_string(partition_->dim()) + " coordinates, the target has " +
                          std::to_string(target.dim()));
      partials_.assign(2 * static_cast<std::size_t>(partition_->n_local()), 0.0);
    }
    set_metric(metric);
  }

  // U(q) and dU/dq at z.q (one gradient evaluation). A NaN potential is stored as +inf so every
  // comparison downstream treats it as "infinitely unlikely" (a rejection).
  void update_potential_gradient(PhasePoint& z) {
    ++n_gradient_evals_;
    double u = target_->potential_and_gradient(z.q, z.grad);
    // All gradient entries finite <=> sum of g_i * 0 is 0 (NaN otherwise): a packet sum without
    // allFinite()'s per-entry early exit, 2-3x faster at d ~ 30. A partitioned space's potential
    // is already +inf on every member when any member's gradient is not finite (partition.hpp),
    // and a member must not decide alone.
    if (!(u < kInfinity) || (!partition_ && !((z.grad.array() * 0.0).sum() == 0.0)))
      u = kInfinity;
    z.potential = u;
  }
  // Vectors of compile-time size N (small targets: NUTS's fixed-size work space): true when the
  // *_fixed<N> methods below apply, i.e. an unpartitioned space with a unit or diagonal metric.
  bool fixed_size_ok() const {
    return !partitioned_ && metric_->kind() != MetricKind::kDense;
  }
  // update_potential_gradient() for z of size N (fixed_size_ok()): the same result, with the
  // finiteness check unrolled (the dynamic reduction costs more than a 2-D gradient's arithmetic).
  template <int N>
  void update_potential_gradient_fixed(PhasePoint& z) {
    ++n_gradient_evals_;
    double u = target_->potential_and_gradient(z.q, z.grad);
    const double* g = z.grad.data();
    double zero = 0.0;  // 0 when every entry is finite, NaN otherwise (as above)
    for (int i = 0; i < N; ++i) zero += g[i] * 0.0;
    if (!(u < kInfinity) || (!partition_ && !(zero == 0.0))) u = kInfinity;
    z.potential = u;
  }
  // sample_momentum() for z of size N (fixed_size_ok()): the same draws and the same arithmetic
  // (p = sqrt(M) z, v = M^{-1} p, K = 0.5 p.v) on fixed-size vectors.
  template <int N>
  void sample_momentum_fixed(rng::Stream& stream, PhasePoint& z) const {
    using Vec = Eigen::Matrix<double, N, 1>;
    stream.fill_normal(z.p.data(), N);
    Eigen::Map<Vec> p(z.p.data()), v(z.velocity.data());
    if (metric_->kind() == MetricKind::kUnit) {
      v = p;
      z.kinetic = 0.5 * detail::fixed_squared_norm<N>(z.p.data());
      return;
    }
    p.array() *= Eigen::Map<const Vec>(metric_->sqrt_diagonal().data()).array();
    v = Eigen::Map<const Vec>(metric_->inverse_diagonal().data()).cwiseProduct(p);
    z.kinetic = 0.5 * detail::fixed_dot<N>(z.p.data(), z.velocity.data());
  }

  // K(p) and the velocity M^{-1} p.
  void update_kinetic(PhasePoint& z) const {
    if (!partitioned()) {
      metric_->velocity(z.p, z.velocity);
      z.kinetic = 0.5 * z.p.dot(z.velocity);
      return;
    }
    for (const Partition::Range& r : ranges()) metric_->velocity(z.p, z.velocity, r.begin, r.size);
    z.kinetic = kinetic_energy(z.p, z.velocity);
  }
  // 0.5 p' v for the velocity v = M^{-1} p.
  double kinetic_energy(const Vector& p, const Vector& v) const { return 0.5 * dot(p, v); }

  // a . b; partitioned: over the items, reduced over the group in item order.
  template <class A, class B>
  double dot(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b) const {
    if (!partitioned()) return a.dot(b);
    const int first = partition_->first_item(), end = partition_->end_item();
    double sum = 0.0;
    if (partition_->group_size() == 1) {
      // sum_items' arithmetic (0 + item 0 + item 1 + ...) without storing the partials.
      return partition_->with_block_dim([&](auto bd) {
        double s = 0.0;
        for (int i = first; i < end; ++i) s += partition_->template item_dot<bd()>(i, a, b);
        return s;
      });
    }
    for (int i = first; i < end; ++i)
      partials_[static_cast<std::size_t>(i - first)] = partition_->item_dot(i, a, b);
    partition_->sum_items(local_partials(1), 1, std::span<double>(&sum, 1));
    return sum;
  }
  // The generalised no-U-turn criterion (Betancourt 2017, eq. 4.2 with velocities): both end
  // velocities still point along the summed momentum rho. Partitioned: both dot products in one
  // reduction. (`&`: both are formed either way, and no branch between them.)
  template <class Minus, class Plus, class Rho>
  bool no_u_turn(const Eigen::MatrixBase<Minus>& p_sharp_minus,
                 const Eigen::MatrixBase<Plus>& p_sharp_plus,
                 const Eigen::MatrixBase<Rho>& rho) const {
    if (!partitioned()) return (p_sharp_plus.dot(rho) > 0.0) & (p_sharp_minus.dot(rho) > 0.0);
    const int first = partition_->first_item(), end = partition_->end_item();
    double sums[2] = {0.0, 0.0};
    if (partition_->group_size() == 1) {
      // sum_items' arithmetic without storing the partials.
      partition_->with_block_dim([&](auto bd) {
        for (int i = first; i < end; ++i) {
          double plus, minus;
          partition_->template item_dots<bd()>(i, p_sharp_plus, p_sharp_minus, rho, plus, minus);
          sums[0] += plus;
          sums[1] += minus;
        }
      });
    } else {
      for (int i = first; i < end; ++i) {
        const auto k = 2 * static_cast<std::size_t>(i - first);
        partition_->item_dots(i, p_sharp_plus, p_sharp_minus, rho, partials_[k], partials_[k + 1]);
      }
      partition_->sum_items(local_partials(2), 2, std::span<double>(sums, 2));
    }
    return sums[0] > 0.0 && sums[1] > 0.0;
  }

  void sample_momentum(rng::Stream& stream, PhasePoint& z) const {
    if (partitioned()) {
      // One word of the transition's stream keys a stream per item, so item i's momentum is the
      // same whichever member owns it (and every member consumes the same word).
      const std::uint64_t key = stream.bits();
      partition_->zero_nonlocal(z.p);  // the local entries are drawn below
      partition_->zero_nonlocal(z.velocity);
      const Eigen::Index b = partition_->block_dim();
      for (int i = partition_->first_item(); i < partition_->end_item(); ++i) {
        rng::Stream item(key, rng::Domain::kTransition, static_cast<std::uint64_t>(i), 0);
        metric_->sample_momentum(item, z.p, partition_->block_begin(i), b);
        if (partition_->has_tail())
          metric_->sample_momentum(item, z.p, partition_->tail_index(i), 1);
      }
      update_kinetic(z);
      return;
    }
    if (metric_->kind() == MetricKind::kUnit) {
      // Once per NUTS/HMC transition: straight into p's storage (no Eigen::Ref hand-offs).
      stream.fill_normal(z.p.data(), z.p.size());
      z.velocity = z.p;
      z.kinetic = 0.5 * z.p.squaredNorm();
      return;
    }
    metric_->sample_momentum(stream, z.p);
    update_kinetic(z);
  }

  const targets::Target& target() const { return *target_; }
  const Metric& metric() const { return *metric_; }
  void set_metric(const Metric& metric) {
    if (partition_ && partition_->group_size() > 1 && metric.kind() == MetricKind::kDense)
      throw ConfigError(
          "hmc: a dense metric couples all coordinates, so it cannot be used when one chain's "
          "pseudo-samples are spread over " + std::to_string(partition_->group_size()) +
          " ranks (use a unit or diagonal metric, or ranks_per_chain 1)");
    metric_ = &metric;
    const bool use = partition_ && metric.kind() != MetricKind::kDense;
    if (use) {
      const auto local = partition_->local_ranges();
      ranges_.assign(local.begin(), local.end());
    } else {
      ranges_.assign(1, Partition::Range{0, target_->dim()});
    }
    partitioned_ = use;
  }
  std::int64_t n_gradient_evals() const { return n_gradient_evals_; }

  // The partition in use (nullptr: none, or a dense metric on a one-member group, which then runs
  // unpartitioned).
  const Partition* partition() const { return partitioned_ ? partition_ : nullptr; }
  bool partitioned() const { return partitioned_; }
  // The coordinates this member integrates: its items' ranges, or the whole vector.
  std::span<const Partition::Range> ranges() const { return ranges_; }

 private:
  std::span<const double> local_partials(int m) const {
    return {partials_.data(), static_cast<std::size_t>(m) * partition_->n_local()};
  }

  static constexpr double kInfinity = std::numeric_limits<double>::infinity();
  const targets::Target* target_;
  const Metric* metric_ = nullptr;
  const Partition* partition_ = nullptr;  // the target's, if it has one
  bool partitioned_ = false;
  std::vector<Partition::Range> ranges_;
  mutable std::vector<double> partials_;  // per local item, up to 2 values
  std::int64_t n_gradient_evals_ = 0;
};

}  // namespace pemc::hmc
