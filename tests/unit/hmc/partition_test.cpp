// The Hamiltonian on a partitioned space (hmc/partition.hpp): a member integrates only its own
// items' coordinates, draws their momenta from per-item streams, and forms the kinetic energy and
// dot products as per-item sums. Here without a real group: TestPartition sums the items of one
// member only: the other members' items contribute zero (with one member owning every item, that
// is a real one-member group). The multi-member arithmetic is checked in
// tests/unit/extended/pseudo_extended_blocks_test.cpp and tests/mpi/pe_blocks_test.sh.
#include "hmc/partition.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "core/error.hpp"
#include "hmc/hamiltonian.hpp"
#include "hmc/leapfrog.hpp"
#include "hmc/metric.hpp"
#include "rng/stream.hpp"

namespace pemc::hmc {
namespace {

class TestPartition final : public Partition {
 public:
  TestPartition(Layout layout, int first, int end, int group_size = 1)
      : Partition(layout, first, end, group_size) {}
  void gather(VectorRef) const override {}

 protected:
  const double* allgather_items(std::span<const double> local, int m) const override {
    all_.assign(static_cast<std::size_t>(n_items() * m), 0.0);
    std::copy(local.begin(), local.end(), all_.begin() + first_item() * m);
    return all_.data();
  }

 private:
  mutable std::vector<double> all_;
};

// A separable non-quadratic potential U = sum_j (0.5 c_j q_j^2 + 0.05 q_j^4).
double quartic(ConstVectorRef q, VectorRef* g) {
  double u = 0.0;
  for (Eigen::Index j = 0; j < q.size(); ++j) {
    const double c = 0.5 + 0.1 * static_cast<double>(j % 7);
    u += 0.5 * c * q[j] * q[j] + 0.05 * std::pow(q[j], 4);
    if (g) (*g)[j] = c * q[j] + 0.2 * std::pow(q[j], 3);
  }
  return u;
}

class Quartic : public targets::Target {
 public:
  explicit Quartic(int dim) : dim_(dim) {}
  int dim() const override { return dim_; }
  std::string name() const override { return "quartic"; }
  double potential(ConstVectorRef q) const override { return quartic(q, nullptr); }
  double potential_and_gradient(ConstVectorRef q, VectorRef g) const override {
    return quartic(q, &g);
  }

 private:
  int dim_;
};

// The same potential on a partitioned space: the member's gradient entries, zeros elsewhere.
class PartitionedQuartic final : public Quartic, public PartitionedSpace {
 public:
  explicit PartitionedQuartic(std::shared_ptr<const Partition> p)
      : Quartic(static_cast<int>(p->dim())), partition_(std::move(p)) {}
  double potential_and_gradient(ConstVectorRef q, VectorRef g) const override {
    const double u = quartic(q, &g);
    partition_->zero_nonlocal(g);
    return u;
  }
  const Partition& partition() const override { return *partition_; }

 private:
  std::shared_ptr<const Partition> partition_;
};

constexpr Partition::Layout kLayout{5, 3, true};  // 5 items of 3 block coordinates + a tail each

std::vector<Metric> metrics(int dim) {
  Vector diag(dim);
  for (int j = 0; j < dim; ++j) diag[j] = 0.3 + 0.1 * j;
  return {Metric::unit(dim), Metric::diagonal(diag)};
}

PhasePoint start(Hamiltonian& h, std::uint64_t seed) {
  const int dim = h.target().dim();
  PhasePoint z(dim);
  rng::Stream s(seed, rng::Domain::kTest, 0, 0);
  for (int j = 0; j < dim; ++j) z.q[j] = s.normal();
  h.update_potential_gradient(z);
  h.sample_momentum(s, z);
  return z;
}

TEST(Partition, LayoutRangesAndZeroNonlocal) {
  const TestPartition p(kLayout, 1, 3);
  EXPECT_EQ(p.dim(), 20);
  ASSERT_EQ(p.local_ranges().size(), 2u);
  EXPECT_EQ(p.local_ranges()[0].begin, 3);
  EXPECT_EQ(p.local_ranges()[0].size, 6);
  EXPECT_EQ(p.local_ranges()[1].begin, 16);
  EXPECT_EQ(p.local_ranges()[1].size, 2);
  Vector v = Vector::LinSpaced(20, 1.0, 20.0);
  p.zero_nonlocal(v);
  for (int j = 0; j < 20; ++j) {
    const bool mine = (j >= 3 && j < 9) || j == 16 || j == 17;
    EXPECT_EQ(v[j], mine ? j + 1.0 : 0.0) << j;
  }
  Vector a = Vector::LinSpaced(20, 0.0, 19.0), b = Vector::Ones(20);
  EXPECT_EQ(p.item_dot(2, a, b), 6.0 + 7.0 + 8.0 + 17.0);
  const TestPartition none(kLayout, 2, 2);  // a member without items
  Vector w = Vector::Ones(20);
  none.zero_nonlocal(w);
  EXPECT_EQ(w, Vector::Zero(20));
}

TEST(Partition, MetricSegmentsActLikeTheWholeMetric) {
  for (const Metric& m : metrics(20)) {
    Vector p = Vector::LinSpaced(20, -1.0, 2.0), full(20), part = Vector::Zero(20);
    m.velocity(p, full);
    m.velocity(p, part, 4, 7);
    EXPECT_EQ(part.segment(4, 7), full.segment(4, 7));
    EXPECT_EQ(part.head(4), Vector::Zero(4));
    // Segment draws: the same normals, scaled by the segment's sqrt(M).
    Vector a = Vector::Zero(20), b(20);
    rng::Stream s1(9, rng::Domain::kTest, 0, 0), s2(9, rng::Domain::kTest, 0, 0);
    m.sample_momentum(s1, a, 5, 6);
    s2.fill_normal(b);
    for (int j = 0; j < 20; ++j) {
      const double scale =
          m.kind() == MetricKind::kUnit ? 1.0 : 1.0 / std::sqrt(m.inverse_diagonal()[j]);
      if (j >= 5 && j < 11)
        EXPECT_DOUBLE_EQ(a[j], b[j - 5] * scale);
      else
        EXPECT_EQ(a[j], 0.0);
    }
  }
  const Metric dense = Metric::dense(Matrix::Identity(4, 4));
  Vector p = Vector::Ones(4), v(4);
  EXPECT_THROW(dense.velocity(p, v, 1, 2), NumericalError);
  rng::Stream s(1, rng::Domain::kTest, 0, 0);
  EXPECT_THROW(dense.sample_momentum(s, p, 0, 2), NumericalError);
}

// A member owning every item moves exactly as the unpartitioned integrator (the same arithmetic
// per coordinate); only the kinetic energy is summed per item.
TEST(Partition, OneMemberOwningEveryItemIntegratesLikeTheWholeSpace) {
  auto all = std::make_shared<TestPartition>(kLayout, 0, 5);
  PartitionedQuartic parted(all);
  Quartic plain(20);
  for (const Metric& m : metrics(20)) {
    Hamiltonian hp(parted, m), hu(plain, m);
    ASSERT_TRUE(hp.partitioned());
    ASSERT_FALSE(hu.partitioned());
    PhasePoint zp = start(hp, 3);
    PhasePoint zu(20);
    zu.q = zp.q;
    zu.p = zp.p;
    hu.update_potential_gradient(zu);
    hu.update_kinetic(zu);
    EXPECT_NEAR(zp.kinetic, zu.kinetic, 1e-13 * zu.kinetic);
    for (int step = 0; step < 25; ++step) {
      ASSERT_TRUE(leapfrog_step(zp, 0.07, hp));
      ASSERT_TRUE(leapfrog_step(zu, 0.07, hu));
    }
    EXPECT_EQ(zp.q, zu.q);
    EXPECT_EQ(zp.p, zu.p);
    EXPECT_EQ(zp.potential, zu.potential);
    EXPECT_NEAR(zp.kinetic, zu.kinetic, 1e-13 * zu.kinetic);
    EXPECT_NEAR(hp.dot(zp.p, zp.q), hu.dot(zu.p, zu.q), 1e-12 * zu.p.norm() * zu.q.norm());
  }
}

// The documented per-item arithmetic of the partitioned dot products, written out: four
// interleaved partial sums over the block combined as (s0 + s1) + (s2 + s3), then the tail; the
// items summed in index order from 0.
double item_order_dot(const Partition::Layout& l, const Vector& a, const Vector& b) {
  double sum = 0.0;
  for (int i = 0; i < l.n_items; ++i) {
    double s[4] = {0.0, 0.0, 0.0, 0.0};
    const int begin = i * l.block_dim, full = l.block_dim / 4 * 4;
    for (int j = 0; j < full; ++j) s[j % 4] += a[begin + j] * b[begin + j];
    for (int j = full; j < l.block_dim; ++j) s[0] += a[begin + j] * b[begin + j];
    double r = (s[0] + s[1]) + (s[2] + s[3]);
    if (l.tail) {
      const int t = l.n_items * l.block_dim + i;
      r += a[t] * b[t];
    }
    sum += r;
  }
  return sum;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

// One member owning every item: dot, no_u_turn and the leapfrog's kinetic energy take the
// compile-time block-size paths for blocks of 1-4 (Partition::with_block_dim) and the generic one
// above; all of them are the item-order sums bit for bit.
TEST(Partition, OneMemberDotsAreTheItemOrderSumsForEveryBlockSize) {
  for (int block = 1; block <= 6; ++block) {
    for (bool tail : {false, true}) {
      const Partition::Layout layout{3, block, tail};
      auto all = std::make_shared<TestPartition>(layout, 0, 3);
      PartitionedQuartic target(all);
      const int dim = static_cast<int>(all->dim());
      const Metric unit = Metric::unit(dim);
      Hamiltonian h(target, unit);
      ASSERT_TRUE(h.partitioned());
      rng::Stream s(40 + static_cast<std::uint64_t>(block), rng::Domain::kTest, tail ? 1 : 0, 0);
      Vector a(dim), b(dim), c(dim);
      for (int j = 0; j < dim; ++j) {
        a[j] = s.normal();
        b[j] = s.normal();
        c[j] = s.normal();
      }
      const std::string where = "block " + std::to_string(block) + (tail ? " + tail" : "");
      EXPECT_TRUE(same_bits(h.dot(a, b), item_order_dot(layout, a, b))) << where;
      for (const Vector* rho : {&a, &b, &c}) {
        const Vector sum = *rho + c;
        EXPECT_EQ(h.no_u_turn(a, b, *rho),
                  item_order_dot(layout, b, *rho) > 0.0 && item_order_dot(layout, a, *rho) > 0.0)
            << where;
        EXPECT_EQ(h.no_u_turn(a, b, *rho + c),
                  item_order_dot(layout, b, sum) > 0.0 && item_order_dot(layout, a, sum) > 0.0)
            << where;
      }
      PhasePoint z = start(h, 7);
      ASSERT_TRUE(leapfrog_step(z, 0.05, h));
      EXPECT_TRUE(same_bits(z.kinetic, 0.5 * item_order_dot(layout, z.p, z.velocity))) << where;
    }
  }
}

// A member owning items 1..2 of 5 moves only their coordinates, and draws for them exactly the
// momenta the one-member chain draws (per-item streams).
TEST(Partition, AMemberMovesOnlyItsItemsWithTheirOwnMomenta) {
  auto all = std::make_shared<TestPartition>(kLayout, 0, 5);
  auto some = std::make_shared<TestPartition>(kLayout, 1, 3, 2);
  PartitionedQuartic t_all(all), t_some(some);
  for (const Metric& m : metrics(20)) {
    Hamiltonian h_all(t_all, m), h_some(t_some, m);
    const PhasePoint z_all = start(h_all, 11);
    PhasePoint z = start(h_some, 11);
    EXPECT_EQ(z.q, z_all.q);
    Vector own = z_all.p;
    some->zero_nonlocal(own);
    EXPECT_EQ(z.p, own);  // the same momenta for items 1, 2; zero elsewhere
    const Vector q0 = z.q;
    for (int step = 0; step < 10; ++step) ASSERT_TRUE(leapfrog_step(z, 0.05, h_some));
    for (int j = 0; j < 20; ++j) {
      const bool mine = (j >= 3 && j < 9) || j == 16 || j == 17;
      if (mine) {
        EXPECT_NE(z.q[j], q0[j]) << j;
      } else {
        EXPECT_EQ(z.q[j], q0[j]) << j;
        EXPECT_EQ(z.p[j], 0.0) << j;
      }
    }
  }
}

// Per-item momenta are N(0, M): p_j / sqrt(M_j) has mean 0 and variance 1 (4.5 standard errors),
// and different transitions' keys give independent draws (lag-one correlation ~ 0).
TEST(Partition, PerItemMomentaHaveTheMetricsDistribution) {
  auto all = std::make_shared<TestPartition>(kLayout, 0, 5);
  PartitionedQuartic t(all);
  const Metric m = metrics(20)[1];
  Hamiltonian h(t, m);
  PhasePoint z(20);
  const int n = 20000;
  Vector sum = Vector::Zero(20), sum2 = Vector::Zero(20), lag = Vector::Zero(20);
  Vector prev = Vector::Zero(20);
  for (int r = 0; r < n; ++r) {
    rng::Stream s(5, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(r));
    h.sample_momentum(s, z);
    const Vector u = z.p.cwiseProduct(m.inverse_diagonal().cwiseSqrt());
    sum += u;
    sum2 += u.cwiseAbs2();
    lag += u.cwiseProduct(prev);
    prev = u;
  }
  for (int j = 0; j < 20; ++j) {
    EXPECT_NEAR(sum[j] / n, 0.0, 4.5 / std::sqrt(n)) << j;
    EXPECT_NEAR(sum2[j] / n, 1.0, 4.5 * std::sqrt(2.0 / n)) << j;
    EXPECT_NEAR(lag[j] / n, 0.0, 4.5 / std::sqrt(n)) << j;
  }
}

TEST(Partition, DenseMetricRunsUnpartitionedOnOneMemberAndIsRefusedOnSeveral) {
  const Metric dense = Metric::dense(Matrix::Identity(20, 20));
  PartitionedQuartic one(std::make_shared<TestPartition>(kLayout, 0, 5, 1));
  Hamiltonian h(one, dense);
  EXPECT_FALSE(h.partitioned());
  EXPECT_EQ(h.partition(), nullptr);
  PartitionedQuartic two(std::make_shared<TestPartition>(kLayout, 0, 3, 2));
  EXPECT_THROW(Hamiltonian(two, dense), ConfigError);
  Hamiltonian h2(two, Metric::unit(20));
  EXPECT_THROW(h2.set_metric(dense), ConfigError);
}

}  // namespace
}  // namespace pemc::hmc
