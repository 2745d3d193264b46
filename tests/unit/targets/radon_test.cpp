#include "targets/radon.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "core/error.hpp"
#include "pemc/v1/config.pb.h"
#include "rng/stream.hpp"
#include "support/gradient_check.hpp"

namespace pemc::targets {
namespace {

constexpr double kPi = std::numbers::pi;

std::string radon_path() { return std::string(PEMC_SHARED_DIR) + "/data/radon/radon.csv"; }
std::string fixture(const std::string& name) { return std::string(PEMC_SOURCE_DIR) + "/tests/data/csv/" + name; }

const CsvTable& radon_data() {
  static const CsvTable t = load_numeric_csv(radon_path());
  return t;
}

// A state near the posterior's scale: log-scales around log 0.5, the rest unit normal.
Vector random_state(const Radon& t, std::uint64_t id) {
  rng::Stream s(21, rng::Domain::kTest, id, 0);
  Vector x(t.dim());
  for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = s.normal();
  for (Eigen::Index i : {t.log_sigma_alpha_index(), t.log_sigma_beta_index(), t.log_epsilon_index()})
    x[i] = std::log(0.5) + 0.5 * x[i];
  return x;
}

// -(log prior + log likelihood + log Jacobian) written from the model's densities term by term.
double longhand_potential(const CsvTable& data, const Vector& x) {
  const int K = 85;
  const auto log_normal = [](double v, double mean, double sd) {
    return -0.5 * std::log(2.0 * kPi * sd * sd) - (v - mean) * (v - mean) / (2.0 * sd * sd);
  };
  const auto log_half_cauchy = [](double v, double scale) {
    return std::log(2.0 / (kPi * scale * (1.0 + (v / scale) * (v / scale))));
  };
  const double mu_alpha = x[0], sigma_alpha = std::exp(x[1]);
  const double mu_beta = x[K + 2], sigma_beta = std::exp(x[K + 3]);
  const double epsilon = std::exp(x[K + 6]);
  double lp = log_half_cauchy(sigma_alpha, 2.5) + log_normal(mu_alpha, 0, 1) + log_half_cauchy(sigma_beta, 2.5) +
              log_normal(mu_beta, 0, 1) + log_half_cauchy(epsilon, 2.5);
  std::vector<double> alpha(K);
  for (int k = 0; k < K; ++k) {
    lp += log_normal(x[2 + k], 0, 1);
    alpha[static_cast<std::size_t>(k)] = mu_alpha + sigma_alpha * x[2 + k];
  }
  lp += log_normal(x[K + 4], 0, 1) + log_normal(x[K + 5], 0, 1);
  const double beta0 = mu_beta + sigma_beta * x[K + 4];
  const double beta1 = mu_beta + sigma_beta * x[K + 5];
  for (Eigen::Index i = 0; i < data.values.rows(); ++i) {
    const auto c = static_cast<std::size_t>(data.values(i, 0));
    const double mean = alpha[c] + beta0 * data.values(i, 1) + beta1 * data.values(i, 2);
    lp += log_normal(data.values(i, 3), mean, epsilon);
  }
  const double log_jacobian = std::log(sigma_alpha) + std::log(sigma_beta) + std::log(epsilon);
  return -(lp + log_jacobian);
}

TEST(Radon, LoadsTheShippedData) {
  const Radon t(radon_data());
  EXPECT_EQ(t.n_rows(), 919);
  EXPECT_EQ(t.n_counties(), 85);
  EXPECT_EQ(t.dim(), 92);
  EXPECT_EQ(t.name(), "radon");
  EXPECT_EQ(t.mu_beta_index(), 87);
  EXPECT_EQ(t.n_beta_index(), 89);
  EXPECT_EQ(t.log_epsilon_index(), 91);
}

TEST(Radon, PotentialMatchesLonghandFormula) {
  ASSERT_EQ(radon_data().header, (std::vector<std::string>{"county", "floor", "log_uranium", "log_radon"}));
  const Radon t(radon_data());
  for (std::uint64_t id = 0; id < 4; ++id) {
    const Vector x = random_state(t, id);
    const double expected = longhand_potential(radon_data(), x);
    EXPECT_NEAR(t.potential(x), expected, 1e-11 * std::fabs(expected)) << "point " << id;
  }
}

TEST(Radon, GradientMatchesFiniteDifferences) {
  const Radon t(radon_data());
  for (std::uint64_t id = 0; id < 5; ++id) pemc::testing::expect_gradient_matches(t, random_state(t, id));
  // A large noise scale and tiny group scales (funnel neck) too.
  Vector x = random_state(t, 50);
  x[t.log_epsilon_index()] = 3.0;
  x[t.log_sigma_alpha_index()] = -6.0;
  x[t.log_sigma_beta_index()] = -6.0;
  pemc::testing::expect_gradient_matches(t, x);
}

TEST(Radon, ColumnsAreFoundByName) {
  // The same data with the columns permuted gives the same potential.
  const CsvTable& d = radon_data();
  CsvTable p;
  p.source = "permuted";
  p.header = {"log_radon", "county", "log_uranium", "floor"};
  p.values.resize(d.values.rows(), 4);
  p.values.col(0) = d.values.col(3);
  p.values.col(1) = d.values.col(0);
  p.values.col(2) = d.values.col(2);
  p.values.col(3) = d.values.col(1);
  const Radon a(d), b(p);
  const Vector x = random_state(a, 9);
  EXPECT_EQ(a.potential(x), b.potential(x));
}

void expect_data_error(const std::string& name, std::initializer_list<std::string> fragments) {
  const std::string path = fixture(name);
  try {
    Radon r(load_numeric_csv(path));
    ADD_FAILURE() << name << ": no exception";
  } catch (const DataError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    for (const auto& f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "missing '" << f << "' in: " << msg;
  }
}

TEST(Radon, CountyIndicesAreValidated) {
  expect_data_error("radon_fractional_county.csv", {"line 3", "column 1 ('county')", "1.5", "not a non-negative integer"});
  expect_data_error("radon_negative_county.csv", {"line 3", "column 1 ('county')", "-1", "not a non-negative integer"});
  expect_data_error("radon_county_gap.csv", {"column 1 ('county')", "county 1 has no rows", "contiguous"});
  expect_data_error("radon_missing_column.csv", {"'log_uranium'"});
}

TEST(Radon, Factory) {
  pemc::v1::RadonTarget cfg;
  EXPECT_THROW(make_radon(cfg), ConfigError);
  cfg.set_data_file(radon_path());
  EXPECT_EQ(make_radon(cfg)->dim(), 92);
}

}  // namespace
}  // namespace pemc::targets
