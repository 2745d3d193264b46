// The running target moments of simulated tempering and AIS (Kernel::report_moments, written to
// EstimatesSnapshot): equal to the self-normalised weighted moments of the chain's own weighted
// draws computed directly, tracked only when asked, and restored exactly from a checkpoint.
#include <gtest/gtest.h>

#include <cmath>

#include "support/direct_moments.hpp"
#include "tempering/annealed_importance.hpp"
#include "tempering/schedule.hpp"
#include "tempering/simulated_tempering.hpp"
#include "tempering_test_support.hpp"

namespace pemc::tempering {
namespace {

using testing::hmc_factory;
using testing::ShiftedGaussian;

ReferencePtr reference_3d() {
  Matrix lower(3, 3);
  lower << 1.2, 0, 0, 0.3, 0.9, 0, -0.2, 0.1, 1.1;
  return testing::dense_reference(Vector::LinSpaced(3, -0.3, 0.4), lower, -1.25);
}

std::shared_ptr<ShiftedGaussian> target_3d() {
  return std::make_shared<ShiftedGaussian>(Vector::LinSpaced(3, 1.0, -0.5),
                                           Vector::LinSpaced(3, 0.4, 0.8), -2.0);
}

// Runs the kernel from x = 0.1 for n_warmup + n_iter transitions (t_begin onwards) and collects
// the post-warmup weighted views.
struct Views {
  std::vector<Vector> x;
  std::vector<double> log_w;
};

void drive(kernels::Kernel& kernel, const targets::Target& space, kernels::ChainState& state,
           int n_warmup, int t_begin, int t_end, Views& out) {
  targets::WeightedView view;
  for (int t = t_begin; t < t_end; ++t) {
    if (t == n_warmup && n_warmup > 0) kernel.end_warmup();
    rng::Stream stream(7, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    kernel.transition(state, stream);
    if (t >= n_warmup) {
      EXPECT_TRUE(space.weighted_view(state.x, view));
      out.x.push_back(view.samples.col(0));
      out.log_w.push_back(view.log_weights[0]);
    }
  }
}

kernels::ChainState start(const targets::Target& space) {
  kernels::ChainState state;
  state.x.resize(space.dim());
  space.initial_point([](VectorRef x) { x.setConstant(0.1); }, state.x);
  kernels::refresh(space, state);
  return state;
}

void expect_moments_equal_direct(const kernels::Kernel& kernel, const Views& views) {
  Vector mean;
  Matrix cov;
  ASSERT_TRUE(kernel.report_moments(mean, cov));
  const auto direct = pemc::testing::direct_weighted_moments(views.x, views.log_w);
  ASSERT_EQ(mean.size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(mean[i], direct.mean[i], 1e-12 * (1 + std::abs(direct.mean[i]))) << i;
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(cov(i, j), direct.covariance(i, j), 1e-11 * (1 + std::abs(direct.covariance(i, j))))
          << i << "," << j;
  }
  // Not a degenerate check: the weights vary and the covariance is a real one.
  EXPECT_GT(cov(0, 0), 0.01);
}

std::unique_ptr<SimulatedTemperingKernel> make_st(std::shared_ptr<SimulatedTemperingSpace>& space) {
  space = std::make_shared<SimulatedTemperingSpace>(target_3d(), reference_3d(),
                                                    linear_ladder(8, 0.0), std::vector<double>{});
  SimulatedTemperingOptions o;
  o.n_local_steps = 2;
  o.n_kernel_bins = 4;
  return std::make_unique<SimulatedTemperingKernel>(space, hmc_factory(0.25, 6, true), o);
}

TEST(RunningMoments, SimulatedTemperingEqualsDirectWeightedMoments) {
  std::shared_ptr<SimulatedTemperingSpace> space;
  auto st = make_st(space);
  Vector m;
  Matrix c;
  EXPECT_FALSE(st->report_moments(m, c));  // not tracked
  st->track_moments();
  EXPECT_FALSE(st->report_moments(m, c));  // nothing yet
  auto state = start(*space);
  st->begin_warmup(200);
  Views views;
  drive(*st, *space, state, 200, 0, 1200, views);
  ASSERT_EQ(views.x.size(), 1000u);
  // The weights p(K-1 | x) differ from draw to draw (RB over temperatures, not only beta = 1 draws).
  EXPECT_GT(*std::max_element(views.log_w.begin(), views.log_w.end()) -
                *std::min_element(views.log_w.begin(), views.log_w.end()),
            1.0);
  expect_moments_equal_direct(*st, views);
}

TEST(RunningMoments, SimulatedTemperingCheckpointRestoresTheSums) {
  std::shared_ptr<SimulatedTemperingSpace> s1, s2;
  auto a = make_st(s1);
  auto b = make_st(s2);
  a->track_moments();
  b->track_moments();
  auto sa = start(*s1);
  a->begin_warmup(100);
  Views va, vb;
  drive(*a, *s1, sa, 100, 0, 400, va);
  pemc::v1::KernelState saved;
  a->save_state(saved);
  auto sb = sa;
  b->restore_state(saved);
  drive(*a, *s1, sa, 100, 400, 700, va);
  drive(*b, *s2, sb, 100, 400, 700, vb);
  Vector ma, mb;
  Matrix ca, cb;
  ASSERT_TRUE(a->report_moments(ma, ca));
  ASSERT_TRUE(b->report_moments(mb, cb));
  EXPECT_EQ(ma, mb);  // bit for bit
  EXPECT_EQ(ca, cb);
}

TEST(RunningMoments, AnnealedImportanceEqualsDirectWeightedMoments) {
  auto target = target_3d();
  AnnealedImportanceOptions o;
  o.betas = sigmoidal_ladder(30, 0.0, 4.0);
  o.n_kernel_bins = 4;
  AnnealedImportanceKernel ais(target, reference_3d(), hmc_factory(0.2, 5, true), o);
  AnnealedImportanceSpace space(target);
  ais.track_moments();
  auto state = start(space);
  ais.begin_warmup(20);
  Views views;
  drive(ais, space, state, 20, 0, 320, views);
  ASSERT_EQ(views.x.size(), 300u);
  expect_moments_equal_direct(ais, views);
}

TEST(RunningMoments, BaseIsTheReference) {
  auto target = target_3d();
  AnnealedImportanceOptions o;
  o.betas = linear_ladder(4, 0.0);
  auto ref = reference_3d();
  AnnealedImportanceKernel ais(target, ref, hmc_factory(0.2, 5), o);
  Vector mean;
  Matrix cov;
  double log_zeta = 0;
  ASSERT_TRUE(ais.report_base(mean, cov, log_zeta));
  EXPECT_EQ(mean, ref->density->mean());
  Matrix lower(3, 3);
  lower << 1.2, 0, 0, 0.3, 0.9, 0, -0.2, 0.1, 1.1;
  EXPECT_TRUE(cov.isApprox(lower * lower.transpose(), 1e-15));
  EXPECT_EQ(log_zeta, -1.25);
  // A diagonal reference without a fitted log zeta: its variances, NaN.
  const auto diag = testing::diagonal_reference(Vector::Zero(2), Vector::LinSpaced(2, 1.0, 4.0));
  EXPECT_EQ(diag->density->covariance(), Vector::LinSpaced(2, 1.0, 4.0).asDiagonal().toDenseMatrix());
  EXPECT_TRUE(std::isnan(diag->log_zeta));
}

}  // namespace
}  // namespace pemc::tempering
