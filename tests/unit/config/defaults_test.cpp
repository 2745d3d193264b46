// apply_defaults: every documented default of config.proto, and explicit values left alone.
#include <gtest/gtest.h>

#include "config_test_support.hpp"

namespace pemc::config {
namespace {

LoadedConfig defaulted(const std::string& text, const std::string& file = "my_run.pbtxt") {
  auto c = parse_text_config(text, file);
  apply_defaults(c);
  return c;
}

TEST(ApplyDefaults, RunLevelDefaults) {
  const auto c = defaulted("iterations: 5\n", "dir/my_run.pbtxt");
  const auto& r = c.config;
  EXPECT_EQ(r.name(), "my_run");  // the file's stem
  ASSERT_TRUE(r.has_warmup());
  EXPECT_EQ(r.warmup(), 0);
  EXPECT_EQ(r.chains_per_seed(), 1);
  ASSERT_TRUE(r.output().has_thin());
  EXPECT_EQ(r.output().thin(), 1);
  ASSERT_TRUE(r.output().has_flush_every());
  EXPECT_EQ(r.output().flush_every(), 64);
  ASSERT_TRUE(r.logging().has_progress_interval_seconds());
  EXPECT_DOUBLE_EQ(r.logging().progress_interval_seconds(), 5.0);
  ASSERT_TRUE(r.init().has_uniform_radius());
  EXPECT_DOUBLE_EQ(r.init().uniform_radius(), 2.0);
}

TEST(ApplyDefaults, ExplicitValuesAreKept) {
  const auto c = defaulted(
      "name: \"given\" warmup: 7 chains_per_seed: 3\n"
      "output { thin: 4 flush_every: 9 }\n"
      "logging { progress_interval_seconds: 0.5 }\n"
      "init { point { x: [1, 2] } }\n"
      "sampler { nuts { max_tree_depth: 4 max_energy_error: 50 adaptation { target_accept: 0.9 "
      "gamma: 0.1 t0: 1 kappa: 0.6 init_buffer: 0 term_buffer: 0 base_window: 5 } } }\n");
  const auto& r = c.config;
  EXPECT_EQ(r.name(), "given");
  EXPECT_EQ(r.warmup(), 7);
  EXPECT_EQ(r.chains_per_seed(), 3);
  EXPECT_EQ(r.output().thin(), 4);
  EXPECT_EQ(r.output().flush_every(), 9);
  EXPECT_DOUBLE_EQ(r.logging().progress_interval_seconds(), 0.5);
  EXPECT_TRUE(r.init().has_point());
  const auto& n = r.sampler().nuts();
  EXPECT_EQ(n.max_tree_depth(), 4);
  EXPECT_DOUBLE_EQ(n.max_energy_error(), 50);
  const auto& a = n.adaptation();
  EXPECT_DOUBLE_EQ(a.target_accept(), 0.9);
  EXPECT_DOUBLE_EQ(a.gamma(), 0.1);
  EXPECT_DOUBLE_EQ(a.t0(), 1);
  EXPECT_DOUBLE_EQ(a.kappa(), 0.6);
  EXPECT_EQ(a.init_buffer(), 0);  // explicit 0 of an `optional` field is kept
  EXPECT_EQ(a.term_buffer(), 0);
  EXPECT_EQ(a.base_window(), 5);
}

void expect_adaptation_defaults(const pemc::v1::AdaptationConfig& a, double target_accept,
                                bool enabled) {
  ASSERT_TRUE(a.has_target_accept());
  EXPECT_DOUBLE_EQ(a.target_accept(), target_accept);
  EXPECT_DOUBLE_EQ(a.gamma(), 0.05);
  EXPECT_DOUBLE_EQ(a.t0(), 10);
  EXPECT_DOUBLE_EQ(a.kappa(), 0.75);
  EXPECT_EQ(a.init_buffer(), 75);
  EXPECT_EQ(a.term_buffer(), 50);
  EXPECT_EQ(a.base_window(), 25);
  EXPECT_EQ(a.enabled(), enabled);
}

TEST(ApplyDefaults, AdaptationTargetAcceptDependsOnTheSampler) {
  expect_adaptation_defaults(defaulted("sampler { hmc {} }").config.sampler().hmc().adaptation(), 0.65, true);
  expect_adaptation_defaults(defaulted("sampler { nuts {} }").config.sampler().nuts().adaptation(), 0.8, true);
  expect_adaptation_defaults(defaulted("sampler { rwm {} }").config.sampler().rwm().adaptation(), 0.234, false);
  expect_adaptation_defaults(defaulted("sampler { mala {} }").config.sampler().mala().adaptation(), 0.574, false);
}

TEST(ApplyDefaults, TopLevelHmcAndNutsAdaptByDefault) {
  const auto hmc = defaulted("sampler { hmc { n_leapfrog: 5 } }").config.sampler().hmc();
  ASSERT_TRUE(hmc.adaptation().has_enabled());
  EXPECT_TRUE(hmc.adaptation().enabled());
  ASSERT_TRUE(hmc.adaptation().has_adapt_metric());
  EXPECT_FALSE(hmc.adaptation().adapt_metric());  // HMC's default metric is the unit metric
  EXPECT_FALSE(hmc.has_step_size());              // left unset: searched for in warmup
  const auto nuts = defaulted("sampler { nuts {} }").config.sampler().nuts();
  EXPECT_TRUE(nuts.adaptation().enabled());
  ASSERT_TRUE(nuts.adaptation().has_adapt_metric());
  EXPECT_TRUE(nuts.adaptation().adapt_metric());
  EXPECT_FALSE(nuts.has_step_size());
}

TEST(ApplyDefaults, ExplicitAdaptationSwitchesAreKept) {
  const auto off = defaulted("sampler { nuts { step_size: 0.3 adaptation { enabled: false } } }")
                       .config.sampler().nuts();
  EXPECT_FALSE(off.adaptation().enabled());
  EXPECT_DOUBLE_EQ(off.step_size(), 0.3);
  const auto step_only = defaulted("sampler { nuts { adaptation { adapt_metric: false } } }")
                             .config.sampler().nuts();
  EXPECT_TRUE(step_only.adaptation().enabled());
  EXPECT_FALSE(step_only.adaptation().adapt_metric());
}

// Pooled warmup is the default where it applies: a top-level NUTS/HMC run of 2 or more chains
// adapting a diagonal or dense metric over a warmup long enough for its rounds.
TEST(ApplyDefaults, PooledWarmupWhereItApplies) {
  const auto pooled = [](const std::string& text) {
    const auto c = defaulted(text.find("warmup") == std::string::npos ? text + " warmup: 1000" : text)
                       .config;
    const auto& a = c.sampler().has_nuts() ? c.sampler().nuts().adaptation()
                                           : c.sampler().hmc().adaptation();
    EXPECT_TRUE(a.has_pooled()) << text;
    return a.pooled();
  };
  EXPECT_TRUE(pooled("sampler { nuts {} } seeds { values: [1, 2, 3, 4] }"));
  EXPECT_TRUE(pooled("sampler { nuts {} } seeds { base: 1 count: 2 }"));
  EXPECT_TRUE(pooled("sampler { nuts {} } seeds { values: [1] } chains_per_seed: 2"));
  EXPECT_TRUE(pooled("sampler { nuts { metric: DENSE } } seeds { values: [1, 2] }"));
  EXPECT_TRUE(pooled("sampler { hmc { n_leapfrog: 5 metric: DIAGONAL adaptation { adapt_metric: "
                     "true } } } seeds { values: [1, 2] }"));
  EXPECT_FALSE(pooled("sampler { nuts {} } seeds { values: [1] }"));  // one chain
  EXPECT_FALSE(pooled("sampler { nuts {} } seeds { values: [1, 2] } warmup: 0"));  // the default
  EXPECT_FALSE(pooled("sampler { nuts {} } seeds { values: [1, 2] } warmup: 39"));
  EXPECT_FALSE(pooled("sampler { nuts { metric: UNIT } } seeds { values: [1, 2] }"));
  EXPECT_FALSE(pooled("sampler { nuts { adaptation { adapt_metric: false } } } "
                      "seeds { values: [1, 2] }"));
  EXPECT_FALSE(pooled("sampler { nuts { step_size: 0.1 adaptation { enabled: false } } } "
                      "seeds { values: [1, 2] }"));
  EXPECT_FALSE(pooled("sampler { hmc { n_leapfrog: 5 } } seeds { values: [1, 2] }"));  // unit
  EXPECT_FALSE(pooled("sampler { nuts { adaptation { pooled: false } } } "
                      "seeds { values: [1, 2] }"));  // an explicit choice is kept
  EXPECT_TRUE(pooled("sampler { nuts { adaptation { pooled: true } } } seeds { values: [1] }"));
}

// Pseudo-extended pools its warmup where its kernel adapts a metric on the reference path, whose
// pseudo-samples have the target's scale (src/warmup/pooled_round_config.hpp).
TEST(ApplyDefaults, PooledWarmupOfPseudoExtendedOnTheReferencePath) {
  const auto pooled = [](const std::string& pe) {
    const auto c = defaulted("target { gaussian { mean: [0, 0] } } warmup: 1000 "
                             "seeds { values: [1, 2] } sampler { pseudo_extended { " + pe + " } }")
                       .config;
    return c.sampler().pseudo_extended().nuts().adaptation().pooled();
  };
  const std::string adapting = " nuts { step_size: 0.1 adaptation { enabled: true adapt_metric: true } }";
  EXPECT_TRUE(pooled("n_pseudo: 3 instrumental: REFERENCE_PATH" + adapting));
  EXPECT_TRUE(pooled("n_pseudo: 3 reference {}" + adapting));  // `reference` implies the path
  EXPECT_TRUE(pooled("n_pseudo: 3 instrumental: REFERENCE_PATH"));  // the default kernel
  // A kernel configured to keep its metric keeps it; the tempered instrumental's pseudo-samples
  // are wider than the target at low temperatures.
  EXPECT_FALSE(pooled("n_pseudo: 3 instrumental: REFERENCE_PATH nuts { step_size: 0.1 "
                      "adaptation { enabled: true } }"));
  EXPECT_FALSE(pooled("n_pseudo: 3 instrumental: TEMPERED" + adapting));
  // A given extended metric is the start the user chose.
  EXPECT_FALSE(pooled("n_pseudo: 1 instrumental: REFERENCE_PATH nuts { step_size: 0.1 "
                      "inverse_metric: [1, 1, 1] adaptation { enabled: true adapt_metric: true } }"));
  // One chain: the default kernel keeps the modes' metric.
  const auto one = defaulted("target { gaussian { mean: [0, 0] } } warmup: 1000 seeds { values: "
                             "[1] } sampler { pseudo_extended { n_pseudo: 3 instrumental: "
                             "REFERENCE_PATH } }")
                       .config.sampler().pseudo_extended().nuts().adaptation();
  EXPECT_FALSE(one.pooled());
  EXPECT_FALSE(one.adapt_metric());
}

TEST(ApplyDefaults, KernelsInsideCompositeSamplersDoNotAdaptByDefault) {
  for (const std::string sampler :
       {"pseudo_extended { n_pseudo: 2 nuts { step_size: 0.1 } }",
        "continuous_tempering { hmc { step_size: 0.1 n_leapfrog: 5 } }",
        "parallel_tempering { nuts { step_size: 0.1 } }",
        "simulated_tempering { hmc { step_size: 0.1 n_leapfrog: 5 } }",
        "annealed_importance { nuts { step_size: 0.1 } }"}) {
    SCOPED_TRACE(sampler);
    const auto s = defaulted("sampler { " + sampler + " }").config.sampler();
    const auto* kind = s.GetDescriptor()->FindFieldByNumber(s.kind_case());
    const auto& composite = s.GetReflection()->GetMessage(s, kind);
    const auto* field = composite.GetDescriptor()->FindFieldByName(
        sampler.find("nuts") != std::string::npos ? "nuts" : "hmc");
    const auto& local = composite.GetReflection()->GetMessage(composite, field);
    const auto& a = dynamic_cast<const pemc::v1::AdaptationConfig&>(local.GetReflection()->GetMessage(
        local, local.GetDescriptor()->FindFieldByName("adaptation")));
    EXPECT_FALSE(a.has_enabled());
    EXPECT_FALSE(a.enabled());
    EXPECT_FALSE(a.adapt_metric());
  }
}

TEST(ApplyDefaults, NutsLimits) {
  const auto n = defaulted("sampler { nuts { step_size: 1 } }").config.sampler().nuts();
  EXPECT_EQ(n.max_tree_depth(), 10);
  EXPECT_DOUBLE_EQ(n.max_energy_error(), 1000);
  EXPECT_EQ(n.metric(), pemc::v1::METRIC_UNSPECIFIED);  // the kernel decides what unspecified means
}

TEST(ApplyDefaults, BananaFlowerFunnel) {
  const auto b = defaulted("target { banana {} }").config.target().banana();
  EXPECT_DOUBLE_EQ(b.b(), 0.1);
  EXPECT_DOUBLE_EQ(b.v(), 100);
  const auto f = defaulted("target { flower {} }").config.target().flower();
  EXPECT_DOUBLE_EQ(f.radius(), 10);
  EXPECT_DOUBLE_EQ(f.amplitude(), 6);
  EXPECT_EQ(f.petals(), 6);
  EXPECT_DOUBLE_EQ(f.sd(), 1);
  const auto fu = defaulted("target { funnel { dim: 5 } }").config.target().funnel();
  EXPECT_DOUBLE_EQ(fu.v_scale(), 3);
  EXPECT_EQ(fu.dim(), 5);
  // Explicit zeros of optional fields are kept (validate() rejects v = 0).
  EXPECT_DOUBLE_EQ(defaulted("target { banana { b: 0 v: 0 } }").config.target().banana().b(), 0);
  EXPECT_DOUBLE_EQ(defaulted("target { banana { b: 0 v: 0 } }").config.target().banana().v(), 0);
}

TEST(ApplyDefaults, Boltzmann) {
  const auto g = defaulted("target { boltzmann { generated { n_units: 10 } } }").config.target().boltzmann();
  EXPECT_DOUBLE_EQ(g.generated().weight_scale_hi(), 6);
  EXPECT_DOUBLE_EQ(g.generated().weight_scale_lo(), 2);
  EXPECT_DOUBLE_EQ(g.generated().bias_scale(), 0.1);
  EXPECT_EQ(g.max_enumeration_units(), 30);
  // From files: no `generated` message is created (that would add a second source).
  const auto w = defaulted("target { boltzmann { weights_file: \"w\" bias_file: \"b\" } }").config.target().boltzmann();
  EXPECT_FALSE(w.has_generated());
  EXPECT_EQ(w.max_enumeration_units(), 30);
  const auto keep = defaulted("target { boltzmann { generated { weight_scale_hi: 4 } max_enumeration_units: 12 } }")
                        .config.target().boltzmann();
  EXPECT_DOUBLE_EQ(keep.generated().weight_scale_hi(), 4);
  EXPECT_EQ(keep.max_enumeration_units(), 12);
}

TEST(ApplyDefaults, Horseshoe) {
  const auto h = defaulted("target { horseshoe_logistic { p0: 3 slab_df: 5 } }").config.target().horseshoe_logistic();
  EXPECT_DOUBLE_EQ(h.train_fraction(), 0.8);
  EXPECT_DOUBLE_EQ(h.sigma(), 2);
  EXPECT_DOUBLE_EQ(h.slab_scale(), 2);
  EXPECT_DOUBLE_EQ(h.slab_df(), 5);
  EXPECT_DOUBLE_EQ(h.intercept_scale(), 10);
  EXPECT_DOUBLE_EQ(h.p0(), 3);  // no default: validate() requires it
}

TEST(ApplyDefaults, ContinuousTemperingBootstrap) {
  auto c = parse_text_config(
      "sampler { continuous_tempering { hmc {} base { gaussian { mean: [0] log_zeta: 0 } }"
      " bootstrap { rounds: 2 draws_per_round: 100 } } } warmup: 321",
      "x.pbtxt");
  apply_defaults(c);
  const auto& b = c.config.sampler().continuous_tempering().bootstrap();
  EXPECT_EQ(b.warmup(), 321);  // each round's warmup: the run's
  EXPECT_EQ(b.covariance_scale(), 1.0);
  auto d = parse_text_config(
      "sampler { continuous_tempering { hmc {} base { gaussian { mean: [0] log_zeta: 0 } }"
      " bootstrap { rounds: 2 draws_per_round: 100 warmup: 5 covariance_scale: 2 } } }",
      "x.pbtxt");
  apply_defaults(d);
  EXPECT_EQ(d.config.sampler().continuous_tempering().bootstrap().warmup(), 5);
  EXPECT_EQ(d.config.sampler().continuous_tempering().bootstrap().covariance_scale(), 2.0);
  // No bootstrap: nothing added.
  auto e = parse_text_config(
      "sampler { continuous_tempering { hmc {} base { gaussian { mean: [0] log_zeta: 0 } } } }",
      "x.pbtxt");
  apply_defaults(e);
  EXPECT_FALSE(e.config.sampler().continuous_tempering().has_bootstrap());
}

TEST(ApplyDimensionDefaults, PseudoExtendedInstrumentalShapeDependsOnTheDimension) {
  // g(beta) = Beta(d/2 + 1, 1) for d = 10 when a is unset (extended/pseudo_extended.hpp,
  // default_instrumental_a): filled in and reported once, idempotent.
  auto c = defaulted("sampler { pseudo_extended { n_pseudo: 5 nuts {} } }").config;
  const auto filled = apply_dimension_defaults(c, 10);
  ASSERT_EQ(filled.size(), 1u);
  EXPECT_NE(filled[0].find("sampler.pseudo_extended.beta_instrumental.a = 6 "), std::string::npos)
      << filled[0];
  EXPECT_EQ(c.sampler().pseudo_extended().beta_instrumental().a(), 6.0);
  EXPECT_FALSE(c.sampler().pseudo_extended().beta_instrumental().has_b());
  const std::string once = c.SerializeAsString();
  EXPECT_TRUE(apply_dimension_defaults(c, 10).empty());
  EXPECT_EQ(c.SerializeAsString(), once);
  // An explicit a, fixed beta and other samplers are left alone.
  for (const std::string sampler :
       {"pseudo_extended { n_pseudo: 5 beta_instrumental { a: 1 } nuts {} }",
        "pseudo_extended { n_pseudo: 5 fixed_beta: 0.5 nuts {} }", "nuts {}"}) {
    SCOPED_TRACE(sampler);
    auto other = defaulted("sampler { " + sampler + " }").config;
    const std::string before = other.SerializeAsString();
    EXPECT_TRUE(apply_dimension_defaults(other, 10).empty());
    EXPECT_EQ(other.SerializeAsString(), before);
  }
}

TEST(ApplyDefaults, IsIdempotent) {
  auto c = parse_text_config("sampler { nuts {} } target { flower {} }", "x.pbtxt");
  apply_defaults(c);
  const std::string once = c.config.SerializeAsString();
  apply_defaults(c);
  EXPECT_EQ(c.config.SerializeAsString(), once);
}

TEST(ApplyDefaults, MinimalFixtureBecomesValid) {
  auto c = load_config(testing::fixture("gaussian_hmc.pbtxt"));
  testing::TempDir dir;
  c.config.mutable_output()->set_path((dir.path() / "out.pemc").string());
  apply_defaults(c);
  EXPECT_NO_THROW(validate(c));
  EXPECT_EQ(c.config.name(), "gaussian_hmc");
}

}  // namespace
}  // namespace pemc::config
