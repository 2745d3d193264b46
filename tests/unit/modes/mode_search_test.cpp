// The mode search before sampling (modes/mode_search.hpp): starts, clustering, Laplace masses,
// the stopping rule, and independence of how batches are split (as over ranks).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/numerics.hpp"
#include "modes/lbfgs.hpp"
#include "modes/mode_search.hpp"
#include "rng/stream.hpp"
#include "targets/mixture.hpp"

namespace pemc::modes {
namespace {

using C = targets::GaussianMixture::Component;

// Three well-separated 2-D components with weights 0.6, 0.3, 0.1 (exp(-potential) is normalised,
// so the Laplace masses of exactly Gaussian modes are log of their weights).
std::shared_ptr<targets::GaussianMixture> three_modes() {
  return std::make_shared<targets::GaussianMixture>(std::vector<C>{
      {0.6, Vector::Constant(2, -4.0), Vector::Constant(2, 0.5)},
      {0.3, (Vector(2) << 4.0, 0.0).finished(), (Vector(2) << 1.0, 0.25).finished()},
      {0.1, (Vector(2) << 0.0, 5.0).finished(), Vector::Constant(2, 0.3)}});
}

ModeSearchSettings settings(std::uint64_t seed = 7) {
  ModeSearchSettings s;
  s.seed = seed;
  s.batch_starts = 16;
  s.max_starts = 256;
  return s;
}

TEST(ModeSearch, FindsEveryModeWithItsLaplaceMass) {
  const auto target = three_modes();
  const auto s = settings();
  const auto set = search_modes(*target, s, serial_batches(*target, s));
  ASSERT_EQ(set.modes.size(), 3u);
  EXPECT_TRUE(set.complete);
  const double expected[] = {0.6, 0.3, 0.1};
  for (int k = 0; k < 3; ++k) {
    // Separated Gaussian components: the Laplace mass is the weight up to the other components'
    // density at the mode (below 1e-6 here).
    EXPECT_NEAR(std::exp(set.modes[k].log_mass), expected[k], 1e-6);
    EXPECT_NEAR(set.modes[k].location[0], target->components()[k].mean[0], 1e-4);
  }
  const auto shares = set.laplace_shares();
  EXPECT_NEAR(shares[0], 0.6, 1e-6);
  int reached = 0;
  for (const auto& m : set.modes) reached += m.n_starts;
  EXPECT_EQ(reached, set.n_converged);
  EXPECT_EQ(set.n_converged + set.n_not_converged + set.n_nonfinite, set.n_starts);
}

TEST(ModeSearch, SameModesHoweverBatchesAreSplit) {
  // A batch runner that computes the starts in reverse order and in two halves (as two ranks
  // would) gives the same set, bit for bit.
  const auto target = three_modes();
  const auto s = settings(11);
  const auto serial = search_modes(*target, s, serial_batches(*target, s));
  const BatchRunner shuffled = [&](int first, int count) {
    std::vector<StartResult> out;
    for (int i = first + count - 1; i >= first; i -= 2) out.push_back(run_start(*target, s, i));
    for (int i = first + count - 2; i >= first; i -= 2) out.push_back(run_start(*target, s, i));
    return out;
  };
  const auto split = search_modes(*target, s, shuffled);
  ASSERT_EQ(serial.modes.size(), split.modes.size());
  EXPECT_EQ(serial.n_starts, split.n_starts);
  for (std::size_t k = 0; k < serial.modes.size(); ++k) {
    EXPECT_EQ(serial.modes[k].location, split.modes[k].location);
    EXPECT_EQ(serial.modes[k].log_mass, split.modes[k].log_mass);
    EXPECT_EQ(serial.modes[k].n_starts, split.modes[k].n_starts);
  }
}

TEST(ModeSearch, StopsWhenNoNewModeIsLikely) {
  // One Gaussian: every start reaches it, no singletons after the first batch.
  auto g = std::make_shared<targets::GaussianMixture>(
      std::vector<C>{{1.0, Vector::Constant(3, 1.0), Vector::Constant(3, 2.0)}});
  const auto s = settings();
  const auto set = search_modes(*g, s, serial_batches(*g, s));
  EXPECT_EQ(set.n_starts, s.batch_starts);
  EXPECT_EQ(set.modes.size(), 1u);
  EXPECT_TRUE(set.complete);
  EXPECT_EQ(set.unseen_probability, 0.0);
  // log Z = 0 for the normalised Gaussian.
  EXPECT_NEAR(set.modes[0].log_mass, 0.0, 1e-6);
}

TEST(ModeSearch, StopsAtTheBudgetAndSaysSoWhenModesKeepAppearing) {
  // 32 equal, narrow components on a line: 16 starts per batch keep finding new ones.
  std::vector<C> comps;
  for (int k = 0; k < 32; ++k)
    comps.push_back({1.0, Vector::Constant(1, 3.0 * (k - 16)), Vector::Constant(1, 0.01)});
  auto m = std::make_shared<targets::GaussianMixture>(comps);
  auto s = settings();
  s.max_starts = 32;
  const auto set = search_modes(*m, s, serial_batches(*m, s));
  EXPECT_EQ(set.n_starts, 32);
  EXPECT_FALSE(set.complete);
  EXPECT_GT(set.unseen_probability, s.unseen_probability);
}

TEST(ModeSearch, ModesOfNegligibleMassReachedOnceDoNotKeepTheSearchGoing) {
  ModeSet set;
  set.n_converged = 11;
  Mode big, tiny;
  big.log_mass = 0.0;
  big.n_starts = 10;
  tiny.log_mass = std::log(kNegligibleModeShare) - 1.0;  // share just below the bound
  tiny.n_starts = 1;
  set.modes = {big, tiny};
  EXPECT_EQ(good_turing_unseen(set), 0.0);
  set.modes[1].log_mass = std::log(kNegligibleModeShare) + 1.0;  // just above: it counts
  EXPECT_EQ(good_turing_unseen(set), 1.0 / 11.0);
}

TEST(ModeSearch, StartsAreHeavyTailedAndKeyedBySeedAndIndex) {
  const auto s = settings(3);
  EXPECT_EQ(start_point(s, 4, 5), start_point(s, 4, 5));
  EXPECT_NE(start_point(s, 4, 5), start_point(s, 4, 6));
  auto other = s;
  other.seed = 4;
  EXPECT_NE(start_point(s, 4, 5), start_point(other, 4, 5));
  // Even starts: t_3 scaled by 2, P(|x| > 10) = P(|t_3| > 5) = 0.0154: of 2000 coordinates expect
  // 31 (sd 5.5). Odd starts: scaled by 10, P(|t_3| > 1) = 0.391: expect 782 (sd 22).
  int far_even = 0, far_odd = 0;
  for (int i = 0; i < 1000; ++i) {
    const auto x = start_point(s, 4, i);
    for (int j = 0; j < 4; ++j) (i % 2 == 0 ? far_even : far_odd) += std::fabs(x[j]) > 10.0;
  }
  EXPECT_GT(far_even, 8);
  EXPECT_LT(far_even, 56);
  EXPECT_GT(far_odd, 683);
  EXPECT_LT(far_odd, 881);
  auto boxed = s;
  boxed.box_lower = -1.0;
  boxed.box_upper = 3.0;
  for (int i = 0; i < 100; ++i) {
    const auto x = start_point(boxed, 3, i);
    EXPECT_TRUE((x.array() >= -1.0).all() && (x.array() <= 3.0).all());
  }
}

TEST(ModeSearch, OptimaWithinMergeDistanceAreOneMode) {
  // A wide component: starts converge to within the gradient tolerance of its mode and merge.
  auto g = std::make_shared<targets::GaussianMixture>(
      std::vector<C>{{1.0, Vector::Constant(2, 0.0), Vector::Constant(2, 100.0)}});
  const auto s = settings();
  const auto set = search_modes(*g, s, serial_batches(*g, s));
  ASSERT_EQ(set.modes.size(), 1u);
  EXPECT_EQ(set.modes[0].n_starts, set.n_converged);
}

// posteriordb's blr (y ~ normal(X beta, sigma), beta ~ normal(0, 10), sigma ~ normal+(0, 10), on
// (beta, log sigma) with the Jacobian, Stan's dropped constants) on predictors of scale 200, as in
// sblrc-blr: the Hessian's beta block is ~1e7 at a potential of ~50, so within the gradient
// tolerance (1e-6 * |U|) of the optimum the decrease left is below the potential's rounding.
class ScaledRegression final : public targets::Target {
 public:
  ScaledRegression() : x_(kN, kD), y_(kN) {
    rng::Stream stream(5, rng::Domain::kTest, 0, 0);
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kD; ++j) x_(i, j) = 200.0 * stream.normal();
    y_ = x_ * Vector::Ones(kD);
    for (int i = 0; i < kN; ++i) y_[i] += stream.normal();
  }
  int dim() const override { return kD + 1; }
  std::string name() const override { return "scaled_regression"; }
  double potential(ConstVectorRef x) const override {
    Vector g(dim());
    return potential_and_gradient(x, g);
  }
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override {
    const auto beta = x.head(kD);
    const double s = x[kD], e = std::exp(-2.0 * s), sigma2 = std::exp(2.0 * s);
    const Vector r = y_ - x_ * beta;
    const double rss = r.squaredNorm();
    grad.head(kD) = beta / 100.0 - (x_.transpose() * r) * e;
    grad[kD] = sigma2 / 100.0 + kN - rss * e - 1.0;
    return beta.squaredNorm() / 200.0 + sigma2 / 200.0 + kN * s + 0.5 * rss * e - s;
  }

 private:
  static constexpr int kN = 100, kD = 5;
  Matrix x_;
  Vector y_;
};

TEST(ModeSearch, StartsThatStallAtAStiffOptimumEndThereInsteadOfCrawling) {
  const ScaledRegression target;
  auto s = settings();
  s.batch_starts = 32;
  // Without the relative-decrease test some starts spend the whole iteration budget next to the
  // optimum (the failure this test exists for: it made three quarters of sblrc-blr's search).
  auto old = s;
  old.lbfgs.relative_objective_tolerance = 0.0;
  int exhausted = 0;
  std::int64_t old_evals = 0;
  for (int i = 0; i < s.batch_starts; ++i) {
    const auto r = run_start(target, old, i);
    exhausted += r.outcome == StartResult::Outcome::kNotConverged;
    old_evals += r.n_gradient_evals;
  }
  EXPECT_GT(exhausted, 0);
  // With it every start reaches the one mode (stalled ones within merge distance of it, or past
  // the Newton test), at a fraction of the gradients.
  const auto set = search_modes(target, s, serial_batches(target, s));
  ASSERT_EQ(set.modes.size(), 1u);
  EXPECT_EQ(set.n_not_converged, 0);
  EXPECT_EQ(set.modes[0].n_starts, s.batch_starts);
  EXPECT_LT(set.n_gradient_evals, old_evals / 2);
  EXPECT_NEAR(std::exp(set.modes[0].location[5]), 1.0, 0.2);  // sigma
}

TEST(ModeSearch, AStalledPointMakesANewModeOnlyWhenTheNewtonTestPasses) {
  const auto target = three_modes();
  const auto s = settings();
  const auto result = [&](int index, StartResult::Outcome outcome, Vector x) {
    StartResult r;
    r.index = index;
    r.outcome = outcome;
    r.potential = target->potential(x);
    r.x = std::move(x);
    return r;
  };
  const Vector at_mode = target->components()[0].mean;
  // 0.1 sd off the second component's mean along its first coordinate (sd 1): ten times the
  // Newton test's bound.
  Vector off_mode = target->components()[1].mean;
  off_mode[0] += 0.1;
  ModeSet set;
  add_batch(*target, s,
            {result(0, StartResult::Outcome::kStalled, at_mode),
             result(1, StartResult::Outcome::kStalled, off_mode)},
            set);
  ASSERT_EQ(set.modes.size(), 1u);
  EXPECT_EQ(set.modes[0].location, at_mode);
  EXPECT_EQ(set.n_converged, 1);
  EXPECT_EQ(set.n_not_converged, 1);
  // A converged point keeps the gradient test's word (a mode there); a stalled point within merge
  // distance of a known mode reaches it.
  add_batch(*target, s,
            {result(2, StartResult::Outcome::kConverged, off_mode),
             result(3, StartResult::Outcome::kStalled, off_mode)},
            set);
  ASSERT_EQ(set.modes.size(), 2u);
  EXPECT_EQ(set.modes[1].first_start, 2);
  EXPECT_EQ(set.modes[1].n_starts, 2);
  EXPECT_EQ(set.n_converged, 3);
  EXPECT_EQ(set.n_not_converged, 1);
  EXPECT_EQ(set.n_starts, 4);
}

TEST(Lbfgs, RelativeDecreaseTestIsOffByDefault) {
  const ScaledRegression target;
  LbfgsOptions options;
  EXPECT_EQ(options.relative_objective_tolerance, 0.0);
  options.gradient_tolerance = 0.0;  // unreachable: only the iteration limit stops it
  options.max_iterations = 300;
  const auto r = minimize_lbfgs(target, Vector::Zero(target.dim()), options);
  EXPECT_FALSE(r.stalled);
  EXPECT_EQ(r.iterations, 300);
  options.relative_objective_tolerance = kStallRelativeDecrease;
  const auto stalled = minimize_lbfgs(target, Vector::Zero(target.dim()), options);
  EXPECT_TRUE(stalled.stalled);
  EXPECT_FALSE(stalled.converged);
  EXPECT_LT(stalled.iterations, 300);
}

TEST(ModeSet, StandInAndShares) {
  const auto s = stand_in_mode_set(3);
  EXPECT_TRUE(s.stand_in);
  ASSERT_EQ(s.modes.size(), 1u);
  EXPECT_EQ(s.laplace_shares(), std::vector<double>{1.0});
  EXPECT_EQ(*s.best_log_density(), 0.0);
}

}  // namespace
}  // namespace pemc::modes
