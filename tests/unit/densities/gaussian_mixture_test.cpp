// densities::GaussianMixture: psi and its gradient (finite differences near and far from the
// components), normalisation (numerical integration in 1-D and 2-D), the K = 1 case against the
// Gaussian itself, finiteness far from every component, exact draws (moments and component
// frequencies against the exact values, z-tests at 4.5 Monte Carlo standard errors), the stream it
// uses, the responsibilities, the generic mixed gradient's bits, sharing between threads and the
// factories' errors.
#include "densities/gaussian_mixture.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "densities/gaussian.hpp"
#include "rng/stream.hpp"
#include "support/random_matrices.hpp"

namespace pemc::densities {
namespace {

constexpr auto kShared = Density::Evaluation::kShared;
constexpr auto kFast = Density::Evaluation::kFast;

// A z-test's bound: 4.5 standard errors (two-sided p ~ 7e-6 per check).
constexpr double kZ = 4.5;

Vector vec(std::initializer_list<double> v) {
  Vector out(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double x : v) out[i++] = x;
  return out;
}

// Three 2-D components with dense covariances and unequal weights, overlapping a little.
GaussianMixture mixture_2d(Density::Evaluation evaluation = kFast) {
  Matrix c0(2, 2), c1(2, 2), c2(2, 2);
  c0 << 0.5, 0.2, 0.2, 0.3;
  c1 << 1.2, -0.4, -0.4, 0.6;
  c2 << 0.2, 0.0, 0.0, 0.8;
  return GaussianMixture::from_weights(
      {0.5, 0.3, 0.2}, {Gaussian::from_covariance(vec({-2.0, 0.0}), c0, evaluation),
                        Gaussian::from_covariance(vec({1.5, 1.0}), c1, evaluation),
                        Gaussian::from_covariance(vec({0.5, -2.0}), c2, evaluation)});
}

// w N(-1, 0.5^2) + (1 - w) N(2, 1) with w = 0.3: mean 1.1, variance 2.665.
GaussianMixture mixture_1d(Density::Evaluation evaluation = kFast) {
  return GaussianMixture::from_weights(
      {0.3, 0.7}, {Gaussian::from_variances(vec({-1.0}), vec({0.25}), evaluation),
                   Gaussian::from_variances(vec({2.0}), vec({1.0}), evaluation)});
}

// Central differences, step h_i = 1e-5 max(1, |x_i|): truncation O(h^2 psi''') and rounding
// O(eps |psi| / h), both far below 1e-6 of the gradient's scale at the points used here.
Vector finite_difference_gradient(const Density& p, const Vector& x) {
  Vector g(x.size()), xp = x;
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const double h = 1e-5 * std::max(1.0, std::fabs(x[i]));
    xp[i] = x[i] + h;
    const double up = p.potential(xp);
    xp[i] = x[i] - h;
    const double down = p.potential(xp);
    xp[i] = x[i];
    g[i] = (up - down) / (2.0 * h);
  }
  return g;
}

TEST(GaussianMixture, GradientMatchesCentralDifferencesNearAndFar) {
  for (const auto evaluation : {kFast, kShared}) {
    const GaussianMixture p = mixture_2d(evaluation);
    // At the components, between them (responsibilities all well inside (0, 1)), and 10 and 50
    // standard deviations out.
    for (const Vector& x :
         {vec({-2.0, 0.0}), vec({1.5, 1.0}), vec({0.5, -2.0}), vec({-0.3, 0.2}), vec({0.2, -0.9}),
          vec({8.0, 9.0}), vec({-40.0, 35.0}), vec({3.0, -60.0})}) {
      Vector g(2);
      const double psi = p.potential_and_gradient(x, g);
      EXPECT_EQ(psi, p.potential(x)) << x.transpose();
      const Vector fd = finite_difference_gradient(p, x);
      const double scale = std::max(1.0, fd.cwiseAbs().maxCoeff());
      for (int i = 0; i < 2; ++i)
        EXPECT_NEAR(g[i], fd[i], 1e-6 * scale) << "x = " << x.transpose() << ", d/dx_" << i;
    }
  }
}

TEST(GaussianMixture, OneDimensionalDensityIntegratesToOne) {
  const GaussianMixture p = mixture_1d();
  // Trapezoid rule on [-20, 25] with h = 1e-3: for a smooth density decaying like a Gaussian the
  // error is exponentially small in sd / h (sd >= 0.5 here), and the tails beyond are < 1e-80.
  const double h = 1e-3;
  double sum = 0.0;
  Vector x(1);
  for (int i = 0; i <= 45000; ++i) {
    x[0] = -20.0 + i * h;
    sum += std::exp(-p.potential(x)) * h;
  }
  EXPECT_NEAR(sum, 1.0, 1e-8);
}

TEST(GaussianMixture, TwoDimensionalDensityIntegratesToOne) {
  const GaussianMixture p = mixture_2d();
  // Trapezoid rule on [-12, 12]^2 with h = 0.02: the smallest standard deviation along any
  // direction is 0.42 (21 steps), and every component is more than 8 sd inside the box.
  const double h = 0.02;
  const int n = 1200;
  double sum = 0.0;
  Vector x(2);
  for (int i = 0; i <= n; ++i) {
    x[0] = -12.0 + i * h;
    for (int j = 0; j <= n; ++j) {
      x[1] = -12.0 + j * h;
      sum += std::exp(-p.potential(x));
    }
  }
  EXPECT_NEAR(sum * h * h, 1.0, 1e-8);
}

TEST(GaussianMixture, OneComponentIsTheGaussianBitForBit) {
  const Matrix cov = test::random_spd(4, 3);
  const Vector mean = test::random_vector(4, 4);
  for (const auto evaluation : {kFast, kShared}) {
    for (const bool diagonal : {false, true}) {
      const Gaussian g = diagonal ? Gaussian::from_variances(mean, cov.diagonal(), evaluation)
                                  : Gaussian::from_covariance(mean, cov, evaluation);
      const GaussianMixture one = GaussianMixture::from_log_weights({-3.7}, {g});
      EXPECT_EQ(one.log_weights()[0], 0.0);
      EXPECT_EQ(one.evaluation(), evaluation);
      for (std::uint64_t s = 0; s < 20; ++s) {
        const Vector x = test::random_vector(4, 100 + s, 3.0);
        Vector gm(4), gg(4);
        EXPECT_EQ(one.potential(x), g.potential(x));
        EXPECT_EQ(one.potential_and_gradient(x, gm), g.potential_and_gradient(x, gg));
        for (int i = 0; i < 4; ++i) EXPECT_EQ(gm[i], gg[i]) << i;
      }
      EXPECT_EQ(one.mean(), g.mean());
      EXPECT_LT((one.covariance() - g.covariance()).cwiseAbs().maxCoeff(), 1e-15);
    }
  }
}

TEST(GaussianMixture, FiniteFiftyStandardDeviationsFromEveryComponent) {
  // Narrow components (sd 0.1-0.2) 4 apart: at x the nearest is 50 of its own sd away or more,
  // so every exp(-psi_k) underflows (psi_k >~ 1250 > 745), yet psi and grad psi are finite and
  // follow the nearest component in Mahalanobis distance.
  const GaussianMixture p = GaussianMixture::from_weights(
      {0.6, 0.4}, {Gaussian::from_variances(vec({-2.0, 0.0}), vec({0.01, 0.04})),
                   Gaussian::from_variances(vec({2.0, 0.0}), vec({0.04, 0.01}))});
  for (const Vector& x :
       {vec({-2.0, 10.0}), vec({12.0, 0.0}), vec({0.0, -11.0}), vec({300.0, -400.0})}) {
    Vector g(2);
    const double psi = p.potential_and_gradient(x, g);
    ASSERT_TRUE(std::isfinite(psi)) << x.transpose();
    ASSERT_TRUE(g.allFinite()) << x.transpose();
    EXPECT_GT(psi, 1200.0);
    // -log sum_k w_k N_k = min_k (psi_k - log w_k) - log(1 + (terms <= 1)), within log 2.
    const double nearest = std::min(p.component(0).potential(x) - std::log(0.6),
                                    p.component(1).potential(x) - std::log(0.4));
    EXPECT_LE(psi, nearest + 1e-9);
    EXPECT_GE(psi, nearest - std::log(2.0));
    Vector lp(2), r(2);
    EXPECT_EQ(p.component_terms(x, lp, r), psi);
    EXPECT_NEAR(r.sum(), 1.0, 1e-15);
  }
}

TEST(GaussianMixture, MomentsAreTheMixturesExactMoments) {
  const GaussianMixture p = mixture_1d();
  EXPECT_NEAR(p.mean()[0], 1.1, 1e-15);
  EXPECT_NEAR(p.covariance()(0, 0), 2.665, 1e-14);
  // 2-D against sum_k w_k (Sigma_k + m_k m_k') - m m'.
  const GaussianMixture q = mixture_2d();
  Vector m = Vector::Zero(2);
  Matrix second = Matrix::Zero(2, 2);
  for (int k = 0; k < q.n_components(); ++k) {
    m += q.weight(k) * q.component(k).mean();
    second += q.weight(k) * (q.component(k).covariance() +
                             q.component(k).mean() * q.component(k).mean().transpose());
  }
  EXPECT_LT((q.mean() - m).cwiseAbs().maxCoeff(), 1e-15);
  EXPECT_LT((q.covariance() - (second - m * m.transpose())).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_EQ(q.covariance(), q.covariance().transpose());
}

TEST(GaussianMixture, DrawsHaveTheMeanAndCovariance) {
  const GaussianMixture p = mixture_2d();
  const Vector mu = p.mean();
  const Matrix sigma = p.covariance();
  const int n = 200000;
  rng::Stream stream(11, rng::Domain::kTest, 0, 0);
  // Per coordinate pair (i, j): y = (x_i - mu_i)(x_j - mu_j), whose mean is Sigma_ij; its
  // standard error is the sample sd of y / sqrt(n) (independent draws).
  Vector x(2), sum = Vector::Zero(2);
  Matrix sum_y = Matrix::Zero(2, 2), sum_y2 = Matrix::Zero(2, 2);
  for (int t = 0; t < n; ++t) {
    p.sample(stream, x);
    sum += x;
    const Vector c = x - mu;
    const Matrix y = c * c.transpose();
    sum_y += y;
    sum_y2 += y.cwiseProduct(y);
  }
  for (int i = 0; i < 2; ++i) {
    const double se = std::sqrt(sigma(i, i) / n);
    EXPECT_NEAR(sum[i] / n, mu[i], kZ * se) << "mean " << i;
    for (int j = 0; j <= i; ++j) {
      const double m = sum_y(i, j) / n;
      const double se_y = std::sqrt((sum_y2(i, j) / n - m * m) / (n - 1));
      EXPECT_NEAR(m, sigma(i, j), kZ * se_y) << "covariance (" << i << ", " << j << ")";
    }
  }
}

TEST(GaussianMixture, ComponentFrequenciesMatchTheWeights) {
  // Components 100 sd apart: each draw's component is the nearest mean, without doubt.
  const std::vector<double> w = {0.55, 0.3, 0.1, 0.05};
  std::vector<Gaussian> components;
  for (int k = 0; k < 4; ++k)
    components.push_back(Gaussian::from_variances(vec({100.0 * k}), vec({1.0}), kShared));
  const GaussianMixture p = GaussianMixture::from_weights(w, components);
  const int n = 100000;
  std::vector<int> count(4, 0);
  rng::Stream stream(5, rng::Domain::kTest, 1, 0);
  Vector x(1);
  for (int t = 0; t < n; ++t) {
    p.sample(stream, x);
    ++count[static_cast<std::size_t>(std::lround(x[0] / 100.0))];
  }
  for (int k = 0; k < 4; ++k) {
    // Binomial(n, w_k): sd sqrt(n w_k (1 - w_k)).
    const double sd = std::sqrt(n * w[k] * (1.0 - w[k]));
    EXPECT_NEAR(count[k], n * w[k], kZ * sd) << "component " << k;
  }
}

TEST(GaussianMixture, DrawTakesOneUniformThenTheComponentsNormals) {
  const GaussianMixture p = mixture_2d(kShared);
  rng::Stream a(9, rng::Domain::kTest, 2, 0), b(9, rng::Domain::kTest, 2, 0);
  Vector x(2), again(2);
  p.sample(a, x);
  // The same draw by hand: the uniform picks the component against the cumulative weights...
  const double u = b.uniform();
  int k = 0;
  double cumulative = p.weight(0);
  while (k + 1 < p.n_components() && !(u < cumulative)) cumulative += p.weight(++k);
  p.component(k).sample(b, again);
  EXPECT_EQ(x, again);
  // ... and both streams are in the same state afterwards.
  EXPECT_EQ(a.uniform(), b.uniform());
  // Deterministic: the same stream state gives the same draw.
  rng::Stream c(9, rng::Domain::kTest, 2, 0);
  p.sample(c, again);
  EXPECT_EQ(x, again);
}

TEST(GaussianMixture, ComponentTermsAreTheResponsibilities) {
  const GaussianMixture p = mixture_2d();
  Vector lp(3), r(3);
  for (const Vector& x : {vec({-2.0, 0.0}), vec({-0.3, 0.2}), vec({5.0, 5.0})}) {
    const double psi = p.component_terms(x, lp, r);
    EXPECT_EQ(psi, p.potential(x));
    double total = 0.0;
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(lp[k], -p.component(k).potential(x));
      // r_k = w_k N_k(x) / p(x), directly.
      EXPECT_NEAR(r[k], p.weight(k) * std::exp(lp[k] + psi), 1e-13);
      total += r[k];
    }
    EXPECT_NEAR(total, 1.0, 1e-15);
  }
  Vector wrong(2);
  EXPECT_THROW(p.component_terms(vec({0.0, 0.0}), wrong, r), NumericalError);
  EXPECT_THROW(p.component_terms(vec({0.0, 0.0}), lp, wrong), NumericalError);
}

// Three 5-D components with random dense covariances (an odd size: Eigen's vector loops and their
// scalar tail).
GaussianMixture mixture_5d(Density::Evaluation evaluation) {
  std::vector<Gaussian> components;
  for (std::uint64_t k = 0; k < 3; ++k)
    components.push_back(Gaussian::from_covariance(test::random_vector(5, 60 + k, 2.0),
                                                   test::random_spd(5, 70 + k), evaluation));
  return GaussianMixture::from_weights({0.2, 0.5, 0.3}, std::move(components));
}

TEST(GaussianMixture, GenericMixedGradientIsTheExplicitExpressionBitForBit) {
  for (const auto evaluation : {kFast, kShared}) {
    for (const GaussianMixture& p : {mixture_2d(evaluation), mixture_5d(evaluation)}) {
      const Density& density = p;  // through the base class, as the samplers call it
      const int d = p.dim();
      const auto n = static_cast<std::size_t>(d);
      rng::Stream s(3, rng::Domain::kTest, static_cast<std::uint64_t>(d), 0);
      Vector x(d), grad_phi(d), grad_psi(d), expected(d), out(d), out_psi(d);
      for (int t = 0; t < 50; ++t) {
        s.fill_normal(x);
        x *= 3.0;
        s.fill_normal(grad_phi);
        const double beta = s.uniform();
        const double psi = p.potential_and_gradient(x, grad_psi);
        expected.noalias() = beta * grad_phi + (1.0 - beta) * grad_psi;
        out.setConstant(123.0);
        out_psi.setConstant(123.0);
        const double v = density.potential_and_mixed_gradient(
            {x.data(), n},
            {beta, 1.0 - beta, {grad_phi.data(), n}, {out.data(), n}, {out_psi.data(), n}});
        EXPECT_EQ(v, psi);
        for (int i = 0; i < d; ++i) {
          ASSERT_EQ(out[i], expected[i]) << "d " << d << " i " << i;
          ASSERT_EQ(out_psi[i], grad_psi[i]) << "d " << d << " i " << i;
        }
        // In place (out = grad_phi's storage), without grad psi: thread-local scratch.
        Vector inplace = grad_phi;
        EXPECT_EQ(
            density.potential_and_mixed_gradient(
                {x.data(), n}, {beta, 1.0 - beta, {inplace.data(), n}, {inplace.data(), n}, {}}),
            psi);
        for (int i = 0; i < d; ++i) ASSERT_EQ(inplace[i], expected[i]) << "d " << d << " i " << i;
      }
      Vector g(d), small(d - 1);
      EXPECT_THROW(density.potential_and_mixed_gradient(
                       {x.data(), n - 1}, {0.5, 0.5, {g.data(), n}, {out.data(), n}, {}}),
                   NumericalError);
      EXPECT_THROW(density.potential_and_mixed_gradient(
                       {x.data(), n}, {0.5, 0.5, {g.data(), n}, {small.data(), n - 1}, {}}),
                   NumericalError);
      EXPECT_THROW(
          density.potential_and_mixed_gradient(
              {x.data(), n}, {0.5, 0.5, {g.data(), n}, {out.data(), n}, {small.data(), n - 1}}),
          NumericalError);
    }
  }
}

TEST(GaussianMixture, SharedMixtureGivesEveryThreadTheSameBits) {
  // One kShared object, four threads at once (as the tempering samplers' in-process groups share
  // a reference), each evaluating the same points as a serial pass.
  const GaussianMixture p = mixture_2d(kShared);
  ASSERT_EQ(p.evaluation(), kShared);
  const int n_points = 2000;
  std::vector<Vector> points;
  for (int i = 0; i < n_points; ++i) points.push_back(test::random_vector(2, 500 + i, 3.0));
  std::vector<double> serial(n_points);
  std::vector<Vector> serial_grad(n_points, Vector(2));
  for (int i = 0; i < n_points; ++i)
    serial[i] = p.potential_and_gradient(points[i], serial_grad[i]);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Vector g(2);
      for (int rep = 0; rep < 5; ++rep)
        for (int i = 0; i < n_points; ++i)
          if (p.potential_and_gradient(points[i], g) != serial[i] || g != serial_grad[i] ||
              p.potential(points[i]) != serial[i])
            ++mismatches[t];
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(GaussianMixture, CopyWithEvaluationKeepsTheDensity) {
  const GaussianMixture fast = mixture_2d(kFast);
  ASSERT_EQ(fast.evaluation(), kFast);
  const auto shared = fast.copy_with_evaluation(kShared);
  EXPECT_EQ(shared->evaluation(), kShared);
  const auto& mixture = dynamic_cast<const GaussianMixture&>(*shared);
  EXPECT_EQ(mixture.log_weights(), fast.log_weights());
  EXPECT_EQ(shared->mean(), fast.mean());
  EXPECT_EQ(shared->covariance(), fast.covariance());
  for (int k = 0; k < 3; ++k) EXPECT_EQ(mixture.component(k).evaluation(), kShared);
  for (std::uint64_t s = 0; s < 10; ++s) {
    const Vector x = test::random_vector(2, 40 + s, 2.0);
    EXPECT_NEAR(shared->potential(x), fast.potential(x),
                1e-13 * std::max(1.0, std::fabs(fast.potential(x))));
  }
  // One kFast component makes the whole mixture kFast (one thread at a time).
  const GaussianMixture mixed = GaussianMixture::from_weights(
      {1.0, 1.0}, {Gaussian::from_variances(vec({0.0}), vec({1.0}), kShared),
                   Gaussian::from_variances(vec({1.0}), vec({1.0}), kFast)});
  EXPECT_EQ(mixed.evaluation(), kFast);
}

TEST(GaussianMixture, LogWeightsAreNormalisedWithoutUnderflow) {
  // Laplace log masses of a Stan model sit near -420: exp would underflow, the difference does not.
  const GaussianMixture p = GaussianMixture::from_log_weights(
      {-1000.0, -1001.0}, {Gaussian::from_variances(vec({0.0}), vec({1.0})),
                           Gaussian::from_variances(vec({5.0}), vec({1.0}))});
  const double w0 = 1.0 / (1.0 + std::exp(-1.0));
  EXPECT_NEAR(p.weight(0), w0, 1e-15);
  EXPECT_NEAR(p.weight(1), 1.0 - w0, 1e-15);
  EXPECT_NEAR(std::exp(p.log_weights()[0]) + std::exp(p.log_weights()[1]), 1.0, 1e-15);
  const GaussianMixture q =
      GaussianMixture::from_weights({3.0, 1.0}, {Gaussian::from_variances(vec({0.0}), vec({1.0})),
                                                 Gaussian::from_variances(vec({5.0}), vec({1.0}))});
  EXPECT_NEAR(q.weight(0), 0.75, 1e-15);
  EXPECT_NEAR(q.weight(1), 0.25, 1e-15);
}

// The error's message, which must name what is wrong.
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception";
  return "";
}

TEST(GaussianMixture, FactoriesSayWhatIsWrong) {
  const Gaussian a = Gaussian::from_variances(vec({0.0}), vec({1.0}));
  const Gaussian b = Gaussian::from_variances(vec({0.0, 1.0}), vec({1.0, 1.0}));
  EXPECT_NE(
      error_of<ConfigError>([] { GaussianMixture::from_weights({}, {}); }).find("no components"),
      std::string::npos);
  EXPECT_NE(error_of<ConfigError>([&] {
              GaussianMixture::from_weights({1.0}, {a, a});
            }).find("1 weights for 2 components"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>([&] {
              GaussianMixture::from_log_weights({0.0, 0.0}, {a, b});
            }).find("component 1 has dimension 2, component 0 1"),
            std::string::npos);
  EXPECT_NE(error_of<NumericalError>([&] {
              GaussianMixture::from_weights({1.0, 0.0}, {a, a});
            }).find("weight 1 is 0 (must be finite and > 0)"),
            std::string::npos);
  EXPECT_NE(error_of<NumericalError>([&] {
              GaussianMixture::from_weights({-1.0, 1.0}, {a, a});
            }).find("weight 0 is -1"),
            std::string::npos);
  EXPECT_THROW(GaussianMixture::from_weights({1.0, INFINITY}, {a, a}), NumericalError);
  EXPECT_THROW(GaussianMixture::from_weights({NAN, 1.0}, {a, a}), NumericalError);
  EXPECT_NE(error_of<NumericalError>([&] {
              GaussianMixture::from_log_weights({0.0, -INFINITY}, {a, a});
            }).find("log weight 1 is -inf (must be finite)"),
            std::string::npos);
  EXPECT_THROW(GaussianMixture::from_log_weights({NAN, 0.0}, {a, a}), NumericalError);
}

TEST(GaussianMixture, DescribesItself) {
  EXPECT_EQ(mixture_1d().describe(), "mixture of 2 Gaussians (d = 1; weights 0.3, 0.7)");
  EXPECT_EQ(Gaussian::from_variances(vec({0.0, 1.0}), vec({1.0, 2.0})).describe(),
            "Gaussian (d = 2, diagonal covariance)");
  EXPECT_EQ(mixture_2d().component(0).describe(), "Gaussian (d = 2, dense covariance)");
}

}  // namespace
}  // namespace pemc::densities
