#pragma once
// Shared helpers for the tempering tests: simple targets with a known normalising constant, an HMC
// factory, and an in-process group of threads standing in for MPI ranks.
#include <barrier>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/numerics.hpp"
#include "densities/gaussian.hpp"
#include "kernels/hmc.hpp"
#include "kernels/kernel.hpp"
#include "rng/stream.hpp"
#include "parallel/group_comm.hpp"
#include "targets/target.hpp"
#include "tempering/parallel_tempering.hpp"

namespace pemc::tempering::testing {

// References as the config builds them (Evaluation::kShared; tempering/from_config.cpp).
inline ReferencePtr diagonal_reference(Vector mean, const Vector& variance) {
  return std::make_shared<const Reference>(
      Reference{.density = std::make_shared<const densities::Gaussian>(densities::Gaussian::from_variances(
          std::move(mean), variance, densities::Gaussian::Evaluation::kShared)),
                .log_zeta = std::numeric_limits<double>::quiet_NaN(), .description = {}});
}
inline ReferencePtr dense_reference(Vector mean, Matrix lower,
                                    double log_zeta = std::numeric_limits<double>::quiet_NaN()) {
  return std::make_shared<const Reference>(
      Reference{.density = std::make_shared<const densities::Gaussian>(densities::Gaussian::from_cholesky(
                    std::move(mean), std::move(lower), densities::Gaussian::Evaluation::kShared)),
                .log_zeta = log_zeta, .description = {}});
}

// phi(x) = 0.5 sum ((x_i - m_i) / s_i)^2 + c, so log Z = sum log(sqrt(2 pi) s_i) - c.
class ShiftedGaussian final : public targets::Target {
 public:
  ShiftedGaussian(Vector mean, Vector sd, double c) : m_(std::move(mean)), s_(std::move(sd)), c_(c) {}
  int dim() const override { return static_cast<int>(m_.size()); }
  std::string name() const override { return "shifted_gaussian"; }
  double potential(ConstVectorRef x) const override {
    return 0.5 * ((x - m_).array() / s_.array()).square().sum() + c_;
  }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    g = ((x - m_).array() / s_.array().square()).matrix();
    return potential(x);
  }
  double log_z() const { return (s_.array().log() + 0.5 * kLog2Pi).sum() - c_; }
  const Vector& mean() const { return m_; }
  const Vector& sd() const { return s_; }

 private:
  Vector m_, s_;
  double c_;
};

// 1-D two-component mixture w N(-a, s^2) + (1 - w) N(a, s^2), normalised (log Z = 0).
class TwoModes final : public targets::Target {
 public:
  TwoModes(double a, double s, double w) : a_(a), s_(s), w_(w) {}
  int dim() const override { return 1; }
  std::string name() const override { return "two_modes"; }
  double potential(ConstVectorRef x) const override {
    Vector g(1);
    return potential_and_gradient(x, g);
  }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    const double l1 = std::log(w_) - 0.5 * std::pow((x[0] + a_) / s_, 2);
    const double l2 = std::log(1 - w_) - 0.5 * std::pow((x[0] - a_) / s_, 2);
    const double l = log_add_exp(l1, l2);
    const double p1 = std::exp(l1 - l), p2 = std::exp(l2 - l);
    g[0] = p1 * (x[0] + a_) / (s_ * s_) + p2 * (x[0] - a_) / (s_ * s_);
    return -l + std::log(s_) + 0.5 * kLog2Pi;
  }
  double mean() const { return w_ * (-a_) + (1 - w_) * a_; }
  double second_moment() const { return a_ * a_ + s_ * s_; }

 private:
  double a_, s_, w_;
};

inline LocalKernelFactory hmc_factory(double step_size, int n_leapfrog, bool adapt = false,
                                      bool jitter = true) {
  return [=](targets::TargetPtr space) -> kernels::KernelPtr {
    kernels::HmcOptions o;
    o.step_size = step_size;
    o.n_leapfrog = n_leapfrog;
    o.jitter_n_leapfrog = jitter;
    if (adapt) o.adaptation = adapt::WarmupAdapterOptions{};
    const int d = space->dim();
    return std::make_unique<kernels::HmcKernel>(std::move(space), hmc::Metric::unit(d), o);
  };
}

// The shared state of an in-process group: members are threads that meet at a barrier.
struct LockstepHub {
  explicit LockstepHub(int n) : size(n), sync(n), slots(n) {}
  int size;
  std::barrier<> sync;
  std::vector<std::vector<double>> slots;
};

// A GroupComm whose members are threads of this process (for unit tests of the MPI logic).
class LockstepGroup final : public parallel::GroupComm {
 public:
  LockstepGroup(std::shared_ptr<LockstepHub> hub, int rank) : hub_(std::move(hub)), rank_(rank) {}
  int size() const override { return hub_->size; }
  int rank() const override { return rank_; }
  void allgather_blocks(std::span<const double> mine, int n_items, int values_per_item,
                        std::span<double> all) const override {
    hub_->slots[rank_].assign(mine.begin(), mine.end());
    hub_->sync.arrive_and_wait();
    std::size_t at = 0;
    for (int m = 0; m < size(); ++m) {
      const auto b = block_of(m, n_items);
      const auto n = static_cast<std::size_t>(b.end - b.begin) * values_per_item;
      if (hub_->slots[m].size() != n) throw std::runtime_error("LockstepGroup: block size mismatch");
      std::copy(hub_->slots[m].begin(), hub_->slots[m].end(), all.begin() + at);
      at += n;
    }
    hub_->sync.arrive_and_wait();
  }
  void broadcast(std::span<double> values, int root) const override {
    if (rank_ == root) hub_->slots[root].assign(values.begin(), values.end());
    hub_->sync.arrive_and_wait();
    if (rank_ != root) std::copy(hub_->slots[root].begin(), hub_->slots[root].end(), values.begin());
    hub_->sync.arrive_and_wait();
  }

 private:
  std::shared_ptr<LockstepHub> hub_;
  int rank_;
};

// A kernel driven as the chain driver drives it: refresh at x0, warmup hooks, one transition per
// iteration with the stream keyed by (seed, kTransition, chain 0, t); the post-warmup draws, their
// statistics and the kernel's final estimates.
struct DrivenRun {
  std::vector<Vector> draws;
  std::vector<kernels::TransitionStats> stats;
  std::map<std::string, double> estimates;

  std::vector<double> first_coordinate() const {
    std::vector<double> out;
    out.reserve(draws.size());
    for (const auto& x : draws) out.push_back(x[0]);
    return out;
  }
};

inline DrivenRun drive(kernels::Kernel& kernel, const targets::Target& space, const Vector& x0,
                       int n_warmup, int n_iter, std::uint64_t seed) {
  DrivenRun out;
  kernels::ChainState state;
  state.x = x0;
  kernels::refresh(space, state);
  if (n_warmup > 0) kernel.begin_warmup(n_warmup);
  for (int t = 0; t < n_warmup + n_iter; ++t) {
    if (t == n_warmup && n_warmup > 0) kernel.end_warmup();
    rng::Stream stream(seed, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    const auto st = kernel.transition(state, stream);
    if (t >= n_warmup) {
      out.draws.push_back(state.x);
      out.stats.push_back(st);
    }
  }
  kernel.report_estimates(out.estimates);
  return out;
}

}  // namespace pemc::tempering::testing
