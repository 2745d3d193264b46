// Config -> pseudo-extended sampler: the rules, the defaults, the propriety warnings, and a short
// HMC run on the extended space whose post-hoc weighted means (Theorem 2.1) match the truth
// within Monte Carlo error.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "core/error.hpp"
#include "extended/pseudo_extended.hpp"
#include "kernels/hmc.hpp"
#include "targets/gaussian.hpp"
#include "targets/mixture.hpp"

namespace pemc::extended {
namespace {

v1::PseudoExtendedConfig parse(const std::string& text) {
  v1::PseudoExtendedConfig c;
  if (!google::protobuf::TextFormat::ParseFromString(text, &c)) ADD_FAILURE() << "bad text";
  return c;
}

v1::TargetConfig target_text(const std::string& text) {
  v1::TargetConfig c;
  if (!google::protobuf::TextFormat::ParseFromString(text, &c)) ADD_FAILURE() << "bad text";
  return c;
}

std::vector<std::string> paths(const std::vector<PseudoExtendedIssue>& issues) {
  std::vector<std::string> p;
  for (const auto& i : issues) p.push_back(i.field_path);
  return p;
}

using Paths = std::vector<std::string>;

TEST(PseudoExtendedConfig, AValidConfigHasNoProblemsAndGetsTheDefaults) {
  const auto c = parse("n_pseudo: 5 nuts { step_size: 0.1 }");
  EXPECT_EQ(paths(config_problems(c)), Paths{});
  const auto o = options_from_config(c, 10);
  EXPECT_EQ(o.n_pseudo, 5);
  EXPECT_EQ(o.beta_lower, kDefaultBetaLower);
  EXPECT_EQ(o.beta_upper, 1.0);
  EXPECT_FALSE(o.fixed_beta.has_value());
  EXPECT_FALSE(o.beta_init.has_value());
  EXPECT_TRUE(o.beta_target.flat());
  // g(beta) = Beta(a, 1), a = max(1, d/2 + min(1, max(0, (d - 2) / 8))): the paper's flat g up
  // to d = 2, d/2 + 1 (q's beta marginal flat for Gaussian modes) from d = 10, linear between.
  EXPECT_EQ(o.beta_instrumental.a, 6.0);
  EXPECT_EQ(o.beta_instrumental.b, 1.0);
  EXPECT_TRUE(options_from_config(c, 2).beta_instrumental.flat());
  EXPECT_TRUE(options_from_config(c, 1).beta_instrumental.flat());
  EXPECT_EQ(options_from_config(c, 6).beta_instrumental.a, 3.5);
  EXPECT_EQ(options_from_config(c, 20).beta_instrumental.a, 11.0);
  EXPECT_EQ(default_instrumental_a(5), 2.875);
  EXPECT_EQ(default_instrumental_a(100), 51.0);
  EXPECT_EQ(extended_dim(c, 2), 15);
  EXPECT_EQ(extended_dim(parse("n_pseudo: 5 fixed_beta: 0.5"), 2), 10);
}

TEST(PseudoExtendedConfig, EachBrokenRuleNamesItsField) {
  const std::string k = " hmc { step_size: 0.1 n_leapfrog: 5 }";
  EXPECT_EQ(paths(config_problems(parse("hmc { step_size: 0.1 }"))),
            Paths{"sampler.pseudo_extended.n_pseudo"});
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2"))), Paths{"sampler.pseudo_extended.kernel"});
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 beta_lower: -0.1" + k))),
            Paths{"sampler.pseudo_extended.beta_lower"});
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 beta_upper: 1.5" + k))),
            Paths{"sampler.pseudo_extended.beta_upper"});
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 beta_lower: 0.6 beta_upper: 0.4" + k))),
            Paths{"sampler.pseudo_extended.beta_upper"});
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 beta_init: 0.0005" + k))),
            Paths{"sampler.pseudo_extended.beta_init"});
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 fixed_beta: 1.2" + k))),
            Paths{"sampler.pseudo_extended.fixed_beta"});
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 fixed_beta: 0.5 beta_lower: 0.1" + k))),
            Paths{"sampler.pseudo_extended.beta_lower"});
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 ranks_per_chain: -1" + k))),
            Paths{"sampler.pseudo_extended.ranks_per_chain"});
  // Blocks over several ranks: each integrates only its own pseudo-samples, a dense metric
  // couples them all.
  EXPECT_EQ(paths(config_problems(
                parse("n_pseudo: 4 ranks_per_chain: 2 nuts { step_size: 0.1 metric: DENSE }"))),
            Paths{"sampler.pseudo_extended.nuts.metric"});
  EXPECT_EQ(paths(config_problems(
                parse("n_pseudo: 4 ranks_per_chain: 2 hmc { step_size: 0.1 metric: DENSE }"))),
            Paths{"sampler.pseudo_extended.hmc.metric"});
  EXPECT_TRUE(
      config_problems(parse("n_pseudo: 4 ranks_per_chain: 1 nuts { metric: DENSE }")).empty());
  EXPECT_TRUE(
      config_problems(parse("n_pseudo: 4 ranks_per_chain: 2 nuts { metric: DIAGONAL }")).empty());
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 beta_instrumental { a: 0 }" + k))),
            Paths{"sampler.pseudo_extended.beta_instrumental.a"});
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 beta_target { b: -1 }" + k), "x")),
            Paths{"x.beta_target.b"});
  try {
    options_from_config(parse("n_pseudo: 0 beta_upper: 2" + k), 2);
    FAIL() << "no throw";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sampler.pseudo_extended.n_pseudo"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("sampler.pseudo_extended.beta_upper"), std::string::npos);
  }
}

TEST(PseudoExtendedConfig, ProprietyWarnings) {
  const auto unbounded = target_text("mixture { preset: KOU_A }");
  const auto half_box = target_text("mixture { preset: KOU_A } box_lower: -10");
  const auto boxed = target_text("mixture { preset: KOU_A } box_lower: -10 box_upper: 10");
  const std::string k = " nuts { step_size: 0.1 }";
  // The defaults are proper.
  EXPECT_EQ(paths(propriety_warnings(parse("n_pseudo: 2" + k), unbounded, 2)), Paths{});
  // beta down to 0 on an unbounded 2-D target: improper (Z(beta) ~ 1/beta) with the default g,
  // which is flat for d <= 2; from d = 3 the default a > d/2 keeps it proper.
  const auto zero = parse("n_pseudo: 2 beta_lower: 0" + k);
  EXPECT_EQ(paths(propriety_warnings(zero, unbounded, 3)), Paths{});
  EXPECT_EQ(paths(propriety_warnings(zero, unbounded, 10)), Paths{});
  EXPECT_EQ(paths(propriety_warnings(parse("n_pseudo: 2 beta_lower: 0 beta_instrumental { a: 1 }" + k),
                                     unbounded, 10)),
            Paths{"sampler.pseudo_extended.beta_lower"});
  EXPECT_EQ(paths(propriety_warnings(zero, unbounded, 2)),
            Paths{"sampler.pseudo_extended.beta_lower"});
  EXPECT_EQ(paths(propriety_warnings(zero, unbounded)),  // dimension unknown: assume d >= 2
            Paths{"sampler.pseudo_extended.beta_lower"});
  EXPECT_EQ(paths(propriety_warnings(zero, half_box, 2)),
            Paths{"sampler.pseudo_extended.beta_lower"});
  EXPECT_EQ(paths(propriety_warnings(zero, boxed, 2)), Paths{});
  // In 1-D, Z(beta) ~ beta^(-1/2) is integrable; g(beta) = Beta(a > d/2, .) also restores it.
  EXPECT_EQ(paths(propriety_warnings(zero, unbounded, 1)), Paths{});
  EXPECT_EQ(paths(propriety_warnings(
                parse("n_pseudo: 2 beta_lower: 0 beta_instrumental { a: 1.5 }" + k), unbounded, 2)),
            Paths{});
  EXPECT_EQ(paths(propriety_warnings(
                parse("n_pseudo: 2 beta_lower: 0 beta_instrumental { a: 1.5 }" + k), unbounded, 3)),
            Paths{"sampler.pseudo_extended.beta_lower"});
  // A flat q (fixed beta = 0) is improper on any unbounded space.
  EXPECT_EQ(paths(propriety_warnings(parse("n_pseudo: 2 fixed_beta: 0" + k), unbounded, 1)),
            Paths{"sampler.pseudo_extended.fixed_beta"});
  EXPECT_EQ(paths(propriety_warnings(parse("n_pseudo: 2 fixed_beta: 0" + k), boxed, 2)), Paths{});
}

// The reference path (pseudo_extended_reference.hpp): sampled beta on one rank, not standardised;
// g flat whatever the dimension (Z(beta) ≈ 1 on the path) and proper down to beta = 0.
TEST(PseudoExtendedConfig, ReferencePathRulesAndDefaults) {
  const std::string k = " nuts { step_size: 0.1 }";
  const auto ref = parse("n_pseudo: 5 reference {}" + k);
  EXPECT_EQ(paths(config_problems(ref)), Paths{});
  EXPECT_TRUE(options_from_config(ref, 10).beta_instrumental.flat());
  v1::PseudoExtendedConfig filled = ref;
  fill_dimension_defaults(filled, 10);
  EXPECT_FALSE(filled.beta_instrumental().has_a());
  EXPECT_EQ(options_from_config(parse("n_pseudo: 5 reference {} beta_instrumental { a: 3 }" + k), 10)
                .beta_instrumental.a,
            3.0);
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 reference {} fixed_beta: 0.5" + k))),
            Paths{"sampler.pseudo_extended.reference"});
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 reference {} ranks_per_chain: 2" + k))),
            Paths{"sampler.pseudo_extended.reference"});
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 reference {} standardise: true" + k))),
            Paths{"sampler.pseudo_extended.standardise"});
  EXPECT_TRUE(config_problems(parse("n_pseudo: 2 reference {} standardise: false" + k)).empty());
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 instrumental: REFERENCE_PATH fixed_beta: 0.5" + k))),
            Paths{"sampler.pseudo_extended.instrumental"});
  EXPECT_EQ(paths(config_problems(parse("n_pseudo: 2 instrumental: TEMPERED reference {}" + k))),
            Paths{"sampler.pseudo_extended.reference"});
  const auto unbounded = target_text("mixture { preset: KOU_A }");
  EXPECT_EQ(paths(propriety_warnings(parse("n_pseudo: 2 beta_lower: 0 reference {}" + k), unbounded, 2)),
            Paths{});
  // The default: the reference path on a user's own model, the paper's instrumental on the
  // built-in targets and where the reference path cannot run.
  using I = v1::PseudoExtendedConfig;
  const auto stan = target_text("stan { model_file: \"m.stan\" }");
  const auto plugin = target_text("plugin { library: \"p.so\" }");
  EXPECT_EQ(default_instrumental(parse("n_pseudo: 5" + k), stan), I::REFERENCE_PATH);
  EXPECT_EQ(default_instrumental(parse("n_pseudo: 5" + k), plugin), I::REFERENCE_PATH);
  EXPECT_EQ(default_instrumental(parse("n_pseudo: 5" + k), unbounded), I::TEMPERED);
  EXPECT_EQ(default_instrumental(parse("n_pseudo: 5 reference {}" + k), unbounded), I::REFERENCE_PATH);
  EXPECT_EQ(default_instrumental(parse("n_pseudo: 5 ranks_per_chain: 2" + k), stan), I::TEMPERED);
  EXPECT_EQ(default_instrumental(parse("n_pseudo: 5 fixed_beta: 0.5" + k), stan), I::TEMPERED);
  EXPECT_EQ(default_instrumental(parse("n_pseudo: 5 standardise: true" + k), stan), I::TEMPERED);
  EXPECT_EQ(default_instrumental(parse("n_pseudo: 5 instrumental: TEMPERED" + k), stan), I::TEMPERED);
}

std::shared_ptr<targets::Target> gaussian_2d() {
  Vector mean(2);
  mean << 1.0, -1.0;
  Matrix cov = Matrix::Zero(2, 2);
  cov(0, 0) = 1.0;
  cov(1, 1) = 0.25;
  return std::make_shared<targets::Gaussian>(mean, cov);
}

// Short HMC run on the extended space; the per-draw self-normalised averages f_t (Theorem 2.1)
// have the target's mean. The tolerance is 4.5 batch-means standard errors.
TEST(PseudoExtendedSampler, HmcOnTheExtendedSpaceRecoversTheMean) {
  const auto c = parse(
      "n_pseudo: 3 beta_lower: 0.2 hmc { step_size: 0.25 n_leapfrog: 8 jitter_step_size: true }");
  int built_dim = 0;
  auto s = make_pseudo_extended(c, gaussian_2d(), [&](targets::TargetPtr space) {
    built_dim = space->dim();
    kernels::HmcOptions o;
    o.step_size = 0.25;
    o.n_leapfrog = 8;
    o.jitter_step_size = true;
    return std::make_unique<kernels::HmcKernel>(space, hmc::Metric::unit(space->dim()), o);
  });
  ASSERT_EQ(built_dim, 9);
  ASSERT_EQ(s.space->dim(), 9);
  ASSERT_EQ(s.space->original_dim(), 2);

  kernels::ChainState state;
  state.x.resize(9);
  rng::Stream init(5, rng::Domain::kInitialPoint, 0, 0);
  s.space->initial_point([&](VectorRef x) { x << init.normal(), init.normal(); }, state.x);
  kernels::refresh(*s.space, state);
  ASSERT_TRUE(std::isfinite(state.potential));

  const int n_iter = 40000, n_burn = 500, n_batches = 40;
  std::vector<Vector> batch(n_batches, Vector::Zero(2));
  targets::WeightedView view;
  double accepted = 0.0;
  for (int t = 0; t < n_burn + n_iter; ++t) {
    rng::Stream st(5, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    const auto stats = s.kernel->transition(state, st);
    if (t < n_burn) continue;
    accepted += stats.accept_stat;
    s.space->weighted_view(state.x, view);
    const double m = view.log_weights.maxCoeff();
    const Vector w = (view.log_weights.array() - m).exp().matrix();
    batch[(t - n_burn) * n_batches / n_iter] += view.samples * w / w.sum();
  }
  EXPECT_GT(accepted / n_iter, 0.5);
  Vector mean = Vector::Zero(2);
  for (auto& b : batch) {
    b /= static_cast<double>(n_iter / n_batches);
    mean += b / n_batches;
  }
  for (int j = 0; j < 2; ++j) {
    double var = 0.0;
    for (const auto& b : batch) var += (b[j] - mean[j]) * (b[j] - mean[j]);
    const double se = std::sqrt(var / (n_batches - 1) / n_batches);
    const double truth = j == 0 ? 1.0 : -1.0;
    EXPECT_NEAR(mean[j], truth, 4.5 * se) << "coordinate " << j << " se " << se;
    EXPECT_LT(se, 0.05);  // the run is informative
  }
}

}  // namespace
}  // namespace pemc::extended
