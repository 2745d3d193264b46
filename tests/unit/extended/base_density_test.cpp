// Tests of the continuous-tempering base densities (src/extended/base_density*.hpp): the Gaussian
// psi's gradient against finite differences, the L-BFGS mode finder, Laplace fits (exact
// for Gaussian targets), the eq. (25) moment matching, mean-field Boltzmann fits (ELBO <= log Z by
// enumeration, fixed points), and the config entry point (file loading, field-named errors).
#include "extended/base_density.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "densities/gaussian.hpp"
#include "extended/base_density_fit.hpp"
#include "pemc/v1/tempering.pb.h"
#include "support/gradient_check.hpp"
#include "targets/boltzmann.hpp"
#include "targets/gaussian.hpp"
#include "targets/mixture.hpp"
#include "support/random_matrices.hpp"

namespace pemc::extended {
namespace {

using test::random_spd;
using test::random_vector;

// Exposes a Gaussian as a Target for the shared gradient check.
class BaseAsTarget final : public targets::Target {
 public:
  explicit BaseAsTarget(densities::Gaussian b) : b_(std::move(b)) {}
  int dim() const override { return b_.dim(); }
  std::string name() const override { return "base"; }
  double potential(ConstVectorRef x) const override { return b_.potential(x); }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    return b_.potential_and_gradient(x, g);
  }

 private:
  densities::Gaussian b_;
};

TEST(BaseDensityPsi, GradientMatchesFiniteDifferences) {
  const int d = 30;
  const BaseAsTarget t(densities::Gaussian::from_covariance(random_vector(d, 3), random_spd(d, 4)));
  testing::expect_gradient_matches(t, random_vector(d, 5, 1.5));
}

// ---- L-BFGS and Laplace -------------------------------------------------------------------------

// Rosenbrock function in 2-D: minimum 0 at (1, 1), a curved narrow valley.
class Rosenbrock final : public targets::Target {
 public:
  int dim() const override { return 2; }
  std::string name() const override { return "rosenbrock"; }
  double potential(ConstVectorRef x) const override {
    return 100.0 * std::pow(x[1] - x[0] * x[0], 2) + std::pow(1.0 - x[0], 2);
  }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    const double a = x[1] - x[0] * x[0];
    g[0] = -400.0 * a * x[0] - 2.0 * (1.0 - x[0]);
    g[1] = 200.0 * a;
    return potential(x);
  }
};

TEST(Lbfgs, SolvesRosenbrock) {
  Vector x0(2);
  x0 << -1.2, 1.0;
  const auto r = minimize_lbfgs(Rosenbrock(), x0, {.max_iterations = 500, .gradient_tolerance = 1e-9});
  EXPECT_TRUE(r.converged) << r.message;
  EXPECT_NEAR(r.x[0], 1.0, 1e-8);
  EXPECT_NEAR(r.x[1], 1.0, 1e-8);
}

TEST(Lbfgs, FindsTheMeanOfACorrelatedGaussian) {
  const int d = 20;
  const Vector mu = random_vector(d, 8, 3.0);
  const targets::Gaussian g(mu, random_spd(d, 9));
  const auto r = minimize_lbfgs(g, Vector::Zero(d));
  EXPECT_TRUE(r.converged) << r.message;
  EXPECT_LT((r.x - mu).cwiseAbs().maxCoeff(), 1e-5);
}

TEST(Lbfgs, ThrowsAtANonFiniteStart) {
  Vector x0(2);
  x0 << std::nan(""), 0.0;
  EXPECT_THROW(minimize_lbfgs(Rosenbrock(), x0), NumericalError);
}

TEST(Laplace, IsExactForAGaussianTarget) {
  const int d = 6;
  const Matrix cov = random_spd(d, 10);
  const Vector mu = random_vector(d, 11);
  const targets::Gaussian g(mu, cov);
  const auto fit = laplace_fit(g, mu, 1e-5);
  EXPECT_LT((fit.covariance - cov).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_NEAR(fit.log_evidence, *g.truth().log_z, 1e-7);
}

TEST(Laplace, RejectsASaddle) {
  // The Rosenbrock Hessian at (0, 0) is diag(2, 200) (a minimum of the quadratic part), but at a
  // point off the valley, e.g. (0, 1), it is indefinite: d2/dx0^2 = 1200 x0^2 - 400 x1 + 2 < 0.
  Vector x(2);
  x << 0.0, 1.0;
  EXPECT_THROW(laplace_fit(Rosenbrock(), x, 1e-5), NumericalError);
}

std::shared_ptr<targets::GaussianMixture> bimodal() {
  using C = targets::GaussianMixture::Component;
  return std::make_shared<targets::GaussianMixture>(std::vector<C>{
      C{0.5, Vector::Constant(1, -1.0), Vector::Constant(1, 0.1)},
      C{0.5, Vector::Constant(1, 1.0), Vector::Constant(1, 0.02)}});
}

TEST(ModeSearch, FindsBothModesOfTheBimodalMixture) {
  const auto target = bimodal();
  ModeSearchOptions o;
  o.n_starts = 20;
  o.init_radius = 3.0;
  const auto fits = find_laplace_fits(*target, o);
  ASSERT_EQ(fits.size(), 2u);
  // Separated components: each Laplace fit is its component, l_i = log 0.5 (to e^-50-ish terms).
  std::vector<double> modes = {fits[0].mean[0], fits[1].mean[0]};
  std::sort(modes.begin(), modes.end());
  EXPECT_NEAR(modes[0], -1.0, 1e-6);
  EXPECT_NEAR(modes[1], 1.0, 1e-6);
  for (const auto& f : fits) {
    EXPECT_NEAR(f.log_evidence, std::log(0.5), 1e-6);
    EXPECT_NEAR(f.covariance(0, 0), f.mean[0] < 0 ? 0.1 : 0.02, 1e-6);
  }
  // eq. (25): moment matching gives the paper's Figure 1 base, N(0, 1.06), log zeta = log Z = 0.
  const auto mm = moment_match(fits);
  EXPECT_NEAR(mm.mean[0], 0.0, 1e-6);
  EXPECT_NEAR(mm.covariance(0, 0), 1.06, 1e-6);
  EXPECT_NEAR(mm.log_evidence, 0.0, 1e-6);
}

TEST(MomentMatch, MatchesTheMixtureFormula) {
  LocalGaussianFit a{Vector::Constant(2, 1.0), Matrix::Identity(2, 2), std::log(3.0)};
  LocalGaussianFit b{Vector::Constant(2, -2.0), 2.0 * Matrix::Identity(2, 2), std::log(1.0)};
  const auto mm = moment_match({a, b});
  // weights 3/4, 1/4: mean 0.75 - 0.5 = 0.25; var = 0.75 (1 + 0.75^2) + 0.25 (2 + 2.25^2).
  EXPECT_NEAR(mm.mean[0], 0.25, 1e-15);
  EXPECT_NEAR(mm.covariance(0, 0), 0.75 * (1 + 0.5625) + 0.25 * (2 + 5.0625), 1e-14);
  EXPECT_NEAR(mm.covariance(0, 1), 0.75 * 0.5625 + 0.25 * 5.0625, 1e-14);
  EXPECT_NEAR(mm.log_evidence, std::log(4.0), 1e-15);
  EXPECT_THROW(moment_match({}), NumericalError);
}

TEST(Variational, RecoversADiagonalGaussianTarget) {
  // For a diagonal Gaussian target the mean-field family contains it: q = target, ELBO = log Z
  // (the per-draw -phi(x) - log q(x) is then nearly constant, so the ELBO estimate is sharp).
  const int d = 4;
  Vector var(d);
  var << 0.5, 1.0, 2.0, 0.1;
  const Vector mu = random_vector(d, 21, 2.0);
  const targets::Gaussian g(mu, var.asDiagonal());
  VariationalOptions o;
  o.iterations = 4000;
  o.seed = 3;
  const auto fit = fit_mean_field_gaussian(g, o);
  // Stochastic optimisation: the averaged iterates are within a few percent of the optimum.
  EXPECT_LT((fit.mean - mu).cwiseAbs().maxCoeff(), 0.03);
  for (int i = 0; i < d; ++i) EXPECT_NEAR(fit.covariance(i, i) / var[i], 1.0, 0.05) << i;
  EXPECT_NEAR(fit.log_evidence, *g.truth().log_z, 0.01);
  EXPECT_LE(fit.log_evidence, *g.truth().log_z + 1e-3);  // a lower bound (up to MC error)
}

TEST(Variational, ElboIsALowerBoundForACorrelatedGaussian) {
  // Mean-field q of N(mu, Sigma) has precision-diagonal variances 1 / (Sigma^{-1})_ii and ELBO
  // = log Z - KL(q || p) with KL = 0.5 (sum log (Sigma^{-1})_ii - log det Sigma^{-1}).
  Matrix cov(2, 2);
  cov << 1.0, 0.8, 0.8, 1.0;
  const targets::Gaussian g(Vector::Zero(2), cov);
  const Matrix prec = cov.inverse();
  const double kl = 0.5 * (std::log(prec(0, 0)) + std::log(prec(1, 1)) - std::log(prec.determinant()));
  VariationalOptions o;
  o.iterations = 4000;
  const auto fit = fit_mean_field_gaussian(g, o);
  EXPECT_NEAR(fit.covariance(0, 0), 1.0 / prec(0, 0), 0.02);
  EXPECT_NEAR(fit.log_evidence, *g.truth().log_z - kl, 0.02);
}

// ---- mean-field Boltzmann -----------------------------------------------------------------------

TEST(MeanField, FitsAreFixedPointsAndLowerBoundLogZ) {
  const int db = 8, d = 5;
  std::mt19937_64 gen(12);
  std::normal_distribution<double> n(0.0, 1.0);
  Matrix q(db, d);
  for (int i = 0; i < db; ++i)
    for (int j = 0; j < d; ++j) q(i, j) = 0.8 * n(gen);
  const Vector b = random_vector(db, 13, 0.1);
  const targets::BoltzmannRelaxation target(q, b);
  const double log_z = *target.truth().log_z;
  MeanFieldOptions o;
  o.n_starts = 30;
  const auto fits = boltzmann_mean_field_fits(target, o);
  ASSERT_FALSE(fits.empty());
  for (const auto& f : fits) {
    EXPECT_LE(f.log_evidence, log_z + 1e-12);  // the ELBO is a lower bound (eq. (52) maps both)
    EXPECT_GT(f.log_evidence, log_z - 10.0);
    EXPECT_TRUE(Eigen::LLT<Matrix>(f.covariance).info() == Eigen::Success);
  }
  // Sorted by decreasing evidence.
  for (std::size_t i = 1; i < fits.size(); ++i) EXPECT_GE(fits[i - 1].log_evidence, fits[i].log_evidence);
  // Start 0 re-run by hand converges to a fixed point m = tanh(W m + b), W = offdiag(QQ'), and one
  // of the fits has mean Q'm.
  Matrix w = q * q.transpose();
  w.diagonal().setZero();
  rng::Stream stream(0, rng::Domain::kGenerator, kMeanFieldStreamId, 0);
  Vector m(db);
  for (int i = 0; i < db; ++i) m[i] = 2.0 * stream.uniform() - 1.0;
  for (int sweep = 0; sweep < 1000; ++sweep)
    for (int i = 0; i < db; ++i) m[i] = std::tanh(w.row(i).dot(m) + b[i]);
  EXPECT_LT((m - (w * m + b).array().tanh().matrix()).cwiseAbs().maxCoeff(), 1e-9);
  bool found = false;
  for (const auto& f : fits) found |= (f.mean - q.transpose() * m).cwiseAbs().maxCoeff() < 1e-6;
  EXPECT_TRUE(found);
}

TEST(Bootstrap, RefitUsesTheRaoBlackwellisedEstimates) {
  estimators::TemperingRbAccumulator acc;
  // Equal w0, w1 on two points: log Z = log zeta, mean (0.5, 1), covariance of the two points.
  Vector a(2), b(2);
  a << 0.0, 0.0;
  b << 1.0, 2.0;
  acc.add(a, 0.0, 0.0);
  acc.add(b, 0.0, 0.0);
  acc.add(Vector::Constant(2, 0.5), 0.0, -kInf);  // w1 = 0: moves only the base estimates
  EXPECT_THROW(refit_base(acc, 1.5), NumericalError);  // a rank-1 covariance
  acc.add(Vector::Constant(2, 0.5) + Vector::Unit(2, 0), 0.0, 0.0);
  const auto base = refit_base(acc, 1.5);
  EXPECT_NEAR(base.log_zeta, 1.5 + std::log(3.0) - std::log(4.0), 1e-14);
  EXPECT_LT((base.density->mean() - acc.mean()).cwiseAbs().maxCoeff(), 1e-15);
  EXPECT_LT((base.density->covariance() - acc.covariance()).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_THROW(refit_base(estimators::TemperingRbAccumulator(2), 0.0), NumericalError);
}

// ---- config entry point -------------------------------------------------------------------------

std::string shared_dir() { return PEMC_SHARED_DIR; }

TEST(MakeBaseDensity, UserGaussianFromFields) {
  const auto target = bimodal();
  v1::BaseDensityConfig c;
  c.mutable_gaussian()->add_mean(0.0);
  c.mutable_gaussian()->add_variance(1.06);
  c.mutable_gaussian()->set_log_zeta(0.0);
  const auto base = make_base_density(c, *target, "base");
  EXPECT_EQ(base.density->dim(), 1);
  EXPECT_NEAR(base.density->covariance()(0, 0), 1.06, 1e-15);
  EXPECT_EQ(base.log_zeta, 0.0);
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(MakeBaseDensity, ErrorsNameTheField) {
  const auto target = bimodal();
  v1::BaseDensityConfig c;
  EXPECT_NE(error_of([&] { make_base_density(c, *target, "sampler.ct.base"); }).find("sampler.ct.base"),
            std::string::npos);
  c.mutable_gaussian()->add_mean(0.0);
  EXPECT_NE(error_of([&] { make_base_density(c, *target, "b"); }).find("b.gaussian.log_zeta"),
            std::string::npos);
  c.mutable_gaussian()->set_log_zeta(0.0);
  c.mutable_gaussian()->add_mean(1.0);
  EXPECT_NE(error_of([&] { make_base_density(c, *target, "b"); }).find("b.gaussian.mean"),
            std::string::npos);
  c.mutable_gaussian()->mutable_mean()->RemoveLast();
  c.mutable_gaussian()->add_variance(1.0);
  c.mutable_gaussian()->add_covariance(1.0);
  EXPECT_NE(error_of([&] { make_base_density(c, *target, "b"); }).find("at most one"), std::string::npos);
  c.mutable_gaussian()->clear_variance();
  c.mutable_gaussian()->set_covariance(0, -1.0);
  EXPECT_NE(error_of([&] { make_base_density(c, *target, "b"); }).find("positive definite"),
            std::string::npos);
  v1::BaseDensityConfig mf;
  mf.mutable_boltzmann_mean_field();
  EXPECT_NE(error_of([&] { make_base_density(mf, *target, "b"); }).find("needs a boltzmann target"),
            std::string::npos);
  v1::BaseDensityConfig vb;
  vb.mutable_variational()->add_init_mean(0.0);
  vb.mutable_variational()->add_init_mean(0.0);
  EXPECT_NE(error_of([&] { make_base_density(vb, *target, "b"); }).find("b.variational.init_mean"),
            std::string::npos);
  vb.mutable_variational()->clear_init_mean();
  vb.mutable_variational()->set_learning_rate(0.0);
  EXPECT_NE(error_of([&] { make_base_density(vb, *target, "b"); }).find("b.variational.learning_rate"),
            std::string::npos);
  v1::BaseDensityConfig lp;
  lp.mutable_laplace()->mutable_search()->set_n_starts(0);
  EXPECT_NE(error_of([&] { make_base_density(lp, *target, "b"); }).find("b.laplace.search.n_starts"),
            std::string::npos);
}

TEST(MakeBaseDensity, LoadsTheShippedBoltzmannBase) {
  const std::string dir = shared_dir() + "/data/boltzmann-pe28/";
  if (!std::filesystem::exists(dir + "base_mean.txt")) GTEST_SKIP() << "no shared data";
  const targets::Gaussian stand_in(Vector::Zero(27), Matrix::Identity(27, 27));
  v1::BaseDensityConfig c;
  auto* g = c.mutable_gaussian();
  g->set_mean_file(dir + "base_mean.txt");
  g->set_cov_chol_file(dir + "base_cov_chol.txt");
  g->set_log_zeta(162.3662);
  const auto base = make_base_density(c, stand_in, "b");
  EXPECT_EQ(base.density->dim(), 27);
  EXPECT_NEAR(base.density->mean()[0], -0.001711918385433863, 1e-18);
  const auto& gaussian = dynamic_cast<const densities::Gaussian&>(*base.density);
  EXPECT_NEAR(gaussian.cholesky()(0, 0), 1.0000016694525733, 1e-16);
  EXPECT_NEAR(gaussian.cholesky()(1, 0), -2.876665010827136e-06, 1e-21);
  EXPECT_EQ(gaussian.cholesky()(0, 1), 0.0);
  // Wrong count: the mean file read as a 28-dimensional base.
  const targets::Gaussian wrong(Vector::Zero(28), Matrix::Identity(28, 28));
  EXPECT_THROW(make_base_density(c, wrong, "b"), DataError);
}

TEST(MakeBaseDensity, RejectsAnUpperTriangularFactorFile) {
  const auto path = std::filesystem::temp_directory_path() / "pemc_ct_upper_chol.txt";
  {
    std::ofstream f(path);
    f << "1 0.5\n0 1\n";
  }
  const targets::Gaussian t(Vector::Zero(2), Matrix::Identity(2, 2));
  v1::BaseDensityConfig c;
  c.mutable_gaussian()->add_mean(0.0);
  c.mutable_gaussian()->add_mean(0.0);
  c.mutable_gaussian()->set_cov_chol_file(path.string());
  c.mutable_gaussian()->set_log_zeta(0.0);
  EXPECT_NE(error_of([&] { make_base_density(c, t, "b"); }).find("above the diagonal"),
            std::string::npos);
  std::filesystem::remove(path);
}

TEST(MakeBaseDensity, LaplaceMomentMatchedOnTheBimodalMixture) {
  const auto target = bimodal();
  v1::BaseDensityConfig c;
  c.mutable_laplace()->set_moment_match_modes(true);
  c.mutable_laplace()->mutable_search()->set_n_starts(20);
  c.mutable_laplace()->mutable_search()->set_init_radius(3.0);
  const auto base = make_base_density(c, *target, "b");
  EXPECT_NEAR(base.density->mean()[0], 0.0, 1e-6);
  EXPECT_NEAR(base.density->covariance()(0, 0), 1.06, 1e-6);
  EXPECT_NEAR(base.log_zeta, 0.0, 1e-6);
  c.mutable_laplace()->set_log_zeta(-0.5);
  EXPECT_EQ(make_base_density(c, *target, "b").log_zeta, -0.5);
}

}  // namespace
}  // namespace pemc::extended
