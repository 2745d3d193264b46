// Continuous tempering with a deliberately mismatched base (issue 5, the bug hunt for the Gibbs
// variant): a 2-D three-component Gaussian mixture (log Z = 0, known mean and covariance), a base
// that is wide, off-centre and whose log zeta is 1 above log Z. Whatever the base, the
// Rao-Blackwellised estimators (Graham & Storkey 2017, eqs. (20)-(21)) are consistent, so both the
// joint and the Gibbs chain must reach the exact log Z, mean and covariance within 4 batch-means
// standard errors. A sampler bias (e.g. a wrong beta | x draw, eq. (17), or weights that depend on
// the sampled beta) shows up here as a miss of many standard errors, because the base's log zeta
// error (1.0) and its moment errors are far larger than the tolerances.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "densities/gaussian.hpp"
#include "estimators/rb_tempering.hpp"
#include "extended/continuous_tempering.hpp"
#include "ct_test_support.hpp"
#include "kernels/hmc.hpp"
#include "targets/mixture.hpp"

namespace pemc::extended {
namespace {

std::shared_ptr<targets::GaussianMixture> mixture_2d() {
  using C = targets::GaussianMixture::Component;
  return std::make_shared<targets::GaussianMixture>(std::vector<C>{
      C{0.5, (Vector(2) << -2.0, 0.0).finished(), (Vector(2) << 0.3, 0.5).finished()},
      C{0.3, (Vector(2) << 2.0, 1.5).finished(), (Vector(2) << 0.4, 0.2).finished()},
      C{0.2, (Vector(2) << 0.5, -2.5).finished(), (Vector(2) << 0.25, 0.25).finished()}});
}

using pemc::testing::hmc_factory;

// Per-batch RB accumulators of one chain (chain driver loop, no warmup adaptation needed here).
std::vector<estimators::TemperingRbAccumulator> run_batches(const ExtendedSampler& s,
                                                           std::uint64_t seed, int n_batches,
                                                           int per_batch) {
  kernels::ChainState state;
  state.x.resize(s.space->dim());
  s.space->initial_point([](VectorRef b) { b.setZero(); }, state.x);
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

template <typename F>
void expect_within(const std::vector<estimators::TemperingRbAccumulator>& batches, double truth,
                   F&& stat, const std::string& what) {
  estimators::TemperingRbAccumulator all;
  double m = 0.0, v = 0.0;
  std::vector<double> values;
  for (const auto& b : batches) {
    values.push_back(stat(b));
    all.merge(b);
  }
  const double n = static_cast<double>(values.size());
  for (double x : values) m += x / n;
  for (double x : values) v += (x - m) * (x - m) / (n - 1.0);
  const double se = std::sqrt(v / n);
  EXPECT_NEAR(stat(all), truth, 4.0 * se) << what << " (se " << se << ")";
  // The check must be able to fail: the base's own errors are far outside the tolerance.
  EXPECT_LT(se, 0.1) << what;
}

TEST(ContinuousTemperingMismatchedBase, BothVariantsRecoverTheExactMoments) {
  const auto target = mixture_2d();
  const auto truth = target->truth();
  const Vector mean = *truth.mean;
  const Matrix cov = *truth.cross_moment - mean * mean.transpose();
  const double log_zeta = *truth.log_z + 1.0;
  Matrix base_cov(2, 2);
  base_cov << 6.0, 1.0, 1.0, 3.0;
  for (auto variant : {TemperingVariant::kJoint, TemperingVariant::kGibbs}) {
    const std::string name = variant == TemperingVariant::kJoint ? "joint" : "gibbs";
    ContinuousTemperingOptions o;
    o.variant = variant;
    const BaseDensity base{std::make_shared<const densities::Gaussian>(densities::Gaussian::from_covariance(
                               (Vector(2) << 1.0, 1.0).finished(), base_cov)),
                           log_zeta, "mismatched"};
    const auto s = make_continuous_tempering(target, base, o, hmc_factory(0.25, 12));
    const auto batches = run_batches(s, 11, 20, 2000);
    expect_within(batches, *truth.log_z, [&](const auto& a) { return a.log_z(log_zeta); },
                  name + ": log Z");
    for (int i = 0; i < 2; ++i)
      expect_within(batches, mean[i], [&](const auto& a) { return a.mean()[i]; },
                    name + ": E[x" + std::to_string(i) + "]");
    for (int i = 0; i < 2; ++i)
      for (int j = i; j < 2; ++j)
        expect_within(batches, cov(i, j), [&](const auto& a) { return a.covariance()(i, j); },
                      name + ": Cov[" + std::to_string(i) + "," + std::to_string(j) + "]");
  }
}

}  // namespace
}  // namespace pemc::extended
