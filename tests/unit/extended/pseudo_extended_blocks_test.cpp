// Pseudo-sample blocks without MPI: k threads stand in for the k ranks of a chain's group (each
// with its own targets, as ranks would have), exchanging blocks through shared memory. The
// potential and gradient must be bit-identical to the one-member result for every k, including
// groups with more members than pseudo-samples (empty blocks), and a target that throws on one
// member must make every member throw instead of leaving the others waiting.
// The real MPI path is checked by tests/mpi/pe_blocks_test.sh.
#include <gtest/gtest.h>

#include <barrier>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "extended/pseudo_extended_target.hpp"
#include "rng/stream.hpp"
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

struct Result {
  double u = 0.0, u_value_only = 0.0;
  Vector grad;
  bool threw = false;
};

// Runs `points` on a k-member simulated group; returns each member's results.
std::vector<std::vector<Result>> run_group(int k, int n_pseudo, const std::vector<Vector>& points,
                                           const std::function<targets::TargetPtr()>& make_base) {
  auto ex = std::make_shared<Exchange>(k);
  std::vector<std::vector<Result>> out(static_cast<std::size_t>(k));
  std::vector<std::thread> threads;
  for (int r = 0; r < k; ++r) {
    threads.emplace_back([&, r] {
      PseudoExtendedOptions o;
      o.n_pseudo = n_pseudo;
      PseudoExtendedTarget t(make_base(), o, std::make_shared<ThreadGroup>(ex, k, r));
      for (const Vector& z : points) {
        Result res;
        res.grad.resize(t.dim());
        try {
          res.u = t.potential_and_gradient(z, res.grad);
          res.u_value_only = t.potential(z);
        } catch (const NumericalError&) {
          res.threw = true;
        }
        out[static_cast<std::size_t>(r)].push_back(res);
      }
    });
  }
  for (auto& th : threads) th.join();
  return out;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(PseudoExtendedBlocks, AnyGroupSizeGivesBitIdenticalPotentialAndGradient) {
  for (int n_pseudo : {1, 3, 5, 8}) {
    std::vector<Vector> points;
    for (std::uint64_t s = 0; s < 6; ++s) {
      rng::Stream st(s, rng::Domain::kTest, static_cast<std::uint64_t>(n_pseudo), 0);
      Vector z(3 * n_pseudo);
      for (int j = 0; j < 2 * n_pseudo; ++j) z[j] = 10.0 * st.uniform();
      for (int j = 2 * n_pseudo; j < 3 * n_pseudo; ++j) z[j] = 3.0 * st.normal();
      points.push_back(z);
    }
    const auto reference = run_group(1, n_pseudo, points, [] { return kou_b(); })[0];
    for (int k : {2, 3, 4}) {
      const auto members = run_group(k, n_pseudo, points, [] { return kou_b(); });
      for (int r = 0; r < k; ++r)
        for (std::size_t p = 0; p < points.size(); ++p) {
          const Result& a = reference[p];
          const Result& b = members[static_cast<std::size_t>(r)][p];
          SCOPED_TRACE("N " + std::to_string(n_pseudo) + " k " + std::to_string(k) + " member " +
                       std::to_string(r) + " point " + std::to_string(p));
          ASSERT_FALSE(b.threw);
          EXPECT_TRUE(same_bits(a.u, b.u)) << a.u << " vs " << b.u;
          EXPECT_TRUE(same_bits(a.u_value_only, b.u_value_only));
          for (Eigen::Index j = 0; j < a.grad.size(); ++j)
            EXPECT_TRUE(same_bits(a.grad[j], b.grad[j])) << "component " << j;
        }
    }
  }
}

TEST(PseudoExtendedBlocks, AThrowOnOneMemberMakesEveryMemberThrow) {
  // Pseudo-sample 4 of 5 sits at the trigger; with k = 2 it belongs to member 1 only.
  Vector z(15);
  z << 1, 1, 2, 2, 3, 3, 4, 4, 7.25, 5, 0, 0, 0, 0, 0;
  const auto members = run_group(2, 5, {z}, [] { return std::make_shared<ThrowingTarget>(7.25); });
  EXPECT_TRUE(members[0][0].threw);
  EXPECT_TRUE(members[1][0].threw);
}

}  // namespace
}  // namespace pemc::extended
