// Tests of an AIS run's weights pooled over its chains (src/estimators/pooled_ais_weights.hpp): from
// each chain's summary (n_runs, log_z, ess and its largest log weights) the pooled log Z, ESS, SE
// and Pareto k-hat equal those of all the runs put together, and the tail fit uses only the part of
// the pooled largest weights that is known to be complete.
#include "estimators/pooled_ais_weights.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "core/numerics.hpp"
#include "estimators/pareto_tail.hpp"

namespace pemc::estimators {
namespace {

// What a chain's footer reports for its log weights (annealed_importance.cpp's formulas).
struct Chain {
  std::vector<double> log_w, largest;
  AisChainWeights summary() const {
    const double n = static_cast<double>(log_w.size());
    std::vector<double> twice;
    for (double w : log_w) twice.push_back(2.0 * w);
    const double lse = log_sum_exp(log_w), lse2 = log_sum_exp(twice);
    return {n, lse - std::log(n), std::exp(2.0 * lse - lse2), largest};
  }
};

Chain chain_of(std::vector<double> log_w) {
  Chain c{std::move(log_w), {}};
  c.largest = c.log_w;
  std::sort(c.largest.begin(), c.largest.end(), std::greater<>());
  c.largest.resize(ais_tail_size(static_cast<double>(c.log_w.size())));
  return c;
}

// Log weights with a Pareto tail of shape k (r = U^{-k}).
std::vector<double> pareto_log_weights(double k, int n, std::mt19937_64& gen) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> lw(static_cast<std::size_t>(n));
  for (auto& v : lw) v = -k * std::log(1.0 - u(gen));
  return lw;
}

TEST(PooledAisWeights, TheTailSizeIsWhatTheChainsOwnFitUses) {
  EXPECT_EQ(ais_tail_size(200.0), 41u);    // M = ceil(min(40, 42.4)) = 40, plus the cut-off
  EXPECT_EQ(ais_tail_size(10000.0), 301u);  // M = 300
  EXPECT_EQ(ais_tail_size(3.0), 2u);        // M = 1
  EXPECT_EQ(ais_tail_size(0.0), 0u);
}

TEST(PooledAisWeights, EqualsTheEstimatesOfAllRunsTogether) {
  std::mt19937_64 gen(17);
  std::vector<Chain> chains;
  std::vector<double> all;
  for (int c = 0; c < 6; ++c) {
    const auto lw = pareto_log_weights(0.4, 150 + 25 * c, gen);
    all.insert(all.end(), lw.begin(), lw.end());
    chains.push_back(chain_of(lw));
  }
  std::vector<AisChainWeights> summaries;
  for (const auto& c : chains) summaries.push_back(c.summary());
  const auto p = pool_ais_weights(summaries);
  const Chain together = chain_of(all);
  const auto t = together.summary();
  const double n = static_cast<double>(all.size());
  EXPECT_EQ(p.n_chains, 6);
  EXPECT_EQ(p.n_runs, n);
  EXPECT_NEAR(p.log_z, t.log_z, 1e-12);
  EXPECT_NEAR(p.ess, t.ess, 1e-9 * t.ess);
  EXPECT_NEAR(p.log_z_se, std::sqrt((n / t.ess - 1.0) / (n - 1.0)), 1e-12);
  // Each chain sent its largest fifth (its 80th percentile and up); the pooled fit needs the
  // ceil(3 sqrt(N)) = 108 largest of N = 1275 runs (above the 91st percentile), all of them among
  // what the chains sent.
  EXPECT_EQ(p.n_tail_weights, 108);
  EXPECT_NEAR(p.pareto_k, pareto_k_hat(all), 1e-12);
}

TEST(PooledAisWeights, UsesOnlyTheCompletePartOfThePooledTail) {
  // Chain 0 holds every large weight: it sent only its 41 largest of 200, so below its 41st
  // nothing is known to be in order, and the fit takes the 40 above it (fewer than the 3 sqrt(800)
  // = 85 of the pooled sample).
  std::mt19937_64 gen(5);
  auto big = pareto_log_weights(0.5, 200, gen);
  for (auto& v : big) v += 10.0;
  std::vector<AisChainWeights> summaries;
  std::vector<Chain> chains{chain_of(big)};
  for (int c = 0; c < 3; ++c) chains.push_back(chain_of(pareto_log_weights(0.5, 200, gen)));
  for (const auto& c : chains) summaries.push_back(c.summary());
  const auto p = pool_ais_weights(summaries);
  EXPECT_EQ(p.n_tail_weights, 40);
  EXPECT_NEAR(p.pareto_k, pareto_k_hat_of_largest(chains[0].largest, 800.0), 1e-12);
  // A chain that sent nothing while it has runs: nothing is known about the pooled tail.
  summaries[1].largest_log_weights = {};
  EXPECT_TRUE(std::isnan(pool_ais_weights(summaries).pareto_k));
}

TEST(PooledAisWeights, ChainsWithoutRunsAreLeftOut) {
  std::mt19937_64 gen(9);
  const Chain a = chain_of(pareto_log_weights(0.3, 100, gen));
  AisChainWeights empty{0.0, NAN, 0.0, {}};
  const auto p = pool_ais_weights({a.summary(), empty});
  EXPECT_EQ(p.n_chains, 1);
  EXPECT_EQ(p.n_runs, 100.0);
  EXPECT_NEAR(p.log_z, a.summary().log_z, 1e-12);
  const auto none = pool_ais_weights({empty});
  EXPECT_EQ(none.n_chains, 0);
  EXPECT_TRUE(std::isnan(none.log_z));
}

}  // namespace
}  // namespace pemc::estimators
