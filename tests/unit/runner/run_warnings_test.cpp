// Tests of the footer's run-level warnings (src/runner/run_warnings.hpp): each run's "ok" chains
// judged together by estimators/sampler_warnings.hpp from their summaries and the run end's
// R-hat and bulk ESS (report/draw_checks.hpp), one line per problem per run, prefixed with the
// run's name in a study; Footer.draw_checks says which runs were checked.
#include "runner/run_warnings.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace pemc::runner {
namespace {

v1::RunConfig nuts_run(const std::string& name, int max_depth, std::int64_t iterations) {
  v1::RunConfig r;
  r.set_name(name);
  r.set_iterations(iterations);
  r.mutable_sampler()->mutable_nuts()->set_max_tree_depth(max_depth);
  return r;
}

v1::ChainSummary* add_chain(v1::Footer& f, const std::string& run, int id) {
  auto* c = f.add_chains();
  c->set_run_id(run);
  c->set_chain_id(id);
  c->set_status("ok");
  c->set_n_max_tree_depth(0);
  c->set_e_bfmi(1.0);
  return c;
}

int count(const v1::Footer& f, const std::string& part) {
  int n = 0;
  for (const auto& w : f.warnings()) n += w.find(part) != std::string::npos;
  return n;
}

TEST(RunWarnings, AHealthyRunHasNone) {
  v1::Footer f;
  for (int c = 0; c < 4; ++c) add_chain(f, "a", c);
  annotate_run_warnings(f, {nuts_run("a", 10, 1000)}, false);
  EXPECT_EQ(f.warnings_size(), 0);
}

TEST(RunWarnings, EachProblemOncePerRunWithItsShare) {
  v1::Footer f;
  for (int c = 0; c < 4; ++c) {
    auto* s = add_chain(f, "a", c);
    s->set_n_max_tree_depth(250);  // every chain: one line for the run
    s->set_n_divergent(c == 2 ? 12 : 0);
  }
  f.mutable_chains(1)->set_e_bfmi(0.2);
  f.mutable_chains(3)->add_warnings("pseudo-extended weights degenerate: max weight 0.99");
  f.mutable_chains(0)->add_warnings("pseudo-extended weights degenerate: max weight 0.98");
  f.mutable_chains(0)->add_warnings("mode check: the chains disagree");  // the log's own line
  annotate_run_warnings(f, {nuts_run("a", 5, 1000)}, false);
  ASSERT_EQ(f.warnings_size(), 4) << f.DebugString();
  EXPECT_EQ(f.warnings(0).rfind("divergences: 12 of 4000 post-warmup draws (0.3%)", 0), 0u)
      << f.warnings(0);
  EXPECT_EQ(f.warnings(1).rfind("tree depth: 1000 of 4000 post-warmup draws (25.0%) hit the "
                                "maximum tree depth 5 (chains 0, 1, 2, 3)", 0),
            0u)
      << f.warnings(1);
  EXPECT_EQ(f.warnings(2).rfind("E-BFMI: 1 of 4 chains below 0.3 (chain 1: 0.200)", 0), 0u)
      << f.warnings(2);
  EXPECT_EQ(f.warnings(3).rfind("2 of 4 chains: pseudo-extended weights degenerate", 0), 0u)
      << f.warnings(3);
  EXPECT_EQ(count(f, "mode check"), 0);
}

TEST(RunWarnings, FailedChainsAreNotJudgedAndAStudyPrefixesTheRunName) {
  v1::Footer f;
  auto* failed = add_chain(f, "b", 0);
  failed->set_status("failed: no initial point");
  failed->set_n_divergent(5);  // not counted: the chain did not finish
  add_chain(f, "a", 1)->set_n_divergent(3);
  add_chain(f, "b", 2)->set_n_max_tree_depth(7);
  annotate_run_warnings(f, {nuts_run("a", 10, 100), nuts_run("b", 10, 100)}, true);
  ASSERT_EQ(f.warnings_size(), 2);
  EXPECT_EQ(f.warnings(0).rfind("a: divergences: 3 of 100 post-warmup draws (3.0%)", 0), 0u)
      << f.warnings(0);
  EXPECT_EQ(f.warnings(1).rfind("b: tree depth: 7 of 100 post-warmup draws (7.0%)", 0), 0u)
      << f.warnings(1);
}

TEST(RunWarnings, SamplersWithoutTheStatisticsAreNotJudgedOnThem) {
  // RWM records no divergences: its n_divergent (0 anyway) is not a statement about them.
  v1::RunConfig rwm;
  rwm.set_name("r");
  rwm.set_iterations(100);
  rwm.mutable_sampler()->mutable_rwm();
  v1::Footer f;
  auto* c = f.add_chains();
  c->set_run_id("r");
  c->set_status("ok");
  const auto h = run_health({c}, rwm);
  ASSERT_EQ(h.chains.size(), 1u);
  EXPECT_FALSE(h.chains[0].n_divergent.has_value());
  EXPECT_FALSE(h.chains[0].n_max_tree_depth.has_value());
  EXPECT_TRUE(std::isnan(h.chains[0].ebfmi));
}

TEST(RunWarnings, AChainOfAnUnknownRunIsSaidNotThrown) {
  v1::Footer f;
  add_chain(f, "ghost", 3);
  annotate_run_warnings(f, {nuts_run("a", 10, 100)}, false);
  ASSERT_EQ(f.warnings_size(), 1);
  EXPECT_NE(f.warnings(0).find("chain 3 belongs to run 'ghost'"), std::string::npos);
}

report::RunDrawCheck checked(const std::string& run, double rhat_x1, double ess_x2) {
  report::RunDrawCheck c;
  c.run_id = run;
  c.checked = true;
  c.n_chains = 4;
  c.n_draws_used = 1000;
  c.quantities = {{"lp__", 1.001, 3000.0}, {"x[1]", rhat_x1, 2000.0}, {"x[2]", 1.002, ess_x2}};
  return c;
}

TEST(RunWarnings, CheckedDrawsAddSummarizesRhatAndEssLinesAndTheirExtremes) {
  v1::Footer f;
  for (int c = 0; c < 4; ++c) add_chain(f, "a", c)->set_n_divergent(c == 0 ? 1 : 0);
  for (int c = 4; c < 8; ++c) add_chain(f, "b", c);
  f.mutable_chains(1)->add_warnings("pseudo-extended weights degenerate: max weight 0.99");
  const DrawVerdicts draws{{checked("a", 1.2, 50.0), checked("b", 1.004, 2500.0)}, "out.pemc"};
  annotate_run_warnings(f, {nuts_run("a", 10, 1000), nuts_run("b", 10, 1000)}, true, &draws);

  // summarize's lines, in sampler_warnings' order, for the run that has problems.
  estimators::RunHealth h;
  for (int c = 0; c < 4; ++c) h.chains.push_back({c, 1000, c == 0 ? 1 : 0, 0, 10, 1.0, {}});
  h.chains[1].warnings = {"pseudo-extended weights degenerate: max weight 0.99"};
  h.quantities = draws.runs[0].quantities;
  const auto expected = estimators::sampler_warnings(h);
  ASSERT_EQ(expected.size(), 4u);  // divergences, R-hat, bulk ESS, the chains' warning
  ASSERT_EQ(f.warnings_size(), 4) << f.DebugString();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(f.warnings(i), "a: " + expected[static_cast<std::size_t>(i)]);
  EXPECT_EQ(f.warnings(1).rfind("a: R-hat: 1 of 3 quantities above 1.01 (largest 1.200, x[1])", 0), 0u)
      << f.warnings(1);
  EXPECT_EQ(f.warnings(2).rfind("a: bulk ESS: 1 of 3 quantities below 400 (100 per chain; smallest "
                                "50, x[2])", 0),
            0u)
      << f.warnings(2);

  ASSERT_EQ(f.draw_checks_size(), 2);
  const auto& a = f.draw_checks(0);
  EXPECT_EQ(a.run_id(), "a");
  EXPECT_TRUE(a.checked());
  EXPECT_EQ(a.n_chains(), 4);
  EXPECT_EQ(a.n_draws_used(), 1000);
  EXPECT_EQ(a.max_rhat(), 1.2);
  EXPECT_EQ(a.max_rhat_quantity(), "x[1]");
  EXPECT_EQ(a.min_ess_bulk(), 50.0);
  EXPECT_EQ(a.min_ess_bulk_quantity(), "x[2]");
  EXPECT_EQ(f.draw_checks(1).run_id(), "b");
  EXPECT_EQ(f.draw_checks(1).max_rhat(), 1.004);
}

TEST(RunWarnings, UncheckedDrawsSaySoWhereTheRhatLineWouldBeAndNeverPassForChecked) {
  v1::Footer f;
  for (int c = 0; c < 4; ++c) add_chain(f, "a", c);
  add_chain(f, "b", 4);
  f.mutable_chains(2)->add_warnings("pseudo-extended weights degenerate: max weight 0.99");
  report::RunDrawCheck big;
  big.run_id = "a";
  big.unchecked_reason = "the file holds 600000000 bytes, more than the 536870912 read back at "
                         "the run's end";
  // Run b is missing from the verdicts: unchecked too.
  const DrawVerdicts draws{{big}, "out.pemc"};
  annotate_run_warnings(f, {nuts_run("a", 10, 1000), nuts_run("b", 10, 1000)}, false, &draws);
  ASSERT_EQ(f.warnings_size(), 3) << f.DebugString();
  EXPECT_EQ(f.warnings(0), "R-hat and bulk ESS unchecked: the file holds 600000000 bytes, more than "
                           "the 536870912 read back at the run's end; `pemc-report summarize "
                           "out.pemc` gives them");
  EXPECT_EQ(f.warnings(1).rfind("1 of 4 chains: pseudo-extended weights degenerate", 0), 0u)
      << f.warnings(1);
  EXPECT_EQ(f.warnings(2), "R-hat and bulk ESS unchecked: the run's end did not read its draws; "
                           "`pemc-report summarize out.pemc` gives them");
  ASSERT_EQ(f.draw_checks_size(), 2);
  for (const auto& d : f.draw_checks()) {
    EXPECT_FALSE(d.checked());
    EXPECT_FALSE(d.has_max_rhat());
    EXPECT_FALSE(d.has_min_ess_bulk());
    EXPECT_FALSE(d.unchecked_reason().empty());
  }
  EXPECT_EQ(f.draw_checks(0).unchecked_reason(), big.unchecked_reason);
}

TEST(RunWarnings, WithoutDrawVerdictsNoDrawChecks) {
  v1::Footer f;
  for (int c = 0; c < 4; ++c) add_chain(f, "a", c);
  annotate_run_warnings(f, {nuts_run("a", 10, 1000)}, false);
  EXPECT_EQ(f.warnings_size(), 0);
  EXPECT_EQ(f.draw_checks_size(), 0);
}

}  // namespace
}  // namespace pemc::runner
