// The run's warnings (src/estimators/sampler_warnings.hpp): each rule fires at its threshold and
// not below it, once per run, with the numbers it reports computed by hand.
#include "estimators/sampler_warnings.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace pemc::estimators {
namespace {

// Four healthy NUTS chains of 1000 draws and two healthy quantities.
RunHealth healthy() {
  RunHealth run;
  for (int c = 0; c < 4; ++c) {
    ChainHealth h;
    h.chain_id = c;
    h.n_draws = 1000;
    h.n_divergent = 0;
    h.n_max_tree_depth = 0;
    h.max_tree_depth = 10;
    h.ebfmi = 0.9;
    run.chains.push_back(h);
  }
  run.quantities = {{"mu", 1.001, 2000.0}, {"tau", 1.005, 900.0}};
  return run;
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

TEST(SamplerWarnings, NoneForAHealthyRun) { EXPECT_TRUE(sampler_warnings(healthy()).empty()); }

TEST(SamplerWarnings, DivergencesWithTheirShareAndChains) {
  auto run = healthy();
  run.chains[1].n_divergent = 30;
  run.chains[3].n_divergent = 10;
  const auto w = sampler_warnings(run);
  ASSERT_EQ(w.size(), 1u);
  // 40 of 4000 = 1.0 %.
  EXPECT_TRUE(starts_with(w[0], "divergences: 40 of 4000 post-warmup draws (1.0%) are divergent "
                                "(chains 1, 3)"))
      << w[0];
  EXPECT_NE(w[0].find("target_accept"), std::string::npos);
}

TEST(SamplerWarnings, SamplersWithoutDivergencesOrDepthAreNotJudged) {
  auto run = healthy();
  for (auto& c : run.chains) {
    c.n_divergent.reset();
    c.n_max_tree_depth.reset();
    c.ebfmi = std::nan("");
  }
  EXPECT_TRUE(sampler_warnings(run).empty());
}

TEST(SamplerWarnings, TreeDepth) {
  auto run = healthy();
  run.chains[0].n_max_tree_depth = 500;
  const auto w = sampler_warnings(run);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(starts_with(w[0], "tree depth: 500 of 4000 post-warmup draws (12.5%) hit the maximum "
                                "tree depth 10 (chain 0)"))
      << w[0];
}

TEST(SamplerWarnings, EbfmiBelowThreshold) {
  auto run = healthy();
  run.chains[2].ebfmi = 0.25;
  run.chains[3].ebfmi = 0.3;  // at the threshold: fine
  const auto w = sampler_warnings(run);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(starts_with(w[0], "E-BFMI: 1 of 4 chains below 0.3 (chain 2: 0.250)")) << w[0];
}

TEST(SamplerWarnings, RhatAndBulkEssNameTheWorstQuantity) {
  auto run = healthy();
  run.quantities = {{"mu", 1.01, 400.0},   // at both thresholds: fine
                    {"tau", 1.02, 399.0},  // 399 < 100 x 4 chains
                    {"theta[1]", 1.2, 50.0},
                    {"sigma", std::nan(""), std::nan("")}};  // undefined: not judged
  const auto w = sampler_warnings(run);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_TRUE(starts_with(w[0], "R-hat: 2 of 4 quantities above 1.01 (largest 1.200, theta[1])")) << w[0];
  EXPECT_TRUE(starts_with(w[1], "bulk ESS: 2 of 4 quantities below 400 (100 per chain; smallest 50, "
                                "theta[1])"))
      << w[1];
}

// Chain 3 has two warnings of kind "other": it counts as one chain.
TEST(SamplerWarnings, ChainWarningsOncePerKindAfterTheRules) {
  auto run = healthy();
  run.chains[0].n_divergent = 1;
  run.chains[1].warnings = {"weights degenerate: ESS 1.2 of 5"};
  run.chains[3].warnings = {"weights degenerate: ESS 1.0 of 5", "other: x", "other: y"};
  const auto w = sampler_warnings(run);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_TRUE(starts_with(w[0], "divergences: 1 of 4000"));
  EXPECT_EQ(w[1], "2 of 4 chains: weights degenerate: ESS 1.2 of 5 (the numbers are chain 1's)");
  EXPECT_EQ(w[2], "1 of 4 chains: other: x (the numbers are chain 3's)");
  EXPECT_EQ(chain_warning_lines(run.chains), (std::vector<std::string>{w[1], w[2]}));
}

}  // namespace
}  // namespace pemc::estimators
