// Pseudo-sample blocks without MPI: k threads stand in for the k ranks of a chain's group (each
// with its own target and kernel, as ranks would have), exchanging through shared memory. Each
// member owns a block of pseudo-samples, integrates only those and exchanges per-pseudo-sample
// scalars, summed in index order. Checked here:
//   - the potential is bit-identical to the one-member result on every member for every k
//     (including groups with more members than pseudo-samples: empty blocks); each member's
//     gradient equals the one-member gradient on its own pseudo-samples and is zero elsewhere;
//   - whole HMC and NUTS chains (sampled and fixed beta, unit and diagonal metrics, step-size and
//     metric adaptation during warmup, the state gathered once per iteration as the chain driver
//     does) are bit-identical for k = 1, 2, 3, 4, and so are the adapted step size and metric;
//   - a target that throws on one member makes every member throw (none is left waiting);
//   - a dense metric is refused when the chain spans several members;
//   - NUTS on the partitioned space (one member: the same arithmetic) samples correctly.
// The real MPI path is checked by tests/mpi/pe_blocks_test.sh.
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "extended/pseudo_extended_target.hpp"
#include "kernels/hmc.hpp"
#include "kernels/nuts.hpp"
#include "rng/stream.hpp"
#include "targets/gaussian.hpp"
#include "targets/mixture.hpp"

namespace pemc::extended {
namespace {

// Shared state of one simulated group.
struct Exchange {
  explicit Exchange(int k) : sync(k) {}
  std::barrier<> sync;
  std::vector<double> all;
};

class ThreadGroup final : public parallel::GroupComm {
 public:
  ThreadGroup(std::shared_ptr<Exchange> ex, int size, int rank)
      : ex_(std::move(ex)), size_(size), rank_(rank) {}
  int size() const override { return size_; }
  int rank() const override { return rank_; }
  void allgather_blocks(std::span<const double> mine, int n_items, int values_per_item,
                        std::span<double> all) const override {
    const Block b = my_block(n_items);
    if (mine.size() != static_cast<std::size_t>((b.end - b.begin) * values_per_item))
      throw std::invalid_argument("ThreadGroup: wrong block size");
    if (rank_ == 0) ex_->all.assign(all.size(), 0.0);
    ex_->sync.arrive_and_wait();
    std::copy(mine.begin(), mine.end(), ex_->all.begin() + b.begin * values_per_item);
    ex_->sync.arrive_and_wait();
    std::copy(ex_->all.begin(), ex_->all.end(), all.begin());
    ex_->sync.arrive_and_wait();
  }
  void broadcast(std::span<double>, int) const override {}

 private:
  std::shared_ptr<Exchange> ex_;
  int size_, rank_;
};

// Runs f(member group) on k threads; returns each member's result.
template <class R>
std::vector<R> on_group(int k, const std::function<R(parallel::GroupCommPtr)>& f) {
  auto ex = std::make_shared<Exchange>(k);
  std::vector<R> out(static_cast<std::size_t>(k));
  std::vector<std::thread> threads;
  for (int r = 0; r < k; ++r)
    threads.emplace_back([&, r] {
      out[static_cast<std::size_t>(r)] = f(std::make_shared<ThreadGroup>(ex, k, r));
    });
  for (auto& th : threads) th.join();
  return out;
}

std::shared_ptr<targets::GaussianMixture> kou_b() {
  std::vector<targets::GaussianMixture::Component> comps;
  const Eigen::Vector2d centre(5.0, 5.0);
  for (const Vector& mu : targets::kou_means()) {
    const double dist = (mu - centre).norm();
    comps.push_back({1.0 / dist, mu, Vector::Constant(2, dist / 20.0)});
  }
  return std::make_shared<targets::GaussianMixture>(comps);
}

// A base target that throws at one chosen point (x[0] == trigger).
class ThrowingTarget final : public targets::Target {
 public:
  explicit ThrowingTarget(double trigger) : inner_(kou_b()), trigger_(trigger) {}
  int dim() const override { return 2; }
  std::string name() const override { return "throwing"; }
  double potential(ConstVectorRef x) const override {
    if (x[0] == trigger_) throw DataError("boom at the trigger");
    return inner_->potential(x);
  }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    if (x[0] == trigger_) throw DataError("boom at the trigger");
    return inner_->potential_and_gradient(x, g);
  }

 private:
  std::shared_ptr<targets::GaussianMixture> inner_;
  double trigger_;
};

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

struct Result {
  double u = 0.0, u_value_only = 0.0;
  Vector grad, gathered;
  int first = 0, end = 0;
  bool threw = false;
};

std::vector<std::vector<Result>> evaluate_on_group(
    int k, const PseudoExtendedOptions& o, const std::vector<Vector>& points,
    const std::function<targets::TargetPtr()>& make_base) {
  return on_group<std::vector<Result>>(k, [&](parallel::GroupCommPtr group) {
    PseudoExtendedTarget t(make_base(), o, group);
    std::vector<Result> out;
    for (const Vector& z : points) {
      Result res;
      res.first = t.partition().first_item();
      res.end = t.partition().end_item();
      res.grad = Vector::Constant(t.dim(), 7.0);  // non-local entries must be overwritten by 0
      try {
        res.u = t.potential_and_gradient(z, res.grad);
        res.u_value_only = t.potential(z);
        res.gathered = res.grad;
        t.partition().gather(res.gathered);
      } catch (const NumericalError&) {
        res.threw = true;
      }
      out.push_back(res);
    }
    return out;
  });
}

TEST(PseudoExtendedBlocks, EveryMemberGetsThePotentialAndItsOwnGradientEntries) {
  for (bool fixed : {false, true})
    for (int n_pseudo : {1, 3, 5, 8}) {
      PseudoExtendedOptions o;
      o.n_pseudo = n_pseudo;
      if (fixed) o.fixed_beta = 0.4;
      const int dim = fixed ? 2 * n_pseudo : 3 * n_pseudo;
      std::vector<Vector> points;
      for (std::uint64_t s = 0; s < 6; ++s) {
        rng::Stream st(s, rng::Domain::kTest, static_cast<std::uint64_t>(n_pseudo), 0);
        Vector z(dim);
        for (int j = 0; j < 2 * n_pseudo; ++j) z[j] = 10.0 * st.uniform();
        for (int j = 2 * n_pseudo; j < dim; ++j) z[j] = 3.0 * st.normal();
        points.push_back(z);
      }
      const auto reference = evaluate_on_group(1, o, points, [] { return kou_b(); })[0];
      for (int k : {2, 3, 4}) {
        const auto members = evaluate_on_group(k, o, points, [] { return kou_b(); });
        for (int r = 0; r < k; ++r)
          for (std::size_t p = 0; p < points.size(); ++p) {
            const Result& a = reference[p];
            const Result& b = members[static_cast<std::size_t>(r)][p];
            SCOPED_TRACE("fixed " + std::to_string(fixed) + " N " + std::to_string(n_pseudo) +
                         " k " + std::to_string(k) + " member " + std::to_string(r) + " point " +
                         std::to_string(p));
            ASSERT_FALSE(b.threw);
            EXPECT_TRUE(same_bits(a.u, b.u)) << a.u << " vs " << b.u;
            EXPECT_TRUE(same_bits(a.u_value_only, b.u_value_only));
            for (int i = 0; i < n_pseudo; ++i) {
              const bool mine = i >= b.first && i < b.end;
              std::vector<Eigen::Index> coords = {2 * i, 2 * i + 1};
              if (!fixed) coords.push_back(2 * n_pseudo + i);
              for (Eigen::Index j : coords) {
                if (mine)
                  EXPECT_TRUE(same_bits(a.grad[j], b.grad[j])) << "component " << j;
                else
                  EXPECT_EQ(b.grad[j], 0.0) << "component " << j << " of another member";
                EXPECT_TRUE(same_bits(a.grad[j], b.gathered[j])) << "gathered component " << j;
              }
            }
          }
      }
    }
}

TEST(PseudoExtendedBlocks, AThrowOnOneMemberMakesEveryMemberThrow) {
  // Pseudo-sample 4 of 5 sits at the trigger; with k = 2 it belongs to member 1 only.
  Vector z(15);
  z << 1, 1, 2, 2, 3, 3, 4, 4, 7.25, 5, 0, 0, 0, 0, 0;
  PseudoExtendedOptions o;
  o.n_pseudo = 5;
  const auto members =
      evaluate_on_group(2, o, {z}, [] { return std::make_shared<ThrowingTarget>(7.25); });
  EXPECT_TRUE(members[0][0].threw);
  EXPECT_TRUE(members[1][0].threw);
}

TEST(PseudoExtendedBlocks, WeightedViewIsTheOneMemberViewOnEveryMember) {
  PseudoExtendedOptions o;
  o.n_pseudo = 5;
  o.beta_target = {2.0, 1.5};
  Vector z(15);
  rng::Stream st(4, rng::Domain::kTest, 0, 0);
  for (int j = 0; j < 15; ++j) z[j] = j < 10 ? 10.0 * st.uniform() : st.normal();
  auto view_on = [&](int k) {
    return on_group<targets::WeightedView>(k, [&](parallel::GroupCommPtr group) {
      PseudoExtendedTarget t(kou_b(), o, group);
      targets::WeightedView v;
      t.weighted_view(z, v);
      return v;
    });
  };
  const auto ref = view_on(1)[0];
  for (int k : {2, 3, 4})
    for (const auto& v : view_on(k)) {
      EXPECT_EQ(v.samples, ref.samples);
      for (int i = 0; i < 5; ++i) {
        EXPECT_TRUE(same_bits(v.log_weights[i], ref.log_weights[i]));
        const auto k = static_cast<std::size_t>(i);
        EXPECT_TRUE(same_bits(v.extra[k], ref.extra[k]));
      }
    }
}

// ---- whole chains ----

struct ChainCase {
  std::string name;
  PseudoExtendedOptions options;
  bool nuts = true;
  bool diagonal = true;  // diagonal metric with metric adaptation (else unit, step size only)
  int n_warmup = 40, n_iter = 30;
};

struct ChainRun {
  std::vector<double> trace;  // every draw's state, potential, accept stat and n_leapfrog
  double step_size = 0.0;
  Vector inverse_metric;
  int n_moved = 0;  // sampling iterations that moved the state
};

kernels::KernelPtr make_kernel(const ChainCase& c, targets::TargetPtr pe) {
  adapt::WarmupAdapterOptions adapt;
  adapt.adapt_metric = c.diagonal;
  const int dim = pe->dim();
  const hmc::Metric metric =
      c.diagonal ? hmc::Metric::diagonal(Vector::Ones(dim)) : hmc::Metric::unit(dim);
  if (c.nuts) {
    kernels::NutsOptions o;
    o.step_size = 0.1;
    o.max_tree_depth = 6;
    o.adaptation = adapt;
    o.adaptation->step_size.target_accept = 0.8;
    return std::make_unique<kernels::NutsKernel>(pe, metric, o);
  }
  kernels::HmcOptions o;
  o.step_size = 0.05;
  o.n_leapfrog = 6;
  o.jitter_step_size = true;
  o.jitter_n_leapfrog = true;
  o.adaptation = adapt;
  o.adaptation->step_size.target_accept = 0.65;
  return std::make_unique<kernels::HmcKernel>(pe, metric, o);
}

// As the chain driver runs it: the state is gathered after every transition, before adaptation.
ChainRun run_chain(const ChainCase& c, parallel::GroupCommPtr group) {
  auto pe = std::make_shared<PseudoExtendedTarget>(kou_b(), c.options, group);
  auto kernel = make_kernel(c, pe);
  kernels::ChainState st;
  st.x.resize(pe->dim());
  rng::Stream init(3, rng::Domain::kInitialPoint, 0, 0);
  pe->initial_point(
      [&](VectorRef x) {
        for (Eigen::Index j = 0; j < x.size(); ++j) x[j] = 10.0 * init.uniform();
      },
      st.x);
  kernels::refresh(*pe, st);
  ChainRun out;
  kernel->begin_warmup(c.n_warmup);
  for (int t = 0; t < c.n_warmup + c.n_iter; ++t) {
    if (t == c.n_warmup) kernel->end_warmup();
    rng::Stream s(3, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    const auto stats = kernel->transition(st, s);
    pe->partition().gather(st.x);
    if (t < c.n_warmup) kernel->adapt(t, st, stats);
    out.trace.insert(out.trace.end(), st.x.begin(), st.x.end());
    out.trace.push_back(st.potential);
    out.trace.push_back(stats.accept_stat);
    out.trace.push_back(stats.n_leapfrog);
    if (t >= c.n_warmup) out.n_moved += stats.accepted;
  }
  out.step_size = kernel->step_size();
  const hmc::Metric& metric = c.nuts ? static_cast<kernels::NutsKernel&>(*kernel).metric()
                                     : static_cast<kernels::HmcKernel&>(*kernel).metric();
  out.inverse_metric = metric.inverse_diagonal_or_dense_diagonal();
  return out;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(PseudoExtendedBlocks, ChainsAreBitIdenticalForAnyGroupSize) {
  std::vector<ChainCase> cases;
  {
    ChainCase c{"nuts_sampled_diag", {}, true, true};
    c.options.n_pseudo = 5;
    cases.push_back(c);
    ChainCase f{"nuts_fixed_unit", {}, true, false};
    f.options.n_pseudo = 4;
    f.options.fixed_beta = 0.3;
    cases.push_back(f);
    ChainCase h{"hmc_sampled_priors_diag", {}, false, true};
    h.options.n_pseudo = 3;
    h.options.beta_lower = 0.1;
    h.options.beta_upper = 0.9;
    h.options.beta_target = {2.0, 2.0};
    cases.push_back(h);
    ChainCase hf{"hmc_fixed_diag", {}, false, true};
    hf.options.n_pseudo = 5;
    hf.options.fixed_beta = 0.5;
    cases.push_back(hf);
  }
  for (const ChainCase& c : cases) {
    SCOPED_TRACE(c.name);
    const ChainRun ref = on_group<ChainRun>(1, [&](auto g) { return run_chain(c, g); })[0];
    // The chain really moves (a stuck chain would be trivially identical).
    EXPECT_GE(ref.n_moved, c.n_iter / 6);
    if (c.diagonal) {
      EXPECT_NE(ref.inverse_metric, Vector::Ones(ref.inverse_metric.size()));
    }
    for (int k : {2, 3, 4}) {
      const auto members = on_group<ChainRun>(k, [&](auto g) { return run_chain(c, g); });
      for (int r = 0; r < k; ++r) {
        const ChainRun& m = members[static_cast<std::size_t>(r)];
        SCOPED_TRACE("k " + std::to_string(k) + " member " + std::to_string(r));
        EXPECT_TRUE(same_bits(m.trace, ref.trace));
        EXPECT_TRUE(same_bits(m.step_size, ref.step_size));
        EXPECT_EQ(m.inverse_metric, ref.inverse_metric);
      }
    }
  }
}

TEST(PseudoExtendedBlocks, DenseMetricIsRefusedWhenTheChainSpansSeveralMembers) {
  PseudoExtendedOptions o;
  o.n_pseudo = 4;
  auto ex = std::make_shared<Exchange>(2);
  auto two = std::make_shared<PseudoExtendedTarget>(kou_b(), o,
                                                    std::make_shared<ThreadGroup>(ex, 2, 0));
  const Matrix id = Matrix::Identity(two->dim(), two->dim());
  kernels::NutsOptions no;
  EXPECT_THROW(kernels::NutsKernel(two, hmc::Metric::dense(id), no), ConfigError);
  EXPECT_THROW(kernels::HmcKernel(two, hmc::Metric::dense(id), kernels::HmcOptions{}), ConfigError);
  // One member: a dense metric runs (unpartitioned arithmetic).
  auto one = std::make_shared<PseudoExtendedTarget>(kou_b(), o);
  EXPECT_NO_THROW(kernels::NutsKernel(one, hmc::Metric::dense(id), no));
}

// NUTS with diagonal metric adaptation on the (one-member) partitioned space: per-item momenta,
// kinetic energy and U-turn sums. The per-draw self-normalised averages (Theorem 2.1) have the
// target's mean; tolerance 4.5 batch-means standard errors.
TEST(PseudoExtendedBlocks, NutsOnThePartitionedSpaceRecoversTheMean) {
  Vector mean(2);
  mean << 1.0, -1.0;
  Matrix cov = Matrix::Zero(2, 2);
  cov(0, 0) = 1.0;
  cov(1, 1) = 0.25;
  PseudoExtendedOptions o;
  o.n_pseudo = 3;
  o.beta_lower = 0.2;
  auto pe =
      std::make_shared<PseudoExtendedTarget>(std::make_shared<targets::Gaussian>(mean, cov), o);
  adapt::WarmupAdapterOptions adapt;
  adapt.adapt_metric = true;
  kernels::NutsOptions no;
  no.step_size = 0.2;
  no.adaptation = adapt;
  kernels::NutsKernel nuts(pe, hmc::Metric::diagonal(Vector::Ones(pe->dim())), no);
  kernels::ChainState state;
  state.x.resize(pe->dim());
  rng::Stream init(6, rng::Domain::kInitialPoint, 0, 0);
  pe->initial_point([&](VectorRef x) { x << init.normal(), init.normal(); }, state.x);
  kernels::refresh(*pe, state);
  const int n_warmup = 500, n_iter = 20000, n_batches = 40;
  std::vector<Vector> batch(n_batches, Vector::Zero(2));
  targets::WeightedView view;
  nuts.begin_warmup(n_warmup);
  for (int t = 0; t < n_warmup + n_iter; ++t) {
    if (t == n_warmup) nuts.end_warmup();
    rng::Stream st(6, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    const auto stats = nuts.transition(state, st);
    if (t < n_warmup) {
      nuts.adapt(t, state, stats);
      continue;
    }
    pe->weighted_view(state.x, view);
    const double m = view.log_weights.maxCoeff();
    const Vector w = (view.log_weights.array() - m).exp().matrix();
    batch[(t - n_warmup) * n_batches / n_iter] += view.samples * w / w.sum();
  }
  Vector est = Vector::Zero(2);
  for (auto& b : batch) {
    b /= static_cast<double>(n_iter / n_batches);
    est += b / n_batches;
  }
  for (int j = 0; j < 2; ++j) {
    double var = 0.0;
    for (const auto& b : batch) var += (b[j] - est[j]) * (b[j] - est[j]);
    const double se = std::sqrt(var / (n_batches - 1) / n_batches);
    EXPECT_NEAR(est[j], mean[j], 4.5 * se) << "coordinate " << j << " se " << se;
    EXPECT_LT(se, 0.05);  // the run is informative
  }
}

}  // namespace
}  // namespace pemc::extended
