#include "tempering/from_config.hpp"

#include <limits>
#include <gtest/gtest.h>
#include <google/protobuf/text_format.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "core/error.hpp"
#include "densities/gaussian.hpp"
#include "tempering_test_support.hpp"

namespace pemc::tempering {
namespace {

using Ladder = v1::TemperingLadderConfig;

template <class M>
M parse(const std::string& text) {
  M m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

std::string expect_config_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return {};
}

TEST(LadderConfig, Kinds) {
  auto l = make_ladder(parse<Ladder>("n_levels: 5"), true, Ladder::LINEAR, "f");
  EXPECT_EQ(l, (std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0}));
  l = make_ladder(parse<Ladder>("n_levels: 3 beta_min: 0.01"), false, Ladder::GEOMETRIC, "f");
  EXPECT_NEAR(l[1], 0.1, 1e-15);
  l = make_ladder(parse<Ladder>("kind: GEOMETRIC n_levels: 4 beta_min: 0.01"), true, Ladder::LINEAR, "f");
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0], 0.0);
  EXPECT_NEAR(l[1], 0.01, 1e-15);
  EXPECT_NEAR(l[2], 0.1, 1e-15);
  l = make_ladder(parse<Ladder>("kind: SIGMOIDAL n_levels: 9"), true, Ladder::LINEAR, "f");
  EXPECT_EQ(l.front(), 0.0);
  EXPECT_NEAR(l[4], 0.5, 1e-15);
  l = make_ladder(parse<Ladder>("kind: EXPLICIT betas: [0.2, 0.6, 1]"), false, Ladder::LINEAR, "f");
  EXPECT_EQ(l, (std::vector<double>{0.2, 0.6, 1.0}));
}

TEST(LadderConfig, ErrorsNameTheField) {
  EXPECT_NE(expect_config_error([] {
              make_ladder(parse<Ladder>("n_levels: 1"), true, Ladder::LINEAR, "sampler.x.ladder");
            }).find("sampler.x.ladder.n_levels"),
            std::string::npos);
  EXPECT_NE(expect_config_error([] {
              make_ladder(parse<Ladder>("kind: GEOMETRIC n_levels: 4 beta_min: 0"), true,
                          Ladder::LINEAR, "L");
            }).find("L.beta_min"),
            std::string::npos);
}

TEST(LadderConfig, PowerPathDefaultsToPositiveBetaMin) {
  const auto l = make_ladder(parse<Ladder>("n_levels: 4"), false, Ladder::LINEAR, "L");
  EXPECT_NEAR(l.front(), 1e-3, 1e-18);
  EXPECT_NE(expect_config_error([] {
              make_ladder(parse<Ladder>("n_levels: 4 beta_min: 0"), false, Ladder::LINEAR, "L");
            }).find("L.beta_min"),
            std::string::npos);
  EXPECT_NE(expect_config_error([] {
              make_ladder(parse<Ladder>("kind: EXPLICIT betas: [0, 0.5, 0.9]"), true,
                          Ladder::LINEAR, "L");
            }).find("L"),
            std::string::npos);
}

// A `fitted` reference is whatever the caller's fitter makes of config.fitted (config fits
// continuous tempering's base density: tests/unit/config/tempering_reference_fit_test.cpp): it is
// given the fitted config and the field, its psi and log zeta become the reference.
TEST(ReferenceConfig, FittedByTheCallersFitter) {
  testing::ShiftedGaussian target(Vector::Constant(2, 1.0), Vector::Constant(2, 2.0), 0.0);
  std::string fitted_field;
  const ReferenceFitter fit = [&](const v1::BaseDensityConfig& config, const targets::Target& t,
                                  const std::string& field) {
    EXPECT_TRUE(config.has_laplace());
    EXPECT_EQ(t.dim(), 2);
    fitted_field = field;
    return Reference{std::make_shared<const densities::Gaussian>(densities::Gaussian::from_variances(
                         Vector::Constant(2, 1.0), Vector::Constant(2, 4.0))),
                     7.0, "laplace fit at 1 mode"};
  };
  auto fitted = make_reference(
      parse<v1::TemperingReferenceConfig>("fitted { laplace { search { n_starts: 3 } } }"), target,
      "R", fit);
  EXPECT_EQ(fitted_field, "R.fitted");
  EXPECT_EQ(fitted->log_zeta, 7.0);
  auto inline_ref = make_reference(parse<v1::TemperingReferenceConfig>("mean: 1 variance: 4"), 2, "R");
  Vector x(2);
  x << 0.3, -2.0;
  EXPECT_EQ(fitted->density->potential(x), inline_ref->density->potential(x));
  EXPECT_TRUE(std::isnan(inline_ref->log_zeta));
  // The run log says what was fitted (Kernel::fit_description); nothing for a user-given one.
  EXPECT_EQ(describe_fitted(fitted.get()), "fitted reference: laplace fit at 1 mode, log zeta 7");
  EXPECT_EQ(describe_fitted(inline_ref.get()), "");
  EXPECT_EQ(describe_fitted(nullptr), "");
}

TEST(ReferenceConfig, FittedErrors) {
  testing::ShiftedGaussian target(Vector::Constant(2, 1.0), Vector::Constant(2, 2.0), 0.0);
  const auto config =
      parse<v1::TemperingReferenceConfig>("fitted { laplace { search { n_starts: 3 } } }");
  EXPECT_NE(expect_config_error([&] { make_reference(config, target, "R", nullptr); })
                .find("R.fitted: fitted references are not available"),
            std::string::npos);
  const ReferenceFitter one_dimensional = [](const v1::BaseDensityConfig&, const targets::Target&,
                                             const std::string&) {
    return Reference{.density = std::make_shared<const densities::Gaussian>(
                         densities::Gaussian::from_variances(Vector::Zero(1), Vector::Ones(1))),
                     .log_zeta = 0.0, .description = {}};
  };
  EXPECT_NE(expect_config_error([&] { make_reference(config, target, "R", one_dimensional); })
                .find("R.fitted: the base has dimension 1, the target 2"),
            std::string::npos);
  EXPECT_NE(expect_config_error([&] {
              make_reference(parse<v1::TemperingReferenceConfig>(
                                 "mean: 1 fitted { gaussian { mean: [1, 1] log_zeta: 0 } }"),
                             target, "R", one_dimensional);
            }).find("R: give either fitted"),
            std::string::npos);
}

TEST(ReferenceConfig, InlineAndFiles) {
  auto r = make_reference(parse<v1::TemperingReferenceConfig>("mean: 1 variance: 4"), 2, "R");
  EXPECT_EQ(r->density->dim(), 2);
  Vector x = Vector::Constant(2, 1.0);
  EXPECT_NEAR(r->density->potential(x), 2 * std::log(2.0) + kLog2Pi, 1e-12);
  const std::string dir = ::testing::TempDir();
  {
    std::ofstream(dir + "/m.txt") << "1 2\n";
    std::ofstream(dir + "/l.txt") << "2 0\n0.5 1\n";
  }
  r = make_reference(parse<v1::TemperingReferenceConfig>("mean_file: '" + dir + "/m.txt' cov_chol_file: '" +
                                                         dir + "/l.txt'"),
                     2, "R");
  x << 1, 2;
  EXPECT_NEAR(r->density->potential(x), std::log(2.0) + kLog2Pi, 1e-12);  // log det L = log 2
  std::ofstream(dir + "/bad.txt") << "1 x\n";
  EXPECT_THROW(make_reference(parse<v1::TemperingReferenceConfig>("mean_file: '" + dir + "/bad.txt'"), 2, "R"),
               DataError);
  EXPECT_THROW(make_reference(parse<v1::TemperingReferenceConfig>("mean_file: '/nonexistent/m.txt'"), 2, "R"),
               IoError);
  EXPECT_NE(expect_config_error([] {
              make_reference(parse<v1::TemperingReferenceConfig>("mean: [1, 2, 3]"), 2, "R");
            }).find("R.mean"),
            std::string::npos);
  EXPECT_NE(expect_config_error([] {
              make_reference(parse<v1::TemperingReferenceConfig>("variance: 1 covariance: [1, 0, 0, 1]"), 2, "R");
            }).find("at most one"),
            std::string::npos);
}

TEST(SamplerConfig, BuildsEachSampler) {
  auto target = std::make_shared<testing::ShiftedGaussian>(Vector::Zero(2), Vector::Ones(2), 0.0);
  const auto factory = testing::hmc_factory(0.3, 5);
  auto pt = make_parallel_tempering(
      parse<v1::ParallelTemperingConfig>("ladder { n_levels: 6 } n_local_steps: 2"), target, factory,
      nullptr, nullptr);
  EXPECT_EQ(pt.space, target);
  EXPECT_EQ(dynamic_cast<ParallelTemperingKernel&>(*pt.kernel).n_replicas(), 6);
  EXPECT_THROW(make_parallel_tempering(parse<v1::ParallelTemperingConfig>(
                                           "ladder { n_levels: 6 } choose_replicas: true"),
                                       target, factory, nullptr, nullptr),
               ConfigError);
  auto st = make_simulated_tempering(
      parse<v1::SimulatedTemperingConfig>("reference { } ladder { n_levels: 5 }"), target, factory,
      nullptr);
  EXPECT_EQ(st.space->dim(), 3);
  auto ais = make_annealed_importance(
      parse<v1::AnnealedImportanceConfig>("reference { } ladder { n_levels: 20 }"), target, factory,
      nullptr);
  EXPECT_EQ(ais.space->dim(), 3);
  EXPECT_THROW(make_annealed_importance(parse<v1::AnnealedImportanceConfig>("ladder { n_levels: 20 }"),
                                        target, factory, nullptr),
               ConfigError);
  int n_fits = 0;
  const ReferenceFitter count_fits = [&](const v1::BaseDensityConfig&, const targets::Target&,
                                         const std::string&) {
    ++n_fits;
    return Reference{.density = std::make_shared<const densities::Gaussian>(
        densities::Gaussian::from_variances(Vector::Zero(2), Vector::Ones(2))),
                     .log_zeta = std::numeric_limits<double>::quiet_NaN(), .description = {}};
  };
  const std::string fitted = "reference { fitted { variational { } } } ladder { n_levels: 5 }";
  make_parallel_tempering(parse<v1::ParallelTemperingConfig>(fitted), target, factory, nullptr,
                          count_fits);
  make_simulated_tempering(parse<v1::SimulatedTemperingConfig>(fitted), target, factory, count_fits);
  make_annealed_importance(parse<v1::AnnealedImportanceConfig>(fitted), target, factory, count_fits);
  EXPECT_EQ(n_fits, 3);
}

}  // namespace
}  // namespace pemc::tempering
