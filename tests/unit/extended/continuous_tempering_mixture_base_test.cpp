// Continuous tempering with a two-component Gaussian mixture base (densities/gaussian_mixture.hpp:
// one component per mode, as a mode search would give) on a bimodal 2-D target with exact log Z
// and mean. The target's modes are about 10 standard deviations apart, so x moves between them
// only near beta = 0. CT has no exact draw from the base, so there x crosses by HMC moves on the
// base: its components are wide enough (sd 2 along the modes' axis, 6 apart) to overlap (narrow
// ones would leave the base as multimodal as the target; Graham & Storkey 2017, Section 6). The
// base's weights (1/2, 1/2) are not the target's (0.3, 0.7), its components are off-centre, and
// its log zeta is 0.5 above log Z: the Rao-Blackwellised estimators (eqs. (20)-(21)) must still
// reach the exact values within 4.5 batch-means standard errors, in both variants.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ct_test_support.hpp"
#include "densities/gaussian.hpp"
#include "densities/gaussian_mixture.hpp"
#include "estimators/rb_tempering.hpp"
#include "extended/continuous_tempering.hpp"
#include "targets/mixture.hpp"

namespace pemc::extended {
namespace {

using pemc::testing::hmc_factory;

constexpr double kZ = 4.5;  // z-test bound, in Monte Carlo standard errors

// 0.3 N((-3, 0), diag(0.3, 0.5)) + 0.7 N((3, 1), diag(0.4, 0.3)): log Z = 0, mean (1.2, 0.7).
std::shared_ptr<targets::GaussianMixture> bimodal_2d() {
  using C = targets::GaussianMixture::Component;
  return std::make_shared<targets::GaussianMixture>(std::vector<C>{
      C{0.3, (Vector(2) << -3.0, 0.0).finished(), (Vector(2) << 0.3, 0.5).finished()},
      C{0.7, (Vector(2) << 3.0, 1.0).finished(), (Vector(2) << 0.4, 0.3).finished()}});
}

// kFast components, as CT's base is evaluated (one chain, one thread).
densities::DensityPtr mixture_base() {
  return std::make_shared<const densities::GaussianMixture>(
      densities::GaussianMixture::from_weights(
          {0.5, 0.5}, {densities::Gaussian::from_variances((Vector(2) << -2.8, 0.2).finished(),
                                                           (Vector(2) << 4.0, 1.0).finished()),
                       densities::Gaussian::from_variances((Vector(2) << 3.2, 0.8).finished(),
                                                           (Vector(2) << 4.0, 1.0).finished())}));
}

// Per-batch Rao-Blackwell accumulators of one chain (the chain driver's loop after 200 warmup
// transitions).
std::vector<estimators::TemperingRbAccumulator> run_batches(const ExtendedSampler& s,
                                                            std::uint64_t seed, int n_batches,
                                                            int per_batch) {
  kernels::ChainState state;
  state.x.resize(s.space->dim());
  s.space->initial_point([](VectorRef x) { x.setZero(); }, state.x);
  kernels::refresh(*s.space, state);
  targets::WeightedView view;
  std::vector<estimators::TemperingRbAccumulator> out(n_batches);
  const int n_warmup = 200;
  for (int t = 0; t < n_warmup + n_batches * per_batch; ++t) {
    rng::Stream stream(seed, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    s.kernel->transition(state, stream);
    if (t < n_warmup) continue;
    s.space->weighted_view(state.x, view);
    out[(t - n_warmup) / per_batch].add(view.samples.col(0), view.extra[kExtraLogW0],
                                        view.extra[kExtraLogW1]);
  }
  return out;
}

// stat of all batches pooled against the truth, within kZ standard errors of the batch values.
// Returns that standard error.
template <typename F>
double expect_within(const std::vector<estimators::TemperingRbAccumulator>& batches, double truth,
                     F&& stat, const std::string& what) {
  estimators::TemperingRbAccumulator all;
  std::vector<double> values;
  for (const auto& b : batches) {
    values.push_back(stat(b));
    all.merge(b);
  }
  const double n = static_cast<double>(values.size());
  double m = 0.0, v = 0.0;
  for (double x : values) m += x / n;
  for (double x : values) v += (x - m) * (x - m) / (n - 1.0);
  const double se = std::sqrt(v / n);
  EXPECT_NEAR(stat(all), truth, kZ * se) << what << " (se " << se << ")";
  return se;
}

TEST(ContinuousTemperingMixtureBase, BothVariantsRecoverLogZAndTheMean) {
  const auto target = bimodal_2d();
  const double log_z = 0.0, log_zeta = 0.5;
  const Vector mean = (Vector(2) << 0.3 * -3.0 + 0.7 * 3.0, 0.7).finished();
  for (auto variant : {TemperingVariant::kJoint, TemperingVariant::kGibbs}) {
    const std::string name = variant == TemperingVariant::kJoint ? "joint" : "gibbs";
    ContinuousTemperingOptions o;
    o.variant = variant;
    const auto s = make_continuous_tempering(
        target, BaseDensity{mixture_base(), log_zeta, "mixture"}, o, hmc_factory(0.25, 10));
    const auto batches = run_batches(s, 13, 20, 2000);
    expect_within(
        batches, log_z, [&](const auto& a) { return a.log_z(log_zeta); }, name + ": log Z");
    double se_x0 = 0.0;
    for (int i = 0; i < 2; ++i) {
      const double se = expect_within(
          batches, mean[i], [&](const auto& a) { return a.mean()[i]; },
          name + ": E[x" + std::to_string(i) + "]");
      if (i == 0) se_x0 = se;
    }
    // The test has the power to fail: the base's own E[x_0] = 0.2, 1.0 from the target's, would
    // be outside the tolerance.
    EXPECT_LT(kZ * se_x0, 1.0) << name << ": E[x_0]'s standard error is " << se_x0;
  }
}

}  // namespace
}  // namespace pemc::extended
