// Continuous tempering's running target moments (Kernel::report_moments, eq. (21)) and its base
// (report_base), as written to EstimatesSnapshot: equal to sum w1 f / sum w1 computed directly from
// the chain's weighted views, for both variants.
#include <gtest/gtest.h>

#include <cmath>

#include "ct_test_support.hpp"
#include "densities/gaussian.hpp"
#include "support/direct_moments.hpp"
#include "targets/gaussian.hpp"

namespace pemc::extended {
namespace {

TEST(ContinuousTemperingMoments, RunningMomentsAreEquation21) {
  Matrix cov(3, 3);
  cov << 1.0, 0.3, 0.0, 0.3, 2.0, -0.4, 0.0, -0.4, 0.5;
  auto target = std::make_shared<targets::Gaussian>(Vector::LinSpaced(3, -1.0, 1.0), cov);
  const Matrix base_cov = 1.5 * Matrix::Identity(3, 3);
  for (auto variant : {TemperingVariant::kJoint, TemperingVariant::kGibbs}) {
    ContinuousTemperingOptions o;
    o.variant = variant;
    BaseDensity base{std::make_shared<const densities::Gaussian>(
                         densities::Gaussian::from_covariance(Vector::Constant(3, 0.2), base_cov)),
                     0.7, "test"};
    const auto s = make_continuous_tempering(target, base, o, pemc::testing::hmc_factory(0.2, 8));
    kernels::ChainState state;
    state.x.resize(s.space->dim());
    s.space->initial_point([](VectorRef b) { b.setConstant(0.1); }, state.x);
    kernels::refresh(*s.space, state);
    s.kernel->track_moments();
    Vector mean;
    Matrix c;
    EXPECT_FALSE(s.kernel->report_moments(mean, c));  // in warmup: nothing yet
    s.kernel->begin_warmup(100);
    std::vector<Vector> x;
    std::vector<double> log_w1;
    targets::WeightedView view;
    for (int t = 0; t < 1100; ++t) {
      if (t == 100) s.kernel->end_warmup();
      rng::Stream stream(3, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
      const auto stats = s.kernel->transition(state, stream);
      if (t < 100) {
        s.kernel->adapt(t, state, stats);
        continue;
      }
      s.space->weighted_view(state.x, view);
      x.push_back(view.samples.col(0));
      log_w1.push_back(view.extra[kExtraLogW1]);
    }
    ASSERT_TRUE(s.kernel->report_moments(mean, c));
    const auto direct = pemc::testing::direct_weighted_moments(x, log_w1);
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(mean[i], direct.mean[i], 1e-12 * (1 + std::abs(direct.mean[i])));
      for (int j = 0; j < 3; ++j)
        EXPECT_NEAR(c(i, j), direct.covariance(i, j), 1e-11 * (1 + std::abs(direct.covariance(i, j))));
    }
    EXPECT_GT(c(1, 1), 0.1);
    // The base: its own mean, covariance and log zeta.
    double log_zeta = 0;
    ASSERT_TRUE(s.kernel->report_base(mean, c, log_zeta));
    EXPECT_EQ(mean, Vector::Constant(3, 0.2));
    EXPECT_TRUE(c.isApprox(base_cov, 1e-14));
    EXPECT_EQ(log_zeta, 0.7);
  }
}

}  // namespace
}  // namespace pemc::extended
