// Pseudo-extended on standardised pseudo-samples (extended/pseudo_extended_standardised.hpp): the
// map and its inverse, the gradient with the Jacobian, and Theorem 2.1's weights recovering the
// target's moments exactly under the transformed extended target.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "extended/pseudo_extended_standardised.hpp"
#include "rng/stream.hpp"
#include "support/bimodal_1d.hpp"
#include "support/gradient_check.hpp"
#include "support/weighted_quadrature.hpp"
#include "targets/mixture.hpp"

namespace pemc::extended {
namespace {

using targets::GaussianMixture;

using pemc::testing::bimodal_1d;  // 0.5 N(-1, 0.1) + 0.5 N(1, 0.02): E[x] = 0, E[x^2] = 1.06

std::shared_ptr<const PseudoExtendedTarget> pe(targets::TargetPtr base, int n, double lo) {
  PseudoExtendedOptions o;
  o.n_pseudo = n;
  o.beta_lower = lo;
  o.beta_upper = 1.0;
  return std::make_shared<const PseudoExtendedTarget>(std::move(base), o);
}

TEST(StandardisedPseudoExtended, MapsAndGradients) {
  auto base = std::make_shared<GaussianMixture>(std::vector<GaussianMixture::Component>{
      {0.3, (Vector(3) << -2.0, 0.5, 1.0).finished(), Vector::Constant(3, 0.2)},
      {0.7, (Vector(3) << 2.0, -0.5, 0.0).finished(), (Vector(3) << 0.1, 0.3, 0.5).finished()}});
  const StandardisedPseudoExtended t(pe(base, 4, 0.001), (Vector(3) << 0.5, 0.0, 0.2).finished(),
                                     (Vector(3) << 0.4, 0.5, 0.7).finished());
  ASSERT_EQ(t.dim(), 4 * 3 + 4);
  rng::Stream s(5, rng::Domain::kTest, 0, 0);
  for (int trial = 0; trial < 6; ++trial) {
    Vector z(t.dim());
    for (int j = 0; j < t.dim(); ++j) z[j] = (j < 12 ? 1.5 : 3.0) * s.normal();
    pemc::testing::expect_gradient_matches(t, z, 1e-6);
    Vector x(t.dim()), back(t.dim());
    t.to_x(z, x);
    t.to_z(x, back);
    EXPECT_LT((back - z).cwiseAbs().maxCoeff(), 1e-12);
    // The etas are shared; beta_i = 1e-3 + 0.999 logistic(eta_i) scales z_i by beta_i^(-1/2).
    const double beta0 = 0.001 + 0.999 / (1.0 + std::exp(-z[12]));
    EXPECT_NEAR(x[0], 0.5 + 0.4 * z[0] / std::sqrt(beta0), 1e-12);
    EXPECT_EQ(x[12], z[12]);
  }
}

TEST(StandardisedPseudoExtended, WeightsRecoverTheTargetsMomentsExactly) {
  // The change of variables with its Jacobian leaves the x-marginal and the weights as they were.
  // With one pseudo-sample (its weight normalised to 1) x's marginal under the extended target is
  // the target itself, for any beta density: quadrature over (z, eta) gives E[x] = 0 and
  // E[x^2] = 1.06. A missing or wrong Jacobian moves them by O(0.1).
  const StandardisedPseudoExtended t(pe(bimodal_1d(), 1, 0.05), Vector::Constant(1, 0.1),
                                     Vector::Constant(1, 0.1));
  const auto z = pemc::testing::grid(-40.0, 40.0, 801);
  const auto eta = pemc::testing::grid(-16.0, 16.0, 65);
  const auto m = pemc::testing::weighted_moments_by_quadrature(t, {z, eta});
  EXPECT_NEAR(m.m1, 0.0, 1e-6);
  EXPECT_NEAR(m.m2, 1.06, 1e-6);
}

TEST(StandardisedPseudoExtended, NeedsSampledTemperaturesAndPositiveScales) {
  PseudoExtendedOptions fixed;
  fixed.n_pseudo = 2;
  fixed.fixed_beta = 0.5;
  auto fixed_pe = std::make_shared<const PseudoExtendedTarget>(bimodal_1d(), fixed);
  EXPECT_THROW(StandardisedPseudoExtended(fixed_pe, Vector::Zero(1), Vector::Ones(1)), ConfigError);
  EXPECT_THROW(StandardisedPseudoExtended(pe(bimodal_1d(), 2, 0.1), Vector::Zero(1),
                                          Vector::Zero(1)),
               ConfigError);
  EXPECT_THROW(StandardisedPseudoExtended(pe(bimodal_1d(), 2, 0.1), Vector::Zero(2),
                                          Vector::Ones(1)),
               ConfigError);
}

}  // namespace
}  // namespace pemc::extended
