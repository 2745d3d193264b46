// Pseudo-extended on the reference path (extended/pseudo_extended_reference.hpp): gradients
// against finite differences, Theorem 2.1's weights recovering the target's moments exactly by
// quadrature (with one and with two pseudo-samples), and a reference equal to the target giving
// every pseudo-sample the same weight; the independence moves from the reference
// (pseudo_extended_refresh.hpp) leave the extended target invariant, and their single-sample
// evaluation (SingleSampleMoves) takes exactly the steps that evaluating the whole extended density
// for every proposal takes.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "densities/gaussian.hpp"
#include "densities/gaussian_mixture.hpp"
#include "extended/pseudo_extended_reference.hpp"
#include "extended/pseudo_extended_refresh.hpp"
#include "rng/stream.hpp"
#include "support/bimodal_1d.hpp"
#include "support/gradient_check.hpp"
#include "support/weighted_quadrature.hpp"
#include "targets/gaussian.hpp"
#include "targets/mixture.hpp"

namespace pemc::extended {
namespace {

using targets::GaussianMixture;

using pemc::testing::bimodal_1d;  // 0.5 N(-1, 0.1) + 0.5 N(1, 0.02): E[x] = 0, E[x^2] = 1.06

densities::DensityPtr gaussian_reference(const Vector& mean, const Matrix& cov) {
  return std::make_shared<const densities::Gaussian>(densities::Gaussian::from_covariance(mean, cov));
}

std::shared_ptr<const ReferencePathPseudoExtended> reference_pe(targets::TargetPtr base,
                                                                densities::DensityPtr rho,
                                                                double log_zeta, int n,
                                                                double lo) {
  PseudoExtendedOptions o;
  o.n_pseudo = n;
  o.beta_lower = lo;
  o.beta_upper = 1.0;
  auto ratio = std::make_shared<const ReferenceRatioTarget>(std::move(base), rho, log_zeta);
  auto inner = std::make_shared<const PseudoExtendedTarget>(ratio, o);
  return std::make_shared<const ReferencePathPseudoExtended>(inner, rho);
}

TEST(ReferencePathPseudoExtended, GradientsMatchFiniteDifferences) {
  auto base = std::make_shared<GaussianMixture>(std::vector<GaussianMixture::Component>{
      {0.3, (Vector(3) << -2.0, 0.5, 1.0).finished(), Vector::Constant(3, 0.2)},
      {0.7, (Vector(3) << 2.0, -0.5, 0.0).finished(), (Vector(3) << 0.1, 0.3, 0.5).finished()}});
  Matrix cov(3, 3);
  cov << 2.0, 0.3, 0.1, 0.3, 1.0, -0.2, 0.1, -0.2, 0.5;
  const auto t = reference_pe(base, gaussian_reference((Vector(3) << 0.5, 0.0, 0.2).finished(), cov),
                              -1.7, 4, 0.0);
  ASSERT_EQ(t->dim(), 4 * 3 + 4);
  rng::Stream s(7, rng::Domain::kTest, 0, 0);
  for (int trial = 0; trial < 6; ++trial) {
    Vector z(t->dim());
    for (int j = 0; j < t->dim(); ++j) z[j] = (j < 12 ? 1.5 : 3.0) * s.normal();
    pemc::testing::expect_gradient_matches(*t, z, 1e-6);
    Vector g(t->dim());
    EXPECT_EQ(t->potential(z), t->potential_and_gradient(z, g));
  }
}

// Under pi^N the self-normalised weights recover E[x] = 0 and E[x^2] = 1.06 exactly (Theorem 2.1
// for any instrumental). A reference far from the target (centre 0.7, sd 2) and a log zeta that
// is not log Z keep the check honest: the ratio is not constant, so a wrong sum of psi or wrong
// weights move the moments by O(0.1).
TEST(ReferencePathPseudoExtended, WeightsRecoverTheTargetsMomentsExactly) {
  const auto rho = gaussian_reference(Vector::Constant(1, 0.7), Matrix::Constant(1, 1, 4.0));
  const auto x = pemc::testing::grid(-6.0, 6.0, 241);
  const auto eta = pemc::testing::grid(-14.0, 14.0, 57);
  {
    const auto t = reference_pe(bimodal_1d(), rho, 0.4, 1, 0.0);
    const auto m = pemc::testing::weighted_moments_by_quadrature(*t, {x, eta});
    EXPECT_NEAR(m.m1, 0.0, 1e-6);
    EXPECT_NEAR(m.m2, 1.06, 1e-6);
  }
  {
    // A coarser grid in four dimensions: its quadrature error is below 1e-6 (measured 6.7e-7 and
    // 4.1e-7), the tolerance 100x that, the errors it must catch 1e5x.
    const auto xc = pemc::testing::grid(-6.0, 6.0, 73);
    const auto ec = pemc::testing::grid(-14.0, 14.0, 21);
    const auto t = reference_pe(bimodal_1d(), rho, 0.4, 2, 0.0);
    const auto m = pemc::testing::weighted_moments_by_quadrature(*t, {xc, xc, ec, ec});
    EXPECT_NEAR(m.m1, 0.0, 1e-4);
    EXPECT_NEAR(m.m2, 1.06, 1e-4);
  }
}

// rho = the target and zeta = Z: gamma / (zeta rho) = 1 everywhere, so every pseudo-sample's
// weight is pi(beta) / g(beta) = 1 (flat both), at any temperature.
TEST(ReferencePathPseudoExtended, ExactReferenceGivesEqualWeights) {
  Matrix cov(2, 2);
  cov << 1.5, 0.4, 0.4, 0.8;
  const Vector mean = (Vector(2) << 1.0, -2.0).finished();
  auto base = std::make_shared<targets::Gaussian>(mean, cov);
  const auto log_z = base->truth().log_z;
  ASSERT_TRUE(log_z.has_value());
  const auto t = reference_pe(base, gaussian_reference(mean, cov), *log_z, 3, 0.0);
  rng::Stream s(3, rng::Domain::kTest, 0, 0);
  targets::WeightedView v;
  for (int trial = 0; trial < 5; ++trial) {
    Vector z(t->dim());
    for (int j = 0; j < t->dim(); ++j) z[j] = 2.0 * s.normal();
    ASSERT_TRUE(t->weighted_view(z, v));
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(v.log_weights[i], 0.0, 1e-10);
  }
}

TEST(ReferencePathPseudoExtended, RefusesMismatchedParts) {
  const auto rho2 = gaussian_reference(Vector::Zero(2), Matrix::Identity(2, 2));
  EXPECT_THROW(ReferenceRatioTarget(bimodal_1d(), rho2, 0.0), ConfigError);
  const auto rho1 = gaussian_reference(Vector::Zero(1), Matrix::Identity(1, 1));
  EXPECT_THROW(ReferenceRatioTarget(bimodal_1d(), rho1, std::nan("")), ConfigError);
  PseudoExtendedOptions o;
  o.n_pseudo = 2;
  // The inner target's base must be the ratio to the reference.
  auto plain = std::make_shared<const PseudoExtendedTarget>(bimodal_1d(), o);
  EXPECT_THROW(ReferencePathPseudoExtended(plain, rho1), ConfigError);
}

// A kernel that does not move: the refresh moves alone make the chain.
class StayKernel final : public kernels::Kernel {
 public:
  std::string name() const override { return "stay"; }
  kernels::TransitionStats transition(kernels::ChainState&, rng::Stream&) override { return {}; }
};

// With one pseudo-sample x's marginal under the extended target is the target itself, so the
// refresh moves alone (an independence sampler from rho on x, beta fixed at its start) must give
// the target's moments: 0.3 N(-1, 0.1) + 0.7 N(1.5, 0.3), E[x] = 0.75, E[x^2] = 1.9 + 0.03 + 0.21
// = 2.14, while rho (equal weights at -1 and 1.5, sd 0.5) has E[x] = 0.25: a wrong acceptance
// ratio (psi's terms dropped or with the wrong sign) leaves rho's moments or worse. Tolerance 4.5
// batch-means standard errors of the 40,000 draws.
TEST(ReferenceRefreshKernel, IndependenceMovesLeaveTheTargetInvariant) {
  auto base = std::make_shared<GaussianMixture>(std::vector<GaussianMixture::Component>{
      {0.3, Vector::Constant(1, -1.0), Vector::Constant(1, 0.1)},
      {0.7, Vector::Constant(1, 1.5), Vector::Constant(1, 0.3)}});
  std::vector<densities::Gaussian> comps{
      densities::Gaussian::from_covariance(Vector::Constant(1, -1.0), Matrix::Constant(1, 1, 0.25)),
      densities::Gaussian::from_covariance(Vector::Constant(1, 1.5), Matrix::Constant(1, 1, 0.25))};
  auto rho = std::make_shared<const densities::GaussianMixture>(
      densities::GaussianMixture::from_log_weights({0.0, 0.0}, std::move(comps)));
  const auto space = reference_pe(base, rho, 0.0, 1, 0.0);
  ReferenceRefreshKernel k(std::make_unique<StayKernel>(), space);
  kernels::ChainState state;
  state.x = (Vector(2) << -1.0, 0.3).finished();
  kernels::refresh(*space, state);
  rng::Stream stream(11, rng::Domain::kTest, 0, 0);
  k.end_warmup();
  const int n = 40000, batches = 40;
  std::vector<double> m1(batches, 0.0), m2(batches, 0.0);
  for (int t = 0; t < n; ++t) {
    k.transition(state, stream);
    const double x = state.x[0];
    m1[static_cast<std::size_t>(t / (n / batches))] += x / (n / batches);
    m2[static_cast<std::size_t>(t / (n / batches))] += x * x / (n / batches);
    Vector g(2);
    ASSERT_EQ(state.potential, space->potential_and_gradient(state.x, g));
  }
  auto mean_se = [&](const std::vector<double>& b) {
    double mean = 0.0, var = 0.0;
    for (double v : b) mean += v / batches;
    for (double v : b) var += (v - mean) * (v - mean) / (batches - 1);
    return std::make_pair(mean, std::sqrt(var / batches));
  };
  const auto [e1, se1] = mean_se(m1);
  const auto [e2, se2] = mean_se(m2);
  EXPECT_NEAR(e1, 0.75, 4.5 * se1);
  EXPECT_NEAR(e2, 2.14, 4.5 * se2);
  std::map<std::string, double> est;
  k.report_estimates(est);
  EXPECT_EQ(est["reference_refresh_proposed"], n);
  EXPECT_GT(est["reference_refresh_accept_rate"], 0.3);
}

// The independence moves as first written: the whole extended potential for every proposal (N^2
// target evaluations per transition). SingleSampleMoves must reproduce it bit for bit.
kernels::ChainState refresh_by_whole_potentials(const ReferencePathPseudoExtended& space,
                                                const densities::Density& rho, int n,
                                                kernels::ChainState state, rng::Stream& stream) {
  const int d = space.original_dim();
  double u = state.potential;
  bool moved = false;
  for (int i = 0; i < n; ++i) {
    Vector proposal = state.x;
    auto xi = proposal.segment(i * d, d);
    const double psi_old = rho.potential(xi);
    rho.sample(stream, xi);
    const double psi_new = rho.potential(xi);
    const double u_new = space.potential(proposal);
    const double log_u = std::log(stream.uniform());
    if (std::isfinite(u_new) && log_u < u - u_new + psi_new - psi_old) {
      state.x = proposal;
      u = u_new;
      moved = true;
    }
  }
  if (moved) kernels::refresh(space, state);
  return state;
}

TEST(ReferenceRefreshKernel, SingleSampleMovesTakeTheWholePotentialsSteps) {
  auto base = std::make_shared<GaussianMixture>(std::vector<GaussianMixture::Component>{
      {0.4, (Vector(2) << -2.0, 0.5).finished(), Vector::Constant(2, 0.3)},
      {0.6, (Vector(2) << 1.5, -1.0).finished(), Vector::Constant(2, 0.5)}});
  std::vector<densities::Gaussian> comps{
      densities::Gaussian::from_covariance((Vector(2) << -2.0, 0.4).finished(),
                                           Matrix::Identity(2, 2) * 0.4),
      densities::Gaussian::from_covariance((Vector(2) << 1.4, -1.0).finished(),
                                           Matrix::Identity(2, 2) * 0.6)};
  auto rho = std::make_shared<const densities::GaussianMixture>(
      densities::GaussianMixture::from_log_weights({-0.5, -0.9}, std::move(comps)));
  const int n = 4;
  const auto space = reference_pe(base, rho, 0.1, n, 0.0);
  ReferenceRefreshKernel k(std::make_unique<StayKernel>(), space);
  kernels::ChainState fast, whole;
  fast.x = Vector::LinSpaced(space->dim(), -1.0, 1.0);
  kernels::refresh(*space, fast);
  whole = fast;
  rng::Stream s_fast(5, rng::Domain::kTest, 0, 0), s_whole(5, rng::Domain::kTest, 0, 0);
  int changed = 0;
  for (int t = 0; t < 300; ++t) {
    const Vector before = fast.x;
    const auto stats = k.transition(fast, s_fast);
    EXPECT_EQ(stats.n_gradient_evals, 2);  // the target at N points, then at N proposals
    whole = refresh_by_whole_potentials(*space, *rho, n, whole, s_whole);
    ASSERT_EQ(fast.x, whole.x) << "transition " << t;
    ASSERT_EQ(fast.potential, whole.potential) << "transition " << t;
    ASSERT_EQ(fast.grad, whole.grad) << "transition " << t;
    changed += fast.x != before;
  }
  EXPECT_GT(changed, 100);  // the moves were tested, not skipped
}

}  // namespace
}  // namespace pemc::extended
