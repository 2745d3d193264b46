// Tests of the log Z trust rules (src/estimators/log_z_trust.hpp): each reason fires exactly at
// its threshold, from the keys each sampler reports, and the chains' agreement test has the
// chi-square distribution it claims.
#include "estimators/log_z_trust.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace pemc::estimators {
namespace {

using Estimates = std::map<std::string, double>;

TEST(LogZTrust, NoLogZNoFlags) {
  Estimates e{{"round_trips", 0.0}};
  EXPECT_TRUE(log_z_doubts(e).empty());
  EXPECT_TRUE(annotate_log_z_trust(e).empty());
  EXPECT_FALSE(e.count("log_z_untrusted"));
}

TEST(LogZTrust, RoundTripsAgainstTheBatches) {
  // PT / ST: at least max(10, batches) round trips.
  Estimates e{{"log_z", 1.0}, {"log_z_se", 0.1}, {"round_trips", 40.0}, {"log_z_batches", 40.0}};
  EXPECT_TRUE(log_z_doubts(e).empty());
  e["round_trips"] = 39.0;
  EXPECT_EQ(log_z_doubts(e), std::vector<std::string>{"round_trips"});
  e["log_z_batches"] = 4.0;  // then the floor of 10 applies
  EXPECT_TRUE(log_z_doubts(e).empty());
  e["round_trips"] = 9.0;
  EXPECT_EQ(log_z_doubts(e), std::vector<std::string>{"round_trips"});
  e.erase("log_z_batches");
  EXPECT_EQ(log_z_doubts(e), std::vector<std::string>{"round_trips"});
  // PT: enough in total, but one replica made none.
  Estimates pt{{"log_z", 1.0}, {"log_z_se", 0.1}, {"round_trips", 400.0}, {"log_z_batches", 40.0},
               {"round_trips_min_replica", 0.0}};
  EXPECT_EQ(log_z_doubts(pt), std::vector<std::string>{"round_trips"});
  pt["round_trips_min_replica"] = 1.0;
  EXPECT_TRUE(log_z_doubts(pt).empty());
  // The power path's ratio is judged the same way.
  Estimates r{{"log_z_ratio", 1.0}, {"log_z_ratio_se", 0.1}, {"round_trips", 2.0}};
  EXPECT_EQ(log_z_doubts(r), std::vector<std::string>{"round_trips"});
}

TEST(LogZTrust, AisWeights) {
  // ESS >= max(30, 1 % of the runs); Pareto k-hat <= min(1 - 1/log10 n, 0.7).
  Estimates e{{"log_z", 1.0}, {"log_z_se", 0.1}, {"n_runs", 10000.0}, {"ess", 100.0},
              {"log_weight_pareto_k", 0.69}};
  EXPECT_TRUE(log_z_doubts(e).empty());
  e["ess"] = 99.0;
  EXPECT_EQ(log_z_doubts(e), std::vector<std::string>{"weight_ess"});
  e["ess"] = 100.0;
  e["log_weight_pareto_k"] = 0.71;
  EXPECT_EQ(log_z_doubts(e), std::vector<std::string>{"weight_tail"});
  e["n_runs"] = 100.0;  // threshold 0.5 for 100 runs; ESS floor 30
  e["ess"] = 29.0;
  e["log_weight_pareto_k"] = 0.51;
  EXPECT_EQ(log_z_doubts(e), (std::vector<std::string>{"weight_ess", "weight_tail"}));
  e["log_weight_pareto_k"] = NAN;  // undefined k-hat (too few runs) is no evidence either way
  EXPECT_EQ(log_z_doubts(e), std::vector<std::string>{"weight_ess"});
}

TEST(LogZTrust, CtWeightsAndMissingSe) {
  Estimates e{{"log_z", 1.0}, {"ess_w1", 500.0}, {"rb_draws", 40000.0}};
  // No SE yet: flagged for that alone.
  EXPECT_EQ(log_z_doubts(e), std::vector<std::string>{"no_se"});
  e["log_z_se"] = 0.05;
  EXPECT_TRUE(log_z_doubts(e).empty());
  e["ess_w1"] = 399.0;  // below 1 % of 40000
  EXPECT_EQ(log_z_doubts(e), std::vector<std::string>{"weight_ess"});
  e["log_z_se"] = NAN;
  EXPECT_EQ(log_z_doubts(e), (std::vector<std::string>{"weight_ess", "no_se"}));
}

TEST(LogZTrust, AnnotateWritesTheFlagAndEachReason) {
  Estimates e{{"log_z", 1.0}, {"log_z_se", 0.1}, {"round_trips", 3.0}};
  EXPECT_EQ(annotate_log_z_trust(e), std::vector<std::string>{"round_trips"});
  EXPECT_EQ(e.at("log_z_untrusted"), 1.0);
  EXPECT_EQ(e.at("log_z_untrusted_round_trips"), 1.0);
  EXPECT_NE(describe_log_z_doubts(e).find("3 round trips < 10"), std::string::npos)
      << describe_log_z_doubts(e);
  Estimates good{{"log_z", 1.0}, {"log_z_se", 0.1}, {"round_trips", 300.0}};
  annotate_log_z_trust(good);
  EXPECT_EQ(good.at("log_z_untrusted"), 0.0);
  EXPECT_EQ(describe_log_z_doubts(good), "");
}

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
  const auto r = annotate_log_z_agreement({&a, &b, &c, &other});
  EXPECT_TRUE(r.disagree);
  for (auto* e : {&a, &b, &c}) {
    EXPECT_EQ(e->at("log_z_untrusted"), 1.0);
    EXPECT_EQ(e->at("log_z_untrusted_chains_disagree"), 1.0);
    EXPECT_NEAR(e->at("log_z_chains_spread_ratio"), 100.0, 1e-9);
    EXPECT_NE(describe_log_z_doubts(*e).find("chains_disagree"), std::string::npos);
  }
  EXPECT_FALSE(other.count("log_z_untrusted"));
}

}  // namespace
}  // namespace pemc::estimators
