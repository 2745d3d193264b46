// Tests of the log Z checks on a run's footer (src/runner/log_z_checks.hpp): per run, the chains'
// trust keys are derived together (a run of 1 or 2 chains is unchecked; an AIS chain's heavy tail
// flags every chain of its run) and the log gets a warning per chain that is untrusted or
// unchecked, and one with the pooled estimate of an AIS run whose chains are flagged.
#include "runner/log_z_checks.hpp"

#include <gtest/gtest.h>

#include <string>

namespace pemc::runner {
namespace {

v1::ChainSummary* add_chain(v1::Footer& f, const std::string& run, int id,
                            const std::map<std::string, double>& estimates) {
  auto* c = f.add_chains();
  c->set_run_id(run);
  c->set_chain_id(id);
  c->set_seed(static_cast<std::uint64_t>(id + 1));
  c->set_status("ok");
  for (const auto& [k, v] : estimates) (*c->mutable_estimates())[k] = v;
  return c;
}

int count(const std::vector<std::string>& lines, const std::string& part) {
  int n = 0;
  for (const auto& l : lines) n += l.find(part) != std::string::npos;
  return n;
}

TEST(LogZChecks, ARunOfOneOrTwoChainsIsUncheckedInTheFooterAndTheLog) {
  v1::Footer f;
  add_chain(f, "st_one", 0, {{"log_z", 7.0}, {"log_z_se", 0.01}, {"round_trips", 300.0}});
  for (int c = 1; c <= 3; ++c)
    add_chain(f, "st_three", c, {{"log_z", 7.0}, {"log_z_se", 0.01}, {"round_trips", 300.0}});
  annotate_log_z_runs(f);
  EXPECT_EQ(f.chains(0).estimates().at("log_z_unchecked"), 1.0);
  EXPECT_EQ(f.chains(0).estimates().at("log_z_chains_compared"), 1.0);
  EXPECT_EQ(f.chains(0).estimates().at("log_z_untrusted"), 0.0);
  for (int c = 1; c <= 3; ++c) EXPECT_EQ(f.chains(c).estimates().at("log_z_unchecked"), 0.0);
  const auto lines = log_z_warnings(f);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("st_one chain 0 seed 1: log_z 7 ± 0.01 is unchecked: the run has 1 "
                          "chain with a log Z"),
            std::string::npos)
      << lines[0];
}

TEST(LogZChecks, AnAisChainsHeavyTailFlagsItsWholeRunAndTheLogShowsThePooledEstimate) {
  // Three AIS chains of 200 runs; chain 1's own k-hat 0.9 is above the limit for 200 (0.57).
  v1::Footer f;
  for (int c = 0; c < 3; ++c) {
    auto* s = add_chain(f, "ais", c,
                        {{"log_z", 3.0 + 0.02 * c}, {"log_z_se", 0.05}, {"n_runs", 200.0},
                         {"ess", 150.0}, {"log_weight_pareto_k", c == 1 ? 0.9 : 0.1}});
    for (int i = 0; i < 41; ++i) s->add_largest_log_weights(1.0 - 0.02 * i);
  }
  annotate_log_z_runs(f);
  for (const auto& c : f.chains()) {
    EXPECT_EQ(c.estimates().at("log_z_untrusted_weight_tail"), 1.0);
    EXPECT_EQ(c.estimates().at("pooled_n_runs"), 600.0);
  }
  const auto lines = log_z_warnings(f);
  ASSERT_EQ(lines.size(), 4u);
  for (int c = 0; c < 3; ++c)
    EXPECT_NE(lines[c].find(" seed " + std::to_string(c + 1) + ": log_z 3"), std::string::npos)
        << lines[c];
  EXPECT_EQ(count(lines, " cannot be trusted: weight_tail (1 chain of the run has a Pareto k-hat"),
            3);
  EXPECT_EQ(lines[3].rfind("ais: pooled over 3 chains' 600 runs: log_z", 0), 0u) << lines[3];
  EXPECT_NE(lines[3].find("it cannot be trusted: weight_tail"), std::string::npos) << lines[3];
}

}  // namespace
}  // namespace pemc::runner
