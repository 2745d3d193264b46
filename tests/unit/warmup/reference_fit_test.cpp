// Pseudo-extended's reference refitted to a pooled warmup's draws (warmup/reference_fit.hpp):
// each mode the chains sit in gets their draws' mean and covariance and a log mass that is the
// log normalising constant of a Gaussian target; the other modes keep their Laplace fit.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "core/error.hpp"
#include "rng/stream.hpp"
#include "warmup/reference_fit.hpp"

namespace pemc::warmup {
namespace {

modes::Mode mode(Vector location, const Matrix& covariance, double log_mass) {
  modes::Mode m;
  m.location = std::move(location);
  m.covariance = covariance;
  m.hessian_cholesky = Eigen::LLT<Matrix>(covariance.inverse()).matrixL();
  m.log_mass = log_mass;
  return m;
}

modes::ModeSet set_of(std::vector<modes::Mode> ms) {
  modes::ModeSet s;
  s.dim = static_cast<int>(ms.front().location.size());
  s.modes = std::move(ms);
  return s;
}

// n draws of N(mean, cov) with the log density log_z + log N(x; mean, cov): a target whose log
// normalising constant is log_z.
ChainFit gaussian_fit(const Vector& mean, const Matrix& cov, double log_z, int n,
                      std::uint64_t stream) {
  const int d = static_cast<int>(mean.size());
  const Matrix l = Eigen::LLT<Matrix>(cov).matrixL();
  const double log_norm =
      -0.5 * d * std::log(2 * std::numbers::pi) - l.diagonal().array().log().sum();
  rng::Stream s(7, rng::Domain::kTest, stream, 0);
  ChainFit fit{WindowSums(d, true), 0.0};
  Vector z(d);
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    s.fill_normal(z);
    fit.sums.add(mean + l * z);
    sum += log_z + log_norm - 0.5 * z.squaredNorm();
  }
  fit.mean_log_density = sum / n;
  return fit;
}

// The log mass's tolerance for n draws in d dimensions: the mean log density's sd is
// sqrt(d / 2 / n) (a chi-square(d) / 2), half the log det's about the same, 4 sd of each; plus the
// log det's bias, -d (d + 1) / (2 n).
double log_mass_tolerance(int d, double n) {
  return 8 * std::sqrt(d / 2.0 / n) + d * (d + 1) / 2.0 / n;
}

// A 3-D Gaussian target, log Z = 2.5, whose only mode's Laplace fit is off (a mode search on a
// skewed posterior): four chains' draws give its mean, covariance and log Z.
TEST(ReferenceFit, AGaussianTargetsModeGetsItsMomentsAndLogZ) {
  const int d = 3, n = 5000;
  Vector mean(d);
  mean << 1.0, -2.0, 0.5;
  Matrix cov(d, d);
  cov << 2.0, 0.6, 0.0, 0.6, 1.0, -0.3, 0.0, -0.3, 0.5;
  const auto laplace = set_of({mode(mean + Vector::Constant(d, 1.0), 0.1 * cov, -50.0)});
  std::map<int, ChainFit> fits;
  for (int c = 0; c < 4; ++c) fits[c] = gaussian_fit(mean, cov, 2.5, n, c);
  const auto fit = fit_reference_modes(laplace, fits);
  ASSERT_EQ(fit.modes.modes.size(), 1u);
  const auto& m = fit.modes.modes[0];
  const double n_all = 4.0 * n;
  for (int i = 0; i < d; ++i) {
    EXPECT_NEAR(m.location[i], mean[i], 4 * std::sqrt(cov(i, i) / n_all));
    for (int j = 0; j < d; ++j)  // a sample covariance entry's sd: sqrt((S_ii S_jj + S_ij^2) / n)
      EXPECT_NEAR(m.covariance(i, j), cov(i, j),
                  4 * std::sqrt((cov(i, i) * cov(j, j) + cov(i, j) * cov(i, j)) / n_all));
  }
  EXPECT_NEAR(m.log_mass, 2.5, log_mass_tolerance(d, n_all));
  EXPECT_LT((m.hessian_cholesky * m.hessian_cholesky.transpose() * m.covariance -
             Matrix::Identity(d, d)).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_NE(fit.description.find("mode #1 from chains 0, 1, 2, 3 (20000 draws)"),
            std::string::npos) << fit.description;
  EXPECT_NE(fit.description.find("(Laplace -50)"), std::string::npos) << fit.description;
}

// A posterior of sd 0.001 (sblrc's coefficients): a metric's ridge of 1e-3 (5 / (n + 5)) would
// widen it about threefold and raise its log mass by several nats; the fit keeps its scale.
TEST(ReferenceFit, TinyScalesAreNotWidened) {
  const int d = 2, n = 2000;
  const Matrix cov = Matrix::Identity(d, d) * 1e-6;
  const auto laplace = set_of({mode(Vector::Ones(d), cov, 0.0)});
  std::map<int, ChainFit> fits;
  fits[0] = gaussian_fit(Vector::Ones(d), cov, -3.0, n, 0);
  const auto fit = fit_reference_modes(laplace, fits);
  const auto& m = fit.modes.modes[0];
  for (int i = 0; i < d; ++i) EXPECT_NEAR(m.covariance(i, i), 1e-6, 4 * 1e-6 * std::sqrt(2.0 / n));
  EXPECT_NEAR(m.log_mass, -3.0, log_mass_tolerance(d, n));
}

// Three 1-D modes: two chains in the one at +5, one in the one at -5, none in the middle one.
// The visited modes are refitted, the middle one keeps its Laplace fit, and the set is sorted by
// the new log masses.
TEST(ReferenceFit, EachChainRefitsItsModeAndUnvisitedModesStay) {
  const Matrix one = Matrix::Identity(1, 1);
  const auto laplace = set_of({mode(Vector::Constant(1, -5.0), one, -1.0),
                               mode(Vector::Constant(1, 0.0), one, -2.0),
                               mode(Vector::Constant(1, 5.0), one, -3.0)});
  std::map<int, ChainFit> fits;
  fits[0] = gaussian_fit(Vector::Constant(1, 5.3), 0.25 * one, 10.0, 4000, 0);
  fits[1] = gaussian_fit(Vector::Constant(1, 5.3), 0.25 * one, 10.0, 4000, 1);
  fits[2] = gaussian_fit(Vector::Constant(1, -5.0), 4.0 * one, -4.0, 4000, 2);
  const auto fit = fit_reference_modes(laplace, fits);
  ASSERT_EQ(fit.modes.modes.size(), 3u);
  const auto& heavy = fit.modes.modes[0];  // was the lightest
  EXPECT_NEAR(heavy.location[0], 5.3, 4 * 0.5 / std::sqrt(8000.0));
  EXPECT_NEAR(heavy.covariance(0, 0), 0.25, 4 * 0.25 * std::sqrt(2.0 / 8000));
  EXPECT_NEAR(heavy.log_mass, 10.0, log_mass_tolerance(1, 8000));
  const auto& middle = fit.modes.modes[1];  // untouched
  EXPECT_EQ(middle.location[0], 0.0);
  EXPECT_EQ(middle.log_mass, -2.0);
  EXPECT_EQ(middle.covariance(0, 0), 1.0);
  const auto& wide = fit.modes.modes[2];
  EXPECT_NEAR(wide.location[0], -5.0, 4 * 2.0 / std::sqrt(4000.0));
  EXPECT_NEAR(wide.covariance(0, 0), 4.0, 4 * 4.0 * std::sqrt(2.0 / 4000));
  EXPECT_NEAR(wide.log_mass, -4.0, log_mass_tolerance(1, 4000));
  EXPECT_NE(fit.description.find("mode #3 from chains 0, 1 (8000 draws)"), std::string::npos)
      << fit.description;
  EXPECT_NE(fit.description.find("mode #1 from chain 2 (4000 draws)"), std::string::npos)
      << fit.description;
}

// A chain beyond every mode's region (here 30 sd from the narrow mode at 0 and 97 from the one at
// 100) refits the mode whose Laplace fit gives it the highest density.
TEST(ReferenceFit, AChainOutsideEveryModeRefitsTheNearest) {
  const Matrix one = Matrix::Identity(1, 1);
  const auto laplace = set_of({mode(Vector::Constant(1, 0.0), 0.01 * one, 0.0),
                               mode(Vector::Constant(1, 100.0), one, -5.0)});
  std::map<int, ChainFit> fits;
  fits[3] = gaussian_fit(Vector::Constant(1, 3.0), one, 0.0, 1000, 0);
  const auto fit = fit_reference_modes(laplace, fits);
  ASSERT_EQ(fit.modes.modes.size(), 2u);
  EXPECT_NEAR(fit.modes.modes[0].location[0], 3.0, 0.2);
  EXPECT_EQ(fit.modes.modes[1].location[0], 100.0);
  EXPECT_NE(fit.description.find("mode #1 from chain 3"), std::string::npos) << fit.description;
}

// Diagonal sums (a target above the dense limit), or dense ones from fewer than 10 draws per
// dimension, keep the Laplace fit's correlations, scaled to the draws' variances.
TEST(ReferenceFit, FewOrDiagonalSumsKeepTheLaplaceCorrelations) {
  Matrix laplace_cov(2, 2);
  laplace_cov << 1.0, 0.5, 0.5, 1.0;  // correlation 0.5
  const auto laplace = set_of({mode(Vector::Zero(2), laplace_cov, 0.0)});
  Matrix cov(2, 2);
  cov << 1.0, 0.0, 0.0, 4.0;  // the draws': uncorrelated, sds 1 and 2
  for (const int n : {4000, 19}) {
    auto draws = gaussian_fit(Vector::Zero(2), cov, 1.0, n, 0);
    for (const bool diagonal : {true, false}) {
      if (!diagonal && n >= 20) continue;  // 20 draws and more: dense, the first test's case
      std::map<int, ChainFit> fits;
      fits[0] = ChainFit{diagonal ? draws.sums.diagonal() : draws.sums, draws.mean_log_density};
      const auto fit = fit_reference_modes(laplace, fits);
      const auto& m = fit.modes.modes[0];
      const auto& m2 = draws.sums.m2();
      const std::vector<double> variances{m2(0, 0) / (n - 1), m2(1, 1) / (n - 1)};
      EXPECT_DOUBLE_EQ(m.covariance(0, 0), variances[0]);
      EXPECT_DOUBLE_EQ(m.covariance(1, 1), variances[1]);
      EXPECT_NEAR(m.covariance(0, 1), 0.5 * std::sqrt(variances[0] * variances[1]), 1e-14);
      if (n == 4000) EXPECT_NEAR(m.covariance(1, 1), 4.0, 4 * 4.0 * std::sqrt(2.0 / 4000));
    }
  }
}

// No mode found (a centred hierarchical model's density is unbounded as tau -> 0): every chain's
// draws make one Gaussian, its log mass the target's log Z; with nothing to fit, no mode stays.
TEST(ReferenceFit, WithoutModesTheChainsMakeOneGaussian) {
  modes::ModeSet none;
  none.dim = 2;
  Matrix cov(2, 2);
  cov << 1.0, 0.8, 0.8, 2.0;
  std::map<int, ChainFit> fits;
  for (int c = 0; c < 3; ++c) fits[c] = gaussian_fit(Vector::Constant(2, 4.0), cov, -7.0, 3000, c);
  const auto fit = fit_reference_modes(none, fits);
  ASSERT_EQ(fit.modes.modes.size(), 1u);
  const auto& m = fit.modes.modes[0];
  EXPECT_NEAR(m.location[0], 4.0, 4 * std::sqrt(1.0 / 9000));
  EXPECT_NEAR(m.covariance(0, 1), 0.8, 4 * std::sqrt((2.0 + 0.64) / 9000));
  EXPECT_NEAR(m.log_mass, -7.0, log_mass_tolerance(2, 9000));
  EXPECT_NE(fit.description.find("one Gaussian from chains 0, 1, 2 (9000 draws) (the mode search "
                                 "found no mode)"),
            std::string::npos)
      << fit.description;
  EXPECT_TRUE(fit_reference_modes(none, {}).modes.modes.empty());
  std::map<int, ChainFit> too_few;
  too_few[0] = gaussian_fit(Vector::Zero(2), cov, 0.0, 1, 0);  // one draw: no covariance
  EXPECT_TRUE(fit_reference_modes(none, too_few).modes.modes.empty());
  EXPECT_TRUE(fit_reference_modes(none, too_few).description.empty());
}

TEST(ReferenceFit, NothingToFitLeavesTheModesAndAMisfitIsRefused) {
  const Matrix one = Matrix::Identity(1, 1);
  const auto laplace = set_of({mode(Vector::Constant(1, 2.0), one, -1.0)});
  const auto same = fit_reference_modes(laplace, {});
  EXPECT_EQ(same.modes.modes[0].location[0], 2.0);
  EXPECT_TRUE(same.description.empty());

  std::map<int, ChainFit> fits;
  fits[0] = gaussian_fit(Vector::Zero(1), one, 0.0, 100, 0);
  auto stand_in = modes::stand_in_mode_set(1);
  EXPECT_EQ(fit_reference_modes(stand_in, fits).modes.modes[0].location[0], 0.0);
  EXPECT_TRUE(fit_reference_modes(stand_in, fits).description.empty());

  fits[1] = gaussian_fit(Vector::Zero(2), Matrix::Identity(2, 2), 0.0, 100, 1);
  EXPECT_THROW(fit_reference_modes(laplace, fits), DataError);
}

}  // namespace
}  // namespace pemc::warmup
