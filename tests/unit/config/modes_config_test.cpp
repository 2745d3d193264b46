// The run's mode search (config/modes.hpp) and the defaults of the samplers that use it: a
// multimodal sampler needs no setting but its kind (issue 36, item 5).
#include <gtest/gtest.h>

#include "config/modes.hpp"
#include "config_test_support.hpp"

namespace pemc::config {
namespace {

using testing::config_error;

LoadedConfig defaulted(const std::string& text) {
  auto c = parse_text_config(text, "run.pbtxt");
  apply_defaults(c);
  return c;
}

const std::string kTarget =
    "target { gaussian { mean: [0, 0] } } iterations: 100 warmup: 100 seeds { count: 4 } output { path: \"o.pemc\" } ";

TEST(ModesDefaults, EveryRunSearchesUnlessItSaysNot) {
  for (const std::string s : {"parallel_tempering {}", "continuous_tempering {}",
                              "simulated_tempering {}", "annealed_importance {}",
                              "pseudo_extended { n_pseudo: 5 }"}) {
    SCOPED_TRACE(s);
    const auto c = defaulted(kTarget + "sampler { " + s + " }").config;
    EXPECT_TRUE(sampler_uses_modes(c));
    EXPECT_TRUE(c.modes().enabled());
    EXPECT_EQ(c.modes().batch_starts(), ModesDefaults::kBatchStarts);
    EXPECT_EQ(c.modes().max_starts(), ModesDefaults::kMaxStarts);
    EXPECT_NO_THROW(validate(defaulted(kTarget + "sampler { " + s + " }")));
  }
  const auto nuts = defaulted(kTarget + "sampler { nuts {} }").config;
  EXPECT_FALSE(sampler_uses_modes(nuts));
  EXPECT_TRUE(mode_search_enabled(nuts));
  EXPECT_EQ(nuts.modes().max_starts(), ModesDefaults::kMaxStarts);
  const auto off = defaulted(kTarget + "sampler { nuts {} } modes { enabled: false }").config;
  EXPECT_FALSE(mode_search_enabled(off));
  EXPECT_FALSE(off.modes().has_max_starts());
}

TEST(ModesDefaults, ParallelTemperingIsStabilisedWithAMixtureReference) {
  const auto pt = defaulted(kTarget + "sampler { parallel_tempering {} }")
                      .config.sampler()
                      .parallel_tempering();
  EXPECT_TRUE(pt.reference().fitted().has_mixture());
  EXPECT_TRUE(pt.fixed_leg());
  EXPECT_EQ(pt.fixed_ladder().kind(), pemc::v1::TemperingLadderConfig::GEOMETRIC);
  EXPECT_EQ(pt.ladder().n_levels(), 8);
  EXPECT_TRUE(pt.adapt_schedule());
  EXPECT_TRUE(pt.choose_replicas());
  EXPECT_TRUE(pt.has_nuts());
  EXPECT_TRUE(pt.nuts().adaptation().enabled());
  // The power path as before, on request; a given reference is one leg unless asked.
  const auto power = defaulted(kTarget + "sampler { parallel_tempering { power_path: true } }")
                         .config.sampler()
                         .parallel_tempering();
  EXPECT_FALSE(power.has_reference());
  EXPECT_FALSE(power.fixed_leg());
  const auto given =
      defaulted(kTarget +
                "sampler { parallel_tempering { reference { variance: 4 } ladder { n_levels: 5 } } }")
          .config.sampler()
          .parallel_tempering();
  EXPECT_FALSE(given.fixed_leg());
  EXPECT_FALSE(given.choose_replicas());
  EXPECT_FALSE(sampler_uses_modes(defaulted(kTarget +
                                            "sampler { parallel_tempering { reference { variance: "
                                            "4 } } }")
                                      .config));
}

TEST(ModesDefaults, ContinuousTemperingAndAisUseTheMixture) {
  EXPECT_TRUE(defaulted(kTarget + "sampler { continuous_tempering {} }")
                  .config.sampler()
                  .continuous_tempering()
                  .base()
                  .has_mixture());
  const auto ais =
      defaulted(kTarget + "sampler { annealed_importance {} }").config.sampler().annealed_importance();
  EXPECT_TRUE(ais.reference().fitted().has_mixture());
  EXPECT_EQ(ais.ladder().kind(), pemc::v1::TemperingLadderConfig::SIGMOIDAL);
  EXPECT_TRUE(defaulted(kTarget + "sampler { simulated_tempering { reference { fitted {} } } }")
                  .config.sampler()
                  .simulated_tempering()
                  .reference()
                  .fitted()
                  .has_mixture());
}

TEST(ModesDefaults, PseudoExtendedNormalisesUnlessTheBetaIsFixed) {
  const auto pe =
      defaulted(kTarget + "sampler { pseudo_extended { n_pseudo: 3 } }").config.sampler().pseudo_extended();
  EXPECT_TRUE(pe.normalise_log_density());
  const auto fixed = defaulted(kTarget + "sampler { pseudo_extended { n_pseudo: 3 fixed_beta: 0.5 } }")
                         .config;
  EXPECT_FALSE(fixed.sampler().pseudo_extended().has_normalise_log_density());
  EXPECT_FALSE(sampler_uses_modes(fixed));
}

TEST(ModesRules, RangesAndASamplerThatNeedsTheSearch) {
  const auto bad = [](const std::string& text) {
    return config_error([&] { validate(defaulted(kTarget + text)); });
  };
  EXPECT_NE(bad("sampler { continuous_tempering {} } modes { enabled: false }")
                .find("modes.enabled"),
            std::string::npos);
  EXPECT_NE(bad("sampler { nuts {} } modes { enabled: true batch_starts: 0 }").find("batch_starts"),
            std::string::npos);
  EXPECT_NE(bad("sampler { nuts {} } modes { enabled: true batch_starts: 64 max_starts: 32 }")
                .find("max_starts"),
            std::string::npos);
  EXPECT_NE(bad("sampler { nuts {} } modes { enabled: true unseen_probability: 0 }")
                .find("unseen_probability"),
            std::string::npos);
  EXPECT_NE(bad("sampler { parallel_tempering { power_path: true fixed_leg: true } }")
                .find("fixed_leg"),
            std::string::npos);
  EXPECT_NE(bad("sampler { continuous_tempering { base { mixture { widen: 0.5 } } } }")
                .find("widen"),
            std::string::npos);
}

TEST(ModesSettings, SeededByTheRunsFirstSeedWithTheTargetsBox) {
  const auto c = defaulted("target { gaussian { mean: [0, 0] } } iterations: 100 warmup: 100 "
                           "output { path: \"o.pemc\" } sampler { nuts {} } "
                           "modes { enabled: true max_starts: 64 } seeds { values: [17, 3] }")
                     .config;
  const auto s = mode_search_settings(c);
  EXPECT_EQ(s.seed, 17u);
  EXPECT_EQ(s.max_starts, 64);
  EXPECT_FALSE(s.box_lower.has_value());
  const auto boxed = defaulted(
                         "target { gaussian { mean: [0] } box_lower: -1 box_upper: 2 } iterations: 10 "
                         "output { path: \"o.pemc\" } sampler { continuous_tempering {} } "
                         "seeds { base: 5 count: 2 }")
                         .config;
  const auto sb = mode_search_settings(boxed);
  EXPECT_EQ(sb.seed, 5u);
  EXPECT_EQ(*sb.box_lower, -1.0);
  EXPECT_EQ(*sb.box_upper, 2.0);
}

}  // namespace
}  // namespace pemc::config
