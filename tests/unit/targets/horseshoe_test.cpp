#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <set>

#include "core/error.hpp"
#include "pemc/v1/config.pb.h"
#include "rng/stream.hpp"
#include "support/gradient_check.hpp"
#include "targets/horseshoe_logistic.hpp"

namespace pemc::targets {
namespace {

constexpr double kPi = std::numbers::pi;

std::string colon_path() { return std::string(PEMC_SHARED_DIR) + "/data/microarray/colon.csv"; }

// rows x (1 + p): label column from a logistic model with two active covariates, N(0,1) covariates.
CsvTable synthetic(int rows, int p, std::uint64_t seed) {
  rng::Stream s(seed, rng::Domain::kTest, 0, 0);
  CsvTable t;
  t.source = "synthetic.csv";
  t.header.push_back("y");
  for (int j = 0; j < p; ++j) t.header.push_back("x" + std::to_string(j + 1));
  t.values.resize(rows, p + 1);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < p; ++j) t.values(i, 1 + j) = s.normal();
    const double eta = 0.3 + 1.5 * t.values(i, 1) - 2.0 * t.values(i, 2);
    t.values(i, 0) = s.uniform() < 1.0 / (1.0 + std::exp(-eta)) ? 1.0 : 0.0;
  }
  return t;
}

HorseshoeLogisticOptions small_options() {
  HorseshoeLogisticOptions o;
  o.split_seed = 7;
  o.p0 = 2.0;
  return o;
}

// A state drawn around the prior's bulk: log tau near log tau0 (spread `tau_spread`), unit-scale rest.
Vector random_state(const HorseshoeLogistic& t, std::uint64_t id, double tau_spread = 2.0) {
  rng::Stream s(11, rng::Domain::kTest, id, 0);
  const Eigen::Index p = t.n_covariates();
  Vector x(t.dim());
  for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = s.normal();
  x[2 * p + 1] = std::log(t.tau0()) + tau_spread * s.normal() + 2.0;
  return x;
}

// -(log prior + log likelihood + log Jacobian), written from the model's densities term by term.
double longhand_potential(const CsvTable& data, const HorseshoeLogistic& t, const Vector& x) {
  const auto& o = t.options();
  const Eigen::Index p = t.n_covariates();
  const double n = static_cast<double>(t.n_train());
  const double tau0 = o.p0 / (static_cast<double>(p) - o.p0) * o.sigma / std::sqrt(n);
  const double b0 = x[0];
  const double tau = std::exp(x[2 * p + 1]);
  const double caux = std::exp(x[2 * p + 2]);
  const double c = o.slab_scale * std::sqrt(caux);
  const auto log_normal = [](double v, double sd) {
    return -0.5 * std::log(2.0 * kPi * sd * sd) - v * v / (2.0 * sd * sd);
  };
  const auto log_half_cauchy = [](double v, double scale) {
    return std::log(2.0 / (kPi * scale * (1.0 + (v / scale) * (v / scale))));
  };
  const double a = o.slab_df / 2.0, b = o.slab_df / 2.0;
  double log_prior = log_normal(b0, o.intercept_scale) + log_half_cauchy(tau, tau0) +
                     (a * std::log(b) - std::lgamma(a) - (a + 1.0) * std::log(caux) - b / caux);
  double log_jac = std::log(tau) + std::log(caux);
  Vector beta(p);
  for (Eigen::Index j = 0; j < p; ++j) {
    const double z = x[1 + j];
    const double lambda = std::exp(x[1 + p + j]);
    log_prior += log_normal(z, 1.0) + log_half_cauchy(lambda, 1.0);
    log_jac += std::log(lambda);
    const double lt2 = c * c * lambda * lambda / (c * c + tau * tau * lambda * lambda);
    beta[j] = z * std::sqrt(lt2) * tau;
  }
  double log_lik = 0.0;
  for (Eigen::Index r : t.train_rows()) {
    const double eta = b0 + data.values.row(r).tail(p).dot(beta);
    const double prob = 1.0 / (1.0 + std::exp(-eta));
    const double y = data.values(r, 0);
    log_lik += y * std::log(prob) + (1.0 - y) * std::log(1.0 - prob);
  }
  return -(log_prior + log_lik + log_jac);
}

TEST(Horseshoe, DimensionsAndTau0) {
  const CsvTable data = synthetic(20, 5, 1);
  const HorseshoeLogistic t(data, small_options());
  EXPECT_EQ(t.dim(), 13);
  EXPECT_EQ(t.n_covariates(), 5);
  EXPECT_EQ(t.n_train(), 16);  // round(0.8 * 20)
  EXPECT_EQ(t.n_test(), 4);
  EXPECT_DOUBLE_EQ(t.tau0(), 2.0 / 3.0 * 2.0 / 4.0);
  EXPECT_EQ(t.name(), "horseshoe_logistic");
}

TEST(Horseshoe, PotentialMatchesLonghandFormula) {
  const CsvTable data = synthetic(20, 5, 2);
  HorseshoeLogisticOptions o = small_options();
  o.sigma = 1.5;  // non-default values so each option is exercised
  o.slab_scale = 1.7;
  o.slab_df = 4.5;
  o.intercept_scale = 3.0;
  const HorseshoeLogistic t(data, o);
  for (std::uint64_t id = 0; id < 5; ++id) {
    const Vector x = random_state(t, id);
    const double expected = longhand_potential(data, t, x);
    EXPECT_NEAR(t.potential(x), expected, 1e-11 * std::max(1.0, std::fabs(expected))) << "point " << id;
  }
}

TEST(Horseshoe, CoefficientsMatchDefinition) {
  const CsvTable data = synthetic(20, 5, 3);
  const HorseshoeLogistic t(data, small_options());
  const Vector x = random_state(t, 4);
  const Vector beta = t.coefficients(x);
  const double tau = std::exp(x[11]), c = 2.0 * std::sqrt(std::exp(x[12]));
  for (int j = 0; j < 5; ++j) {
    const double lambda = std::exp(x[6 + j]);
    const double expected = x[1 + j] * tau * c * lambda / std::sqrt(c * c + tau * tau * lambda * lambda);
    EXPECT_NEAR(beta[j], expected, 1e-14 * std::max(1.0, std::fabs(expected)));
  }
}

TEST(Horseshoe, GradientMatchesFiniteDifferencesSynthetic) {
  const CsvTable data = synthetic(20, 5, 4);
  const HorseshoeLogistic t(data, small_options());
  for (std::uint64_t id = 0; id < 6; ++id) pemc::testing::expect_gradient_matches(t, random_state(t, id));
  // Extreme local scales: w -> 1 (slab regime) and w -> 0 (deep shrinkage) on different coordinates.
  Vector x = random_state(t, 99);
  x[6] = 12.0;
  x[7] = -12.0;
  x[11] = 1.0;
  pemc::testing::expect_gradient_matches(t, x);
}

TEST(Horseshoe, GradientMatchesFiniteDifferencesColon) {
  HorseshoeLogisticOptions o;
  o.split_seed = 3;
  o.p0 = 3.0;
  const HorseshoeLogistic t(load_numeric_csv(colon_path()), o);
  ASSERT_EQ(t.dim(), 4003);
  // log tau well above log tau0 so that the likelihood's gradient is not negligible. |U| is O(1e4)
  // here, so the central differences carry a rounding error near eps |U| / h ~ 1e-7: tolerance 1e-5.
  Vector x = random_state(t, 5, 0.0);
  x[2 * 2000 + 1] = std::log(t.tau0()) + 5.0;
  Vector g(t.dim());
  t.potential_and_gradient(x, g);
  EXPECT_GT(g.segment(1, 2000).cwiseAbs().maxCoeff(), 1e-3);  // the data do move the z gradients
  pemc::testing::expect_gradient_matches(t, x, 1e-5);
}

TEST(Horseshoe, ExtremeLocalScalesStayFinite) {
  // lambda = e^{+-800} overflows/underflows a double, yet the density there is finite:
  // the potential and gradient must be finite too (no inf - inf or 0 * inf on the way).
  const CsvTable data = synthetic(20, 5, 9);
  const HorseshoeLogistic t(data, small_options());
  Vector x = random_state(t, 30);
  x[6] = 800.0;
  x[7] = -800.0;
  Vector g(t.dim());
  const double u = t.potential_and_gradient(x, g);
  EXPECT_TRUE(std::isfinite(u));
  EXPECT_TRUE(g.allFinite()) << g.transpose();
  EXPECT_NEAR(u, t.potential(x), 1e-10 * std::fabs(u));
  EXPECT_NEAR(t.coefficients(x)[0], x[1] * 2.0 * std::exp(0.5 * x[12]), 1e-12);  // beta_1 -> z c (slab)
  EXPECT_LT(std::fabs(t.coefficients(x)[1]), 1e-300);                            // lambda ~ 0: shrunk
}

TEST(Horseshoe, SplitIsDeterministicDisjointAndCovering) {
  const CsvTable data = synthetic(20, 5, 5);
  const HorseshoeLogistic a(data, small_options());
  const HorseshoeLogistic b(data, small_options());
  EXPECT_EQ(a.train_rows(), b.train_rows());
  EXPECT_EQ(a.test_rows(), b.test_rows());

  std::set<Eigen::Index> all(a.train_rows().begin(), a.train_rows().end());
  for (Eigen::Index r : a.test_rows()) EXPECT_TRUE(all.insert(r).second) << "row " << r << " in both sets";
  EXPECT_EQ(all.size(), 20u);
  EXPECT_EQ(*all.begin(), 0);
  EXPECT_EQ(*all.rbegin(), 19);
  EXPECT_TRUE(std::is_sorted(a.train_rows().begin(), a.train_rows().end()));

  // The documented recipe: Fisher-Yates on Stream(split_seed, kDataSplit, 0, 0).
  std::vector<Eigen::Index> perm(20);
  std::iota(perm.begin(), perm.end(), 0);
  rng::Stream s(7, rng::Domain::kDataSplit, 0, 0);
  for (std::size_t i = 19; i > 0; --i) std::swap(perm[i], perm[s.below(i + 1)]);
  std::vector<Eigen::Index> train(perm.begin(), perm.begin() + 16);
  std::sort(train.begin(), train.end());
  EXPECT_EQ(a.train_rows(), train);

  HorseshoeLogisticOptions other = small_options();
  other.split_seed = 8;
  const HorseshoeLogistic c(data, other);
  EXPECT_NE(a.test_rows(), c.test_rows());

  other.train_fraction = 0.75;  // 15 of 20
  EXPECT_EQ(HorseshoeLogistic(data, other).n_train(), 15);
}

TEST(Horseshoe, ColonSplitSizes) {
  HorseshoeLogisticOptions o;
  o.p0 = 3.0;
  const HorseshoeLogistic t(load_numeric_csv(colon_path()), o);
  EXPECT_EQ(t.n_train(), 50);  // round(0.8 * 62)
  EXPECT_EQ(t.n_test(), 12);
}

TEST(Horseshoe, LogPredictiveDensityMatchesLonghand) {
  const CsvTable data = synthetic(20, 5, 6);
  const HorseshoeLogistic t(data, small_options());
  std::vector<Vector> draws;
  for (std::uint64_t id = 0; id < 3; ++id) draws.push_back(random_state(t, 20 + id));

  double expected = 0.0;
  for (std::size_t i = 0; i < t.test_rows().size(); ++i) {
    const Eigen::Index r = t.test_rows()[i];
    const double y = data.values(r, 0);
    double mean_prob = 0.0;
    for (const Vector& d : draws) {
      const double eta = d[0] + data.values.row(r).tail(5).dot(t.coefficients(d));
      const double prob1 = 1.0 / (1.0 + std::exp(-eta));
      mean_prob += (y == 1.0 ? prob1 : 1.0 - prob1) / 3.0;
    }
    expected += std::log(mean_prob);
  }
  EXPECT_NEAR(t.log_predictive_density(draws), expected, 1e-12 * std::max(1.0, std::fabs(expected)));

  const Vector ll = t.test_log_likelihoods(draws[0]);
  ASSERT_EQ(ll.size(), 4);
  for (std::size_t i = 0; i < 4; ++i) {
    const Eigen::Index r = t.test_rows()[i];
    const double eta = draws[0][0] + data.values.row(r).tail(5).dot(t.coefficients(draws[0]));
    const double prob1 = 1.0 / (1.0 + std::exp(-eta));
    EXPECT_NEAR(ll[static_cast<Eigen::Index>(i)], std::log(data.values(r, 0) == 1.0 ? prob1 : 1.0 - prob1), 1e-12);
  }
  EXPECT_THROW(t.log_predictive_density({}), NumericalError);
}

TEST(Horseshoe, LogPredictiveHookMatchesTestLikelihoodsAndLogPredictiveDensity) {
  // The Target hook reports use (log p(y_i | theta) per test row) must agree with the horseshoe's
  // own test_log_likelihoods, and the unit-weight average of its exponentials over draws with
  // log_predictive_density.
  const CsvTable data = synthetic(30, 6, 8);
  const HorseshoeLogistic t(data, small_options());
  const Target& base = t;
  ASSERT_EQ(base.n_test_points(), 6);
  std::vector<Vector> draws;
  for (std::uint64_t id = 0; id < 4; ++id) draws.push_back(random_state(t, 40 + id));
  std::vector<double> out(6);
  std::vector<double> sum_prob(6, 0.0);
  for (const Vector& d : draws) {
    base.log_predictive(d, out);
    const Vector ll = t.test_log_likelihoods(d);
    for (std::size_t i = 0; i < out.size(); ++i) {
      EXPECT_NEAR(out[i], ll[static_cast<Eigen::Index>(i)], 1e-13 * std::max(1.0, std::fabs(out[i])));
      sum_prob[i] += std::exp(out[i]);
    }
  }
  double lpd = 0.0;
  for (double s : sum_prob) lpd += std::log(s / 4.0);
  EXPECT_NEAR(t.log_predictive_density(draws), lpd, 1e-12 * std::max(1.0, std::fabs(lpd)));

  std::vector<double> wrong(5);
  EXPECT_THROW(base.log_predictive(draws[0], wrong), NumericalError);
  EXPECT_THROW(base.log_predictive(Vector::Zero(t.dim() - 1), out), NumericalError);
}

TEST(Horseshoe, LogPredictiveDensityIsStableForTinyProbabilities) {
  // beta = 0 (z = 0) and an intercept of +1000 or +1200: a test row with y = 0 has log p(y) = -1000
  // and -1200, whose plain average underflows; log-sum-exp gives -1000 - log 2 + log1p(e^-200).
  const CsvTable data = synthetic(20, 5, 7);
  const HorseshoeLogistic t(data, small_options());
  Vector d1 = Vector::Zero(t.dim()), d2 = Vector::Zero(t.dim());
  d1[0] = 1000.0;
  d2[0] = 1200.0;
  int zeros = 0;
  for (Eigen::Index r : t.test_rows()) zeros += data.values(r, 0) == 0.0 ? 1 : 0;
  ASSERT_GT(zeros, 0);
  const double expected = zeros * (-1000.0 - std::log(2.0) + std::log1p(std::exp(-200.0)));
  EXPECT_NEAR(t.log_predictive_density({d1, d2}), expected, 1e-9 * std::fabs(expected));
}

TEST(Horseshoe, LabelsMustBeZeroOrOne) {
  const std::string path = std::string(PEMC_SOURCE_DIR) + "/tests/data/csv/labels_bad.csv";
  HorseshoeLogisticOptions o;
  o.p0 = 1.0;
  try {
    HorseshoeLogistic(load_numeric_csv(path), o);
    ADD_FAILURE() << "no exception";
  } catch (const DataError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("line 4"), std::string::npos) << msg;
    EXPECT_NE(msg.find("column 1 ('y')"), std::string::npos) << msg;
    EXPECT_NE(msg.find("0.5"), std::string::npos) << msg;
  }
}

TEST(Horseshoe, FactoryAppliesDefaultsAndValidates) {
  pemc::v1::HorseshoeLogisticTarget cfg;
  cfg.set_data_file(colon_path());
  cfg.set_split_seed(5);
  EXPECT_THROW(make_horseshoe_logistic(cfg), ConfigError);  // p0 missing
  cfg.set_p0(3.0);
  const auto t = make_horseshoe_logistic(cfg);
  EXPECT_EQ(t->options().train_fraction, 0.8);
  EXPECT_EQ(t->options().sigma, 2.0);
  EXPECT_EQ(t->options().slab_scale, 2.0);
  EXPECT_EQ(t->options().slab_df, 3.0);
  EXPECT_EQ(t->options().intercept_scale, 10.0);
  EXPECT_EQ(t->options().split_seed, 5u);
  EXPECT_DOUBLE_EQ(t->tau0(), 3.0 / 1997.0 * 2.0 / std::sqrt(50.0));

  cfg.set_p0(2000.0);  // p0 >= p
  try {
    make_horseshoe_logistic(cfg);
    ADD_FAILURE() << "no exception for p0 >= p";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("p0"), std::string::npos) << e.what();
  }
  cfg.set_p0(3.0);
  cfg.set_train_fraction(1.5);
  EXPECT_THROW(make_horseshoe_logistic(cfg), ConfigError);
  cfg.set_train_fraction(0.8);
  cfg.set_slab_df(-1.0);
  EXPECT_THROW(make_horseshoe_logistic(cfg), ConfigError);
  cfg.clear_data_file();
  EXPECT_THROW(make_horseshoe_logistic(cfg), ConfigError);
}

TEST(Horseshoe, DefaultInitialPointIsFinite) {
  const CsvTable data = synthetic(20, 5, 8);
  const HorseshoeLogistic t(data, small_options());
  const auto x0 = t.default_initial_point();
  ASSERT_TRUE(x0.has_value());
  EXPECT_NEAR((*x0)[11], std::log(t.tau0()), 1e-15);
  EXPECT_TRUE(std::isfinite(t.potential(*x0)));
}

}  // namespace
}  // namespace pemc::targets
