// summarize's posterior summary (src/report/posterior_summary.hpp, posterior_summary_format.hpp)
// from hand-made diagnostics and chain summaries: lp__ first, --vars, and for weighted runs the
// weighted mean and sd with the numbers that would mislead marked unavailable.
#include "report/posterior_summary.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "report/posterior_summary_format.hpp"
#include "report/weighted_quantiles.hpp"

namespace pemc::report {
namespace {

ParameterDiagnostics param(const std::string& name, double mean) {
  ParameterDiagnostics p;
  p.name = name;
  p.mean = mean;
  p.sd = 1.0;
  p.mcse_mean = 0.05;
  p.q5 = mean - 1.6;
  p.q50 = mean;
  p.q95 = mean + 1.6;
  p.rhat = 1.001;
  p.ess_bulk = 900;
  p.ess_tail = 800;
  return p;
}

// One run "r" of two chains of 100 draws, quantities theta[1], theta[2] (+ potential), lp__.
DiagnosticsReport diagnostics(bool weighted, const std::string& quantity = "outputs") {
  RunDiagnostics r;
  r.run_id = "r";
  r.sampler = weighted ? "pseudo_extended" : "nuts";
  r.target = "stan";
  r.quantity = quantity;
  r.n_chains = 2;
  r.warmup = 50;
  r.parameters = {param("theta[1]", 1.0), param("theta[2]", 2.0), param("potential", 3.0)};
  if (!weighted) r.lp = param("lp__", -3.0);
  else r.lp_note = "no lp__: extended density";
  for (int c = 0; c < 2; ++c) {
    ChainDiagnostics cd;
    cd.chain_id = c;
    cd.n_draws = 100;
    cd.weighted = weighted;
    cd.records_divergences = true;
    cd.n_divergent = c;
    cd.n_max_tree_depth = 0;
    cd.configured_max_tree_depth = 10;
    cd.ebfmi = weighted ? std::nan("") : 0.8 + 0.1 * c;
    cd.records_step_size = true;
    cd.step_size = 0.5;
    cd.mean_accept_stat = 0.9;
    r.chains.push_back(cd);
  }
  r.warnings = {"divergences: 1 of 200 post-warmup draws (0.5%) are divergent (chain 1): try"};
  DiagnosticsReport rep;
  rep.runs.push_back(r);
  return rep;
}

// Chain summaries with weighted moments: chain 0 mean (1, 2), E[x^2] (2, 5); chain 1 mean (3, 2),
// E[x^2] (10, 5); equal draws, so the run's mean is (2, 2) and E[x^2] (6, 5): sd (sqrt 2, 1).
std::vector<FileSummary> summaries() {
  FileSummary f;
  for (int c = 0; c < 2; ++c) {
    ChainRunSummary s;
    s.run_id = "r";
    s.chain_id = c;
    s.n_draws = 100;
    s.names = {"theta[1]", "theta[2]"};
    s.mean = Vector{{c == 0 ? 1.0 : 3.0, 2.0}};
    s.second_moment = Vector{{c == 0 ? 2.0 : 10.0, 5.0}};
    s.wall_seconds = 1.0 + c;
    s.cpu_seconds = 0.75;
    f.runs.push_back(s);
  }
  return {f};
}

TEST(PosteriorSummary, LpFirstThenEveryQuantityWithoutThePotential) {
  const auto p = posterior_summaries(diagnostics(false), summaries(), {});
  ASSERT_EQ(p.size(), 1u);
  const RunPosterior& r = p[0];
  ASSERT_EQ(r.quantities.size(), 3u);
  EXPECT_EQ(r.quantities[0].name, "lp__");
  EXPECT_EQ(r.quantities[1].name, "theta[1]");
  EXPECT_DOUBLE_EQ(r.quantities[1].q95, 2.6);  // the draws' numbers, unchanged
  EXPECT_EQ(r.wall_seconds, 2.0);              // the longest chain
  EXPECT_EQ(r.cpu_seconds, 1.5);               // all chains
  EXPECT_EQ(r.min_draws, 100);
  EXPECT_TRUE(r.has_divergences && r.has_tree_depth && r.has_ebfmi && r.has_step_size);
  EXPECT_FALSE(r.weighted);
  const std::string table = posterior_to_table(p);
  EXPECT_NE(table.find("run r (nuts on stan): 2 chains x 100 draws after 50 warmup"), std::string::npos)
      << table;
  EXPECT_NE(table.find("1 (1.0%)"), std::string::npos) << table;  // chain 1's divergences
  EXPECT_NE(table.find("WARNING: run r, divergences: 1 of 200"), std::string::npos) << table;
}

TEST(PosteriorSummary, VarsSelectsAndUnknownNamesFail) {
  auto p = posterior_summaries(diagnostics(false), summaries(), {"theta[2]", "lp__"});
  ASSERT_EQ(p[0].quantities.size(), 2u);
  EXPECT_EQ(p[0].quantities[0].name, "theta[2]");
  EXPECT_EQ(p[0].quantities[1].name, "lp__");
  p = posterior_summaries(diagnostics(false), summaries(), {"theta"});
  EXPECT_EQ(p[0].quantities.size(), 2u);
  EXPECT_THROW(posterior_summaries(diagnostics(false), summaries(), {"potential"}), ConfigError);
  EXPECT_THROW(posterior_summaries(diagnostics(false), summaries(), {"sigma"}), ConfigError);
  // lp__ where there is none: the error says why.
  try {
    posterior_summaries(diagnostics(true, "outputs_pseudo_sample_weighted_mean"), summaries(), {"lp__"});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--vars lp__: no lp__: extended density"), std::string::npos)
        << e.what();
  }
}

TEST(PosteriorSummary, PseudoExtendedKeepsTheMcseOfThePerDrawMeans) {
  const auto p = posterior_summaries(diagnostics(true, "outputs_pseudo_sample_weighted_mean"),
                                     summaries(), {});
  const RunPosterior& r = p[0];
  EXPECT_TRUE(r.weighted);
  ASSERT_EQ(r.quantities.size(), 2u);  // no lp__
  const QuantityEstimate& q = r.quantities[0];
  EXPECT_DOUBLE_EQ(q.mean, 2.0);
  EXPECT_DOUBLE_EQ(q.sd, std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(r.quantities[1].sd, 1.0);
  EXPECT_EQ(q.mcse_mean, 0.05);
  EXPECT_TRUE(std::isnan(q.q5) && std::isnan(q.q50) && std::isnan(q.q95));
  EXPECT_EQ(q.ess_bulk, 900);
  EXPECT_NE(r.estimates_note.find("weighted quantiles are not available"), std::string::npos);
  EXPECT_FALSE(r.has_ebfmi);
  // Unavailable numbers: "—" in the table, null in JSON, empty in CSV.
  EXPECT_NE(posterior_to_table(p).find("—"), std::string::npos);
  const auto j = nlohmann::json::parse(summarize_to_json(summaries(), p));
  EXPECT_TRUE(j["posterior"][0]["quantities"][0]["q5"].is_null());
  EXPECT_EQ(j["posterior"][0]["quantities"][0]["mean"], 2.0);
  EXPECT_EQ(posterior_to_csv(p),
            "run_id,name,mean,mcse_mean,sd,q5,q50,q95,ess_bulk,ess_tail,rhat\n"
            "r,theta[1],2,0.050000000000000003,1.4142135623730951,,,,900,800,1.0009999999999999\n"
            "r,theta[2],2,0.050000000000000003,1,,,,900,800,1.0009999999999999\n");
}

// Weighted samples give weighted quantiles: chain 0 holds theta[1] = 0, 1, 2 with weights
// 1, 1, 2 (log weights), chain 1 theta[1] = 10 with weight 1; equal draws, so each chain's weights
// sum to 1/2: 0.125, 0.125, 0.25 and 0.5. theta[2] is 2 everywhere.
TEST(PosteriorSummary, WeightedQuantilesPoolTheChainsByTheirDraws) {
  auto files = summaries();
  files[0].runs[0].sample_values = {{0, 1, 2}, {2, 2, 2}};
  files[0].runs[0].sample_log_weights = {0, 0, std::log(2.0)};
  files[0].runs[1].sample_values = {{10}, {2}};
  files[0].runs[1].sample_log_weights = {-3};
  const auto p = posterior_summaries(diagnostics(true, "outputs"), files, {});
  const QuantityEstimate& q = p[0].quantities[0];
  const std::vector<double> x{0, 1, 2, 10}, w{0.125, 0.125, 0.25, 0.5};
  EXPECT_DOUBLE_EQ(q.q5, weighted_quantile(x, w, 0.05));
  EXPECT_DOUBLE_EQ(q.q50, weighted_quantile(x, w, 0.5));
  EXPECT_DOUBLE_EQ(q.q95, weighted_quantile(x, w, 0.95));
  EXPECT_DOUBLE_EQ(p[0].quantities[1].q50, 2.0);
  EXPECT_NE(p[0].estimates_note.find("quantiles are weighted"), std::string::npos);
  // A chain without samples: no weighted quantiles for the run.
  files[0].runs[1].sample_log_weights.clear();
  EXPECT_TRUE(std::isnan(posterior_summaries(diagnostics(true, "outputs"), files, {})[0].quantities[0].q50));
}

TEST(PosteriorSummary, GlobalWeightsLeaveNoMcse) {
  const auto p = posterior_summaries(diagnostics(true, "outputs"), summaries(), {});
  const QuantityEstimate& q = p[0].quantities[0];
  EXPECT_DOUBLE_EQ(q.mean, 2.0);
  EXPECT_TRUE(std::isnan(q.mcse_mean));
  EXPECT_NE(p[0].estimates_note.find("unweighted states"), std::string::npos);
}

}  // namespace
}  // namespace pemc::report
