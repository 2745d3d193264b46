// Tests of the log Z checks over a run's chains (src/estimators/log_z_run_checks.hpp): the chains'
// agreement test has the chi-square distribution it claims; a run of fewer than 3 chains is
// unchecked, never trusted; a tail found in one AIS or ST chain's independent draws flags every
// chain of the run (so that no subset of the chains is left trusted when dropping the others
// biases it), with the pooled AIS estimate and the flagged chains' pull on it; and the checks
// derive the same keys however often they run.
#include "estimators/log_z_run_checks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "core/numerics.hpp"
#include "estimators/pareto_tail.hpp"

namespace pemc::estimators {
namespace {

using Estimates = std::map<std::string, double>;

TEST(LogZAgreement, ChiSquareOfTheWeightedScatter) {
  // Two chains 1 +- 0.1 and 1.3 +- 0.1: mean 1.15, chi2 = 2 * 1.5^2 = 4.5 on 1 dof,
  // p = P(chi2_1 >= 4.5) = erfc(sqrt(4.5 / 2)) = 0.0339.
  const auto a = log_z_agreement({1.0, 1.3}, {0.1, 0.1});
  EXPECT_EQ(a.n, 2);
  EXPECT_NEAR(a.weighted_mean, 1.15, 1e-12);
  EXPECT_NEAR(a.chi2, 4.5, 1e-12);
  EXPECT_NEAR(a.p_value, std::erfc(std::sqrt(2.25)), 1e-12);
  EXPECT_NEAR(a.spread_ratio, std::sqrt(4.5), 1e-12);
  EXPECT_FALSE(a.disagree);  // two chains never decide it
  // Unusable chains are left out; weights are 1 / se^2.
  const auto b = log_z_agreement({1.0, 2.0, NAN, 5.0}, {0.1, 0.2, 0.1, -1.0});
  EXPECT_EQ(b.n, 2);
  EXPECT_NEAR(b.weighted_mean, (1.0 / 0.01 + 2.0 / 0.04) / (1 / 0.01 + 1 / 0.04), 1e-12);
}

TEST(LogZAgreement, CalibratedChainsRarelyDisagree) {
  // 2000 runs of 16 chains with exact SEs: P(disagree) should be the test's 0.001 (binomial sd
  // sqrt(2000 * 0.001) = 1.4 runs): at most 8 of 2000. Chains whose SEs are a third of the
  // truth (chi2 = 9 chi2_15, above the 0.001 point 37.7 unless chi2_15 < 4.19, probability
  // 0.003) are caught in about 99.7 % of the runs: at least 1950.
  std::mt19937_64 gen(5);
  std::normal_distribution<double> n(0.0, 1.0);
  int false_alarms = 0, caught = 0;
  for (int run = 0; run < 2000; ++run) {
    std::vector<double> l(16), s(16), l2(16), s2(16);
    for (int c = 0; c < 16; ++c) {
      s[c] = 0.05 + 0.01 * c;
      l[c] = 3.0 + s[c] * n(gen);
      s2[c] = s[c] / 3;
      l2[c] = l[c];
    }
    false_alarms += log_z_agreement(l, s).disagree;
    caught += log_z_agreement(l2, s2).disagree;
  }
  EXPECT_LE(false_alarms, 8);
  EXPECT_GE(caught, 1950);
}

TEST(LogZAgreement, AnnotatesEveryChainOfTheRun) {
  Estimates a{{"log_z", 1.0}, {"log_z_se", 0.01}}, b{{"log_z", 2.0}, {"log_z_se", 0.01}},
      c{{"log_z", 3.0}, {"log_z_se", 0.01}}, other{{"ess", 4.0}};
  annotate_log_z_trust(a);
  const auto r = annotate_log_z_run(std::vector<Estimates*>{&a, &b, &c, &other});
  EXPECT_TRUE(r.agreement.disagree);
  for (auto* e : {&a, &b, &c}) {
    EXPECT_EQ(e->at("log_z_untrusted"), 1.0);
    EXPECT_EQ(e->at("log_z_untrusted_chains_disagree"), 1.0);
    EXPECT_NEAR(e->at("log_z_chains_spread_ratio"), 100.0, 1e-9);
    EXPECT_NE(describe_log_z_doubts(*e).find("chains_disagree"), std::string::npos);
  }
  EXPECT_FALSE(other.count("log_z_untrusted"));
}


TEST(LogZRunChecks, FewerThanThreeChainsAreUnchecked) {
  // A run of 1 or 2 chains with a log Z and an SE: no agreement check, so every chain says
  // unchecked (with the count) and none is trusted, whatever its own rules say.
  for (int n : {1, 2, 3}) {
    std::vector<Estimates> chains(static_cast<std::size_t>(n),
                                  Estimates{{"log_z", 4.0}, {"log_z_se", 0.1}});
    std::vector<Estimates*> ptrs;
    for (auto& c : chains) ptrs.push_back(&c);
    const auto r = annotate_log_z_run(ptrs);
    EXPECT_EQ(r.unchecked, n < 3) << n;
    for (const auto& c : chains) {
      EXPECT_EQ(c.at("log_z_unchecked"), n < 3 ? 1.0 : 0.0);
      EXPECT_EQ(c.at("log_z_chains_compared"), n);
      EXPECT_EQ(c.at("log_z_untrusted"), 0.0);
      EXPECT_EQ(log_z_trusted(c), n >= 3);
    }
  }
  // A chain without an SE is not compared: 3 chains of which 2 have one are unchecked too.
  Estimates a{{"log_z", 4.0}, {"log_z_se", 0.1}}, b{{"log_z", 4.1}, {"log_z_se", 0.1}},
      c{{"log_z", 4.0}};
  EXPECT_TRUE(annotate_log_z_run(std::vector<Estimates*>{&a, &b, &c}).unchecked);
  EXPECT_EQ(a.at("log_z_chains_compared"), 2.0);
  const std::string why = describe_unchecked_log_z(a);
  EXPECT_NE(why.find("log_z 4 ± 0.1 is unchecked: the run has 2 chains with a log Z and a "
                     "standard error, and the check that its chains agree within their SEs needs "
                     "at least 3"),
            std::string::npos)
      << why;
}

// An AIS chain's footer (annealed_importance.cpp's estimates) from its runs' log weights.
struct AisChain {
  Estimates e;
  std::vector<double> largest;
};

AisChain ais_chain(const std::vector<double>& log_w) {
  const double n = static_cast<double>(log_w.size());
  std::vector<double> twice;
  for (double w : log_w) twice.push_back(2.0 * w);
  const double lse = log_sum_exp(log_w), lse2 = log_sum_exp(twice);
  AisChain c;
  c.e = {{"log_z", lse - std::log(n)},
         {"n_runs", n},
         {"ess", std::exp(2.0 * lse - lse2)},
         {"log_weight_pareto_k", pareto_k_hat(log_w)}};
  c.e["log_z_se"] = std::sqrt(std::max(0.0, n / c.e["ess"] - 1.0) / (n - 1.0));
  c.largest = log_w;
  std::sort(c.largest.begin(), c.largest.end(), std::greater<>());
  c.largest.resize(ais_tail_size(n));
  return c;
}

LogZRunCheck check(std::vector<AisChain>& chains) {
  std::vector<RunChainLogZ> run;
  for (auto& c : chains) run.push_back({&c.e, c.largest});
  return annotate_log_z_run(run);
}

// Eight chains of 200 runs with light-tailed weights (log-normal, sd 0.3); in chain 3 two runs
// are e^4 times the typical weight (a rare mode reached by two annealing runs): only chain 3's own
// k-hat is above the limit for 200 runs. Judged alone, the seven others would stay trusted and,
// having missed that mass, low; judged as a run, every chain is flagged weight_tail, and the pooled
// estimate reports what the seven alone would give.
TEST(LogZRunChecks, OneAisChainsHeavyTailFlagsEveryChain) {
  std::mt19937_64 gen(42);
  std::normal_distribution<double> normal(0.0, 0.3);
  std::vector<AisChain> chains;
  for (int c = 0; c < 8; ++c) {
    std::vector<double> lw(200);
    for (auto& v : lw) v = normal(gen);
    if (c == 3) lw[17] = lw[151] = 4.0;
    chains.push_back(ais_chain(lw));
  }
  const double limit = pareto_k_threshold(200.0);
  for (int c = 0; c < 8; ++c)
    ASSERT_EQ(chains[c].e.at("log_weight_pareto_k") > limit, c == 3) << c;
  const auto r = check(chains);
  ASSERT_TRUE(r.pooled.has_value());
  EXPECT_EQ(r.pooled->n_chains, 8);
  for (const auto& c : chains) {
    EXPECT_EQ(c.e.at("log_z_untrusted"), 1.0);
    EXPECT_EQ(c.e.at("log_z_untrusted_weight_tail"), 1.0);
    EXPECT_EQ(c.e.at("log_z_chains_heavy_tail"), 1.0);
    EXPECT_EQ(c.e.at("pooled_heavy_tail_chains"), 1.0);
    EXPECT_EQ(c.e.at("pooled_log_z_untrusted"), 1.0);
  }
  // The pooled estimate over all 1600 runs against the 1400 of the seven light chains.
  std::vector<AisChainWeights> light;
  for (int c = 0; c < 8; ++c)
    if (c != 3)
      light.push_back({200.0, chains[c].e.at("log_z"), chains[c].e.at("ess"), chains[c].largest});
  const auto& e = chains[0].e;
  EXPECT_NEAR(e.at("pooled_log_z_without_heavy_tail_chains"), pool_ais_weights(light).log_z, 1e-12);
  EXPECT_GT(e.at("pooled_log_z") - e.at("pooled_log_z_without_heavy_tail_chains"), 0.05);
  const std::string pooled = describe_pooled_log_z(e);
  EXPECT_NE(pooled.find("pooled over 8 chains' 1600 runs: log_z"), std::string::npos) << pooled;
  EXPECT_NE(pooled.find("the 1 chain(s) whose own weights"), std::string::npos) << pooled;
  EXPECT_NE(pooled.find("it cannot be trusted: "), std::string::npos) << pooled;
  EXPECT_NE(pooled.find("weight_tail (1 chain(s) drew runs from a heavy tail"), std::string::npos)
      << pooled;
}

TEST(LogZRunChecks, LightAisTailsFlagNoChain) {
  std::mt19937_64 gen(43);
  std::normal_distribution<double> normal(0.0, 0.3);
  std::vector<AisChain> chains;
  for (int c = 0; c < 8; ++c) {
    std::vector<double> lw(200);
    for (auto& v : lw) v = normal(gen);
    chains.push_back(ais_chain(lw));
  }
  const auto r = check(chains);
  ASSERT_TRUE(r.pooled.has_value());
  EXPECT_LT(r.pooled->pareto_k, 0.5);
  for (const auto& c : chains) {
    EXPECT_EQ(c.e.at("log_z_untrusted"), 0.0) << describe_log_z_doubts(c.e);
    EXPECT_EQ(c.e.at("log_z_chains_heavy_tail"), 0.0);
    EXPECT_EQ(c.e.at("pooled_log_z_untrusted"), 0.0);
    EXPECT_FALSE(c.e.count("pooled_log_z_without_heavy_tail_chains"));
    EXPECT_TRUE(log_z_trusted(c.e));
  }
}

TEST(LogZRunChecks, OneStChainsHeavyTourTailFlagsEveryChain) {
  // Four ST chains of 1000 tours (limit 0.67): chain 2's tours have k-hat 0.8.
  std::vector<Estimates> chains(4);
  for (int c = 0; c < 4; ++c)
    chains[c] = {{"log_z", 5.0 + 0.01 * c}, {"log_z_se", 0.05}, {"round_trips", 300.0},
                 {"log_z_tours", 1000.0}, {"log_z_tour_pareto_k", c == 2 ? 0.8 : 0.2}};
  std::vector<Estimates*> ptrs;
  for (auto& c : chains) ptrs.push_back(&c);
  annotate_log_z_run(ptrs);
  for (const auto& c : chains) {
    EXPECT_EQ(c.at("log_z_untrusted_tour_tail"), 1.0);
    EXPECT_EQ(c.at("log_z_chains_heavy_tail"), 1.0);
    EXPECT_FALSE(c.count("pooled_log_z"));  // tours are not pooled
  }
}

TEST(LogZRunChecks, DerivesTheSameKeysEveryTime) {
  // The checks clear what they wrote before: after chain 2's k-hat is corrected, nothing of the
  // first verdict remains; and a second pass over the same numbers changes nothing.
  std::vector<Estimates> chains(4);
  for (int c = 0; c < 4; ++c)
    chains[c] = {{"log_z", 5.0}, {"log_z_se", 0.05}, {"round_trips", 300.0},
                 {"log_z_tours", 1000.0}, {"log_z_tour_pareto_k", c == 2 ? 0.8 : 0.2}};
  std::vector<Estimates*> ptrs;
  for (auto& c : chains) ptrs.push_back(&c);
  annotate_log_z_run(ptrs);
  chains[2]["log_z_tour_pareto_k"] = 0.2;
  annotate_log_z_run(ptrs);
  const auto once = chains;
  annotate_log_z_run(ptrs);
  EXPECT_EQ(chains, once);
  for (const auto& c : chains) {
    EXPECT_EQ(c.at("log_z_untrusted"), 0.0);
    EXPECT_FALSE(c.count("log_z_untrusted_tour_tail"));
    EXPECT_EQ(c.at("log_z_chains_heavy_tail"), 0.0);
  }
}

}  // namespace
}  // namespace pemc::estimators
