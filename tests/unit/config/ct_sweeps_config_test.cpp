// sampler.continuous_tempering.sweeps_per_draw (tempering.proto): validated with a message naming
// the field, and wired by make_sampler as a RepeatedTransitionKernel around the CT kernel.
#include <gtest/gtest.h>

#include <string>

#include "config/defaults.hpp"
#include "config/factories.hpp"
#include "config/load.hpp"
#include "config/validate.hpp"
#include "core/error.hpp"
#include "extended/repeated_transition_kernel.hpp"

namespace pemc::config {
namespace {

LoadedConfig bimodal_run(const std::string& extra) {
  auto c = parse_text_config(
      "target { mixture { preset: BIMODAL_1D } }\n"
      "sampler { continuous_tempering { variant: GIBBS hmc { step_size: 0.1 n_leapfrog: 5 }"
      " base { gaussian { mean: 0 variance: 1.06 log_zeta: 0 } } " + extra + " } }\n"
      "iterations: 10\nseeds { base: 1 count: 1 }\noutput { path: \"/tmp/ct_sweeps_config_test.pemc\" }\n",
      "test.pbtxt");
  apply_defaults(c);
  return c;
}

TEST(CtSweepsPerDraw, ValidatedWithTheFieldName) {
  for (const char* bad : {"sweeps_per_draw: 0", "sweeps_per_draw: -3", "sweeps_per_draw: 10001"}) {
    try {
      validate(bimodal_run(bad));
      ADD_FAILURE() << bad << ": no error";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("sampler.continuous_tempering.sweeps_per_draw"),
                std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(validate(bimodal_run("sweeps_per_draw: 4")));
}

TEST(CtSweepsPerDraw, WrapsTheKernelOnlyWhenAboveOne) {
  const auto four = bimodal_run("sweeps_per_draw: 4");
  const auto setup = make_sampler(four.config.sampler(), make_target(four.config.target()));
  const auto* r = dynamic_cast<const extended::RepeatedTransitionKernel*>(setup.kernel.get());
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->sweeps(), 4);
  for (const char* one : {"", "sweeps_per_draw: 1"}) {
    const auto c = bimodal_run(one);
    const auto s = make_sampler(c.config.sampler(), make_target(c.config.target()));
    EXPECT_EQ(dynamic_cast<const extended::RepeatedTransitionKernel*>(s.kernel.get()), nullptr) << one;
  }
}

}  // namespace
}  // namespace pemc::config
