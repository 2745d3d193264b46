// Tests of the log Z trust rules (src/estimators/log_z_trust.hpp): each reason fires exactly at
// its threshold, from the keys each sampler reports and the run-level keys that replace a chain's
// own verdict on its weights (estimators/log_z_run_checks.hpp writes them; tested there).
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

TEST(LogZTrust, AisWeightsAreJudgedOnTheRunsKeys) {
  // A chain whose own weights look fine is flagged when the run's pooled weights have a tail too
  // heavy for its 200 runs (k-hat 0.60 > 0.57), or an ESS too small for them (pooled 3 % of the
  // runs: 6 for a chain of 200 < 30), or when another chain of the run failed a rule on its own.
  Estimates e{{"log_z", 1.0}, {"log_z_se", 0.1}, {"n_runs", 200.0}, {"ess", 150.0},
              {"log_weight_pareto_k", 0.2}};
  EXPECT_TRUE(log_z_doubts(e).empty());
  e["pooled_n_runs"] = 6400.0;
  e["pooled_ess"] = 5000.0;
  e["pooled_log_weight_pareto_k"] = 0.60;
  EXPECT_EQ(log_z_doubts(e), std::vector<std::string>{"weight_tail"});
  EXPECT_NE(describe_log_z_doubts(e).find("the run's pooled weights (6400 runs) 0.60 > 0.57"),
            std::string::npos)
      << describe_log_z_doubts(e);
  e["pooled_log_weight_pareto_k"] = 0.3;
  e["pooled_ess"] = 192.0;
  EXPECT_EQ(log_z_doubts(e), std::vector<std::string>{"weight_ess"});
  e["pooled_ess"] = 5000.0;
  EXPECT_TRUE(log_z_doubts(e).empty());
  e["log_z_chains_heavy_tail"] = 1.0;
  e["log_z_chains_low_ess"] = 2.0;
  EXPECT_EQ(log_z_doubts(e), (std::vector<std::string>{"weight_ess", "weight_tail"}));
  EXPECT_NE(describe_log_z_doubts(e).find("1 chain of the run has a Pareto k-hat above the limit"),
            std::string::npos)
      << describe_log_z_doubts(e);
}

TEST(LogZTrust, StToursWithAHeavyTail) {
  // ST's regeneration tours: k-hat above min(1 - 1/log10 n, 0.7) for its n tours (0.67 for 1000);
  // no batches, so 10 round trips are enough.
  Estimates e{{"log_z", 1.0}, {"log_z_se", 0.1}, {"round_trips", 12.0}, {"log_z_tours", 1000.0},
              {"log_z_tour_pareto_k", 0.66}};
  EXPECT_TRUE(log_z_doubts(e).empty());
  e["log_z_tour_pareto_k"] = 0.68;
  EXPECT_EQ(log_z_doubts(e), std::vector<std::string>{"tour_tail"});
  e["log_z_tour_pareto_k"] = 0.3;
  e["log_z_chains_heavy_tail"] = 3.0;
  EXPECT_EQ(log_z_doubts(e), std::vector<std::string>{"tour_tail"});
}

TEST(LogZTrust, TrustedOnlyWhenCheckedAndNotFlagged) {
  Estimates e{{"log_z", 1.0}, {"log_z_se", 0.1}, {"log_z_untrusted", 0.0}};
  EXPECT_FALSE(log_z_trusted(e));  // the run-level checks have not run
  e["log_z_unchecked"] = 1.0;
  EXPECT_FALSE(log_z_trusted(e));
  EXPECT_TRUE(log_z_unchecked(e));
  e["log_z_unchecked"] = 0.0;
  EXPECT_TRUE(log_z_trusted(e));
  e["log_z_untrusted"] = 1.0;
  EXPECT_FALSE(log_z_trusted(e));
  e["log_z_untrusted_round_trips"] = 1.0;
  e["log_z_chains_compared"] = 2.0;
  e["pooled_log_z"] = 1.0;
  clear_log_z_trust(e);
  EXPECT_EQ(e, (Estimates{{"log_z", 1.0}, {"log_z_se", 0.1}}));
}

}  // namespace
}  // namespace pemc::estimators
