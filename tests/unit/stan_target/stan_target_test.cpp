// The `stan` target end to end in one process: compiling a real model through pemc-stanc and the
// C++ compiler into a cache, loading it with CmdStan JSON data, and checking its density (with
// constants and the Jacobian) against a hand computation, its gradient against finite
// differences, its named outputs, and every user error the issue lists.
//
// The models live in tests/data/stan/. The cache is shared by the tests of this binary (they run
// as separate processes under ctest), so the model compiles once per build tree.
#include "stan_target/stan_target.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pemc/v1/config.pb.h"
#include "stan_target/model_builder.hpp"
#include "targets/lp_offset.hpp"

namespace pemc::stan_target {
namespace {

namespace fs = std::filesystem;

const std::string kData = PEMC_SOURCE_DIR "/tests/data/stan/";
const std::string kCache = PEMC_BINARY_DIR "/test-stan-cache";

v1::StanTarget config(const std::string& model, const std::string& data, bool propto = false) {
  v1::StanTarget c;
  c.set_model_file(kData + model);
  if (!data.empty()) c.set_data_file(data);
  c.set_propto(propto);
  c.set_cache_dir(kCache);
  return c;
}

std::string error_of(const v1::StanTarget& c) {
  try {
    (void)make_stan_target(c);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A scratch file removed at the end of the test.
struct ScratchFile {
  explicit ScratchFile(const std::string& text)
      : path(fs::temp_directory_path() /
             ("pemc_stan_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++))) {
    std::ofstream(path) << text;
  }
  ~ScratchFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
  fs::path path;
  static inline int counter = 0;
};

double normal_lpdf(double x, double m, double s) {
  return -0.5 * std::log(2 * std::numbers::pi) - std::log(s) - 0.5 * (x - m) * (x - m) / (s * s);
}

TEST(StanTarget, DensityJacobianAndConstants) {
  const auto t = make_stan_target(config("normal_model.stan", kData + "normal_model.json"));
  ASSERT_EQ(t->dim(), 2);
  EXPECT_EQ(t->name(), "stan");
  // x = (mu, log sigma): the potential is -log p(mu, sigma, y) - log sigma (the Jacobian).
  const std::vector<double> y{0.5, -1.25, 2.0, 0.75};
  for (const auto& [mu, ls] : {std::pair{0.3, -0.2}, std::pair{-1.0, 0.7}}) {
    const double sigma = std::exp(ls);
    double lp = normal_lpdf(mu, 0, 10) + normal_lpdf(std::log(sigma), 0, 1) - std::log(sigma);
    for (const double v : y) lp += normal_lpdf(v, mu, sigma);
    lp += ls;
    Vector g(2);
    EXPECT_NEAR(t->potential_and_gradient(Eigen::Vector2d(mu, ls), g), -lp, 1e-12);
    EXPECT_NEAR(t->potential(Eigen::Vector2d(mu, ls)), -lp, 1e-12);
  }
}

TEST(StanTarget, GradientMatchesFiniteDifferences) {
  const auto t = make_stan_target(config("normal_model.stan", kData + "normal_model.json"));
  const Eigen::Vector2d x(0.4, 0.1);
  Vector g(2);
  t->potential_and_gradient(x, g);
  const double h = 1e-6;
  for (int i = 0; i < 2; ++i) {
    Eigen::Vector2d up = x, down = x;
    up[i] += h;
    down[i] -= h;
    const double fd = (t->potential(up) - t->potential(down)) / (2 * h);
    EXPECT_NEAR(g[i], fd, 1e-6 * (1 + std::fabs(fd))) << "coordinate " << i;
  }
}

TEST(StanTarget, ProptoDropsOnlyConstants) {
  const auto full = make_stan_target(config("normal_model.stan", kData + "normal_model.json"));
  const auto propto =
      make_stan_target(config("normal_model.stan", kData + "normal_model.json", true));
  const Eigen::Vector2d a(0.3, -0.2), b(-1.0, 0.7);
  const double shift_a = full->potential(a) - propto->potential(a);
  const double shift_b = full->potential(b) - propto->potential(b);
  EXPECT_GT(std::fabs(shift_a), 1.0);  // the constants are really dropped
  EXPECT_NEAR(shift_a, shift_b, 1e-10);
}

// The shim's lp offset: -potential minus Stan's lp__, the constants of `~` statements. For
// normal_model (N = 4): log 10 + (1/2) log 2 pi from mu ~ normal(0, 10), (1/2) log 2 pi from
// sigma ~ lognormal(0, 1) (its -log sigma depends on sigma and stays), (N/2) log 2 pi from y.
// measure_lp_offset finds the same from random points; with propto it is 0.
TEST(StanTarget, LpOffsetIsTheConstantsStanDrops) {
  const auto full = make_stan_target(config("normal_model.stan", kData + "normal_model.json"));
  const auto propto =
      make_stan_target(config("normal_model.stan", kData + "normal_model.json", true));
  const double expected = -std::log(10.0) - 3.0 * std::log(2 * std::numbers::pi);
  EXPECT_TRUE(full->has_lp_offset());
  for (const auto& x : {Eigen::Vector2d(0.3, -0.2), Eigen::Vector2d(-1.0, 0.7)}) {
    ASSERT_TRUE(full->lp_offset(x).has_value());
    EXPECT_NEAR(*full->lp_offset(x), expected, 1e-12);
    // Stan's lp__ is what the propto target samples: -potential - offset.
    EXPECT_NEAR(-full->potential(x) - *full->lp_offset(x), -propto->potential(x), 1e-12);
    EXPECT_EQ(propto->lp_offset(x), std::optional<double>(0.0));
  }
  EXPECT_FALSE(full->lp_offset(Eigen::Vector2d(2e6, 0.0)).has_value());  // reject(): no value
  const auto m = targets::measure_lp_offset(*full, [](int attempt, VectorRef x) {
    x[0] = -1.5 + attempt;
    x[1] = 0.5 * attempt;
  });
  ASSERT_TRUE(m.offset.has_value()) << m.problem;
  EXPECT_NEAR(*m.offset, expected, 1e-12);
}

// Parameters and transformed parameters (mu, sigma, log_sigma) come before the generated
// quantity y_rep; the shim says how many they are.
TEST(StanTarget, ParameterOutputsAreCounted) {
  const auto t = make_stan_target(config("normal_model.stan", kData + "normal_model.json"));
  EXPECT_EQ(t->n_parameter_outputs(), std::optional<int>(3));
}

TEST(StanTarget, NamedConstrainedOutputsAndSeededGeneratedQuantities) {
  const auto t = make_stan_target(config("normal_model.stan", kData + "normal_model.json"));
  ASSERT_EQ(t->output_names(), (std::vector<std::string>{"mu", "sigma", "log_sigma", "y_rep"}));
  std::vector<double> out(4), again(4), other(4);
  const Eigen::Vector2d x(0.3, -0.2);
  ASSERT_TRUE(t->write_outputs(x, 7, out));
  EXPECT_EQ(out[0], 0.3);
  EXPECT_NEAR(out[1], std::exp(-0.2), 1e-15);
  EXPECT_NEAR(out[2], -0.2, 1e-15);
  ASSERT_TRUE(t->write_outputs(x, 7, again));
  EXPECT_EQ(out[3], again[3]);  // same seed, same draw
  ASSERT_TRUE(t->write_outputs(x, 8, other));
  EXPECT_NE(out[3], other[3]);
}

// As in Stan's samplers (base_hamiltonian.hpp): any std::exception in the log density rejects the
// point, and its message is kept for the chain to count and log.
TEST(StanTarget, EveryExceptionOfTheDensityIsARejectionWithItsMessage) {
  const auto t = make_stan_target(config("normal_model.stan", kData + "normal_model.json"));
  Vector g(2);
  EXPECT_EQ(t->potential_and_gradient(Eigen::Vector2d(2e6, 0.0), g),
            std::numeric_limits<double>::infinity());  // reject(): a domain error
  EXPECT_EQ(t->potential(Eigen::Vector2d(-2e6, 0.0)),
            std::numeric_limits<double>::infinity());  // an index out of range
  const auto said = t->take_model_messages();
  ASSERT_EQ(said.size(), 2u);
  EXPECT_EQ(said[0].kind, targets::ModelMessageKind::kRejection);
  EXPECT_NE(said[0].text.find("mu is too large"), std::string::npos) << said[0].text;
  EXPECT_NE(said[1].text.find("index"), std::string::npos) << said[1].text;
  EXPECT_TRUE(t->take_model_messages().empty());
}

// As Stan's writer does (mcmc_writer.hpp): when generated quantities throw, the parameters and
// transformed parameters written before stand and the rest is NaN, with the message kept.
TEST(StanTarget, FailingGeneratedQuantitiesKeepTheParameters) {
  const auto t = make_stan_target(config("normal_model.stan", kData + "normal_model.json"));
  std::vector<double> out(4);
  EXPECT_FALSE(t->write_outputs(Eigen::Vector2d(2e5, 0.0), 7, out));
  EXPECT_EQ(out[0], 2e5);
  EXPECT_EQ(out[1], 1.0);
  EXPECT_EQ(out[2], 0.0);
  EXPECT_TRUE(std::isnan(out[3]));
  const auto said = t->take_model_messages();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].kind, targets::ModelMessageKind::kOutputs);
  EXPECT_NE(said[0].text.find("y_rep needs mu below 1e5"), std::string::npos) << said[0].text;
}

TEST(StanTarget, TheCacheBuildsOnce) {
  BuildRequest r;
  r.model_file = kData + "normal_model.stan";
  r.cache_dir = kCache;
  const auto first = build_model(r);
  const auto second = build_model(r);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(first.library, second.library);
  EXPECT_TRUE(fs::exists(second.library));
  EXPECT_TRUE(fs::exists(fs::path(second.entry) / "normal_model.hpp"));  // stanc's C++ kept
}

TEST(StanTarget, DataErrorsComeFromStanAndNameTheFile) {
  ScratchFile missing(R"({"N": 4})");
  std::string e = error_of(config("normal_model.stan", missing.path.string()));
  EXPECT_NE(e.find("variable does not exist"), std::string::npos) << e;
  EXPECT_NE(e.find("variable name=y"), std::string::npos) << e;
  EXPECT_NE(e.find("normal_model.stan"), std::string::npos) << e;

  ScratchFile wrong_dims(R"({"N": 4, "y": [1, 2, 3]})");
  e = error_of(config("normal_model.stan", wrong_dims.path.string()));
  EXPECT_NE(e.find("mismatch in dimension"), std::string::npos) << e;

  ScratchFile bad_constraint(R"({"N": -1, "y": []})");
  e = error_of(config("normal_model.stan", bad_constraint.path.string()));
  EXPECT_NE(e.find("N"), std::string::npos) << e;
  EXPECT_NE(e.find("-1"), std::string::npos) << e;

  ScratchFile malformed("{\"N\": 4,\n \"y\": [1, 2, 3, 4\n}");
  e = error_of(config("normal_model.stan", malformed.path.string()));
  EXPECT_NE(e.find(malformed.path.string() + ":3:"), std::string::npos) << e;
  EXPECT_NE(e.find("malformed JSON"), std::string::npos) << e;

  e = error_of(config("normal_model.stan", "/nonexistent/d.json"));
  EXPECT_NE(e.find("/nonexistent/d.json"), std::string::npos) << e;
}

TEST(StanTarget, SyntaxErrorsCarryStancsLineAndColumn) {
  const std::string e = error_of(config("syntax_error.stan", ""));
  EXPECT_NE(e.find("stanc rejected"), std::string::npos) << e;
  EXPECT_NE(e.find("syntax_error.stan"), std::string::npos) << e;
  EXPECT_NE(e.find("line 6"), std::string::npos) << e;
}

TEST(StanTarget, AModelWithoutParametersIsRefused) {
  ScratchFile data(R"({"N": 1})");
  const std::string e = error_of(config("no_parameters.stan", data.path.string()));
  EXPECT_NE(e.find("no parameters"), std::string::npos) << e;
}

TEST(StanTarget, CompilerFailuresAreSummarisedWithTheLog) {
  // A flag that makes every compilation fail: a forced include that does not exist. A new flag
  // is a new toolchain, so this builds (and fails) afresh without touching the shared entry.
  ::setenv("PEMC_STAN_CXXFLAGS", "-include /nonexistent/pemc_forced_failure.h", 1);
  const std::string e = error_of(config("normal_model.stan", kData + "normal_model.json"));
  ::unsetenv("PEMC_STAN_CXXFLAGS");
  EXPECT_NE(e.find("C++ compiler failed"), std::string::npos) << e;
  EXPECT_NE(e.find("pemc_forced_failure.h"), std::string::npos) << e;
  const auto log = e.find("full log: ");
  ASSERT_NE(log, std::string::npos) << e;
  EXPECT_TRUE(fs::exists(e.substr(log + 10))) << e;
}

TEST(StanTarget, UnwritableCacheAndMissingModelAreConfigErrors) {
  v1::StanTarget c = config("normal_model.stan", kData + "normal_model.json");
  c.set_cache_dir("/proc/pemc-no-cache-here");
  std::string e = error_of(c);
  EXPECT_NE(e.find("/proc/pemc-no-cache-here"), std::string::npos) << e;
  EXPECT_NE(e.find("cache"), std::string::npos) << e;
  e = error_of(config("does_not_exist.stan", ""));
  EXPECT_NE(e.find("does_not_exist.stan"), std::string::npos) << e;
}

}  // namespace
}  // namespace pemc::stan_target
