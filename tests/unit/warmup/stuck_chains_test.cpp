// Which chains a pooled warmup restarts after a window (warmup/stuck_chains.hpp), and what the
// coordinator does with them: the restarted chain starts its next round from its donor's state,
// its windows leave the pooled metric and the convergence verdict, and the count is kept.
#include "warmup/stuck_chains.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/pooled_run.hpp"
#include "warmup/pooled_warmup_rounds.hpp"

namespace pemc::warmup {
namespace {

// A chain's cost: gradients and seconds (wall and CPU alike).
ChainTotals totals(std::int64_t gradients, double seconds) {
  ChainTotals t;
  t.gradient_evals = gradients;
  t.wall_seconds = t.cpu_seconds = seconds;
  return t;
}

// A window report: `n` draws of a 2-D state around `centre`, log densities spread over
// [lp, lp + 1], adapted step size `step`.
ChainRoundReport window_report(int id, int round, double step, double lp, double centre = 0.0,
                               int n = 50) {
  ChainRoundReport r;
  r.chain_id = id;
  r.round = round;
  r.last_state = Vector::Constant(2, centre + 0.01 * id);
  r.final_step_size = step;
  r.cost = totals(100, 0.5);
  r.window = ChainWindow{WindowSums(2, false), {}};
  for (int i = 0; i < n; ++i) {
    const double u = 0.5 + 0.5 * std::sin(1.7 * i + id);  // in [0, 1]
    r.window->sums.add(Vector::Constant(2, centre + u));
    r.window->log_density.push_back(lp + u);
  }
  return r;
}

std::map<int, ChainRoundReport> by_id(std::vector<ChainRoundReport> reports) {
  std::map<int, ChainRoundReport> out;
  for (auto& r : reports) out.emplace(r.chain_id, std::move(r));
  return out;
}

TEST(StuckChains, AChainWithCollapsedStepsBelowTheOthersRestartsFromOne) {
  const auto reports = by_id({window_report(0, 1, 0.6, 250.0), window_report(1, 1, 1e-40, -1e90),
                              window_report(2, 1, 0.5, 251.0)});
  const auto restarts = stuck_chain_restarts(reports, 1);
  ASSERT_EQ(restarts.size(), 1u);
  EXPECT_EQ(restarts[0].chain_id, 1);
  EXPECT_TRUE(restarts[0].donor_id == 0 || restarts[0].donor_id == 2);
  EXPECT_EQ(restarts[0].step_size, 1e-40);
  const auto& lp = reports.at(1).window->log_density;
  EXPECT_EQ(restarts[0].max_log_density, *std::max_element(lp.begin(), lp.end()));
  const auto& donor_lp = reports.at(restarts[0].donor_id).window->log_density;
  EXPECT_EQ(restarts[0].donor_min_log_density,
            *std::min_element(donor_lp.begin(), donor_lp.end()));
  EXPECT_DOUBLE_EQ(restarts[0].donor_step_size, reports.at(restarts[0].donor_id).final_step_size);
}

TEST(StuckChains, SeveralStuckChainsSpreadOverTheFreeOnes) {
  const auto reports =
      by_id({window_report(0, 2, 0.6, 250.0), window_report(1, 2, 1e-40, -1e90),
             window_report(2, 2, 0.5, 251.0), window_report(3, 2, 1e-50, -1e100)});
  const auto restarts = stuck_chain_restarts(reports, 2);
  ASSERT_EQ(restarts.size(), 2u);
  EXPECT_EQ(restarts[0].chain_id, 1);
  EXPECT_EQ(restarts[1].chain_id, 3);
  EXPECT_NE(restarts[0].donor_id, restarts[1].donor_id);  // both free chains donate
  // A pure function of the reports and the round.
  const auto again = stuck_chain_restarts(reports, 2);
  EXPECT_EQ(again[0].donor_id, restarts[0].donor_id);
  EXPECT_EQ(again[1].donor_id, restarts[1].donor_id);
}

TEST(StuckChains, StuckBehindAStuckChainRestartsFromAFreeOne) {
  // 2 is behind 1, and 1 behind 0: both restart from 0, the only chain behind none.
  const auto reports = by_id({window_report(0, 1, 0.6, 250.0), window_report(1, 1, 1e-5, 10.0),
                              window_report(2, 1, 1e-9, -50.0)});
  const auto restarts = stuck_chain_restarts(reports, 1);
  ASSERT_EQ(restarts.size(), 2u);
  EXPECT_EQ(restarts[0].donor_id, 0);
  EXPECT_EQ(restarts[1].donor_id, 0);
}

TEST(StuckChains, AModeIsNotAStuckChain) {
  // A narrower mode: much smaller steps but a higher log density.
  auto restarts = [](double step, double lp) {
    return stuck_chain_restarts(
        by_id({window_report(0, 1, 0.6, 250.0), window_report(1, 1, step, lp)}), 1);
  };
  EXPECT_TRUE(restarts(1e-5, 300.0).empty());
  // A wider mode, or a chain still on its way in: a lower log density at similar steps.
  EXPECT_TRUE(restarts(0.9, 100.0).empty());
  // Small steps, but log densities that overlap the other chain's.
  EXPECT_TRUE(restarts(1e-5, 249.5).empty());
}

TEST(StuckChains, TheStepRatioBound) {
  const double s = 0.5;
  auto with_step = [&](double ratio) {
    return stuck_chain_restarts(
        by_id({window_report(0, 1, s, 250.0), window_report(1, 1, ratio * s, -1e3)}), 1);
  };
  EXPECT_EQ(with_step(0.9 * kStuckStepRatio).size(), 1u);
  EXPECT_TRUE(with_step(1.1 * kStuckStepRatio).empty());
}

TEST(StuckChains, NoVerdictWithoutAFiniteWindow) {
  auto bad = window_report(1, 1, 1e-40, -1e90);
  bad.window->log_density[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(stuck_chain_restarts(by_id({window_report(0, 1, 0.6, 250.0), bad}), 1).empty());
  auto failed = window_report(1, 1, 1e-40, -1e90);
  failed.ok = false;
  EXPECT_TRUE(stuck_chain_restarts(by_id({window_report(0, 1, 0.6, 250.0), failed}), 1).empty());
  auto no_step = window_report(1, 1, 0.0, -1e90);
  EXPECT_TRUE(stuck_chain_restarts(by_id({window_report(0, 1, 0.6, 250.0), no_step}), 1).empty());
}

// The coordinator's side.
using testing::pooled_run;

ChainRoundReport init_report(int id) {
  ChainRoundReport r;
  r.chain_id = id;
  r.round = 0;
  r.last_state = Vector::Constant(2, id);
  r.final_step_size = 0.5;
  r.cost = totals(100, 0.5);
  return r;
}

RoundBroadcast run_round(PooledWarmupRounds& p, const std::vector<ChainRoundReport>& reports) {
  std::optional<extended::MultiRoundRun::RoundEnd> end;
  for (const auto& r : reports) end = p.on_report(r.encode(), 1.0);
  EXPECT_TRUE(end);
  return RoundBroadcast::decode(end->broadcast);
}

TEST(StuckChains, TheCoordinatorRestartsAStuckChainAndPoolsWithoutIt) {
  PooledWarmupRounds p(pooled_run(), 0);
  p.set_chains({0, 1, 2});
  run_round(p, {init_report(0), init_report(1), init_report(2)});
  // Window 1: chains 0 and 2 agree (log densities overlapping, the same spread), 1 is stuck.
  const auto a = window_report(0, 1, 0.6, 250.0, 1.0), c = window_report(2, 1, 0.5, 250.2, 1.0);
  const auto stuck = window_report(1, 1, 1e-40, -1e90, 40.0);
  const auto b = run_round(p, {a, stuck, c});
  ASSERT_EQ(b.plan.phase, Phase::kWindow);
  EXPECT_FALSE(b.converged);
  const Vector& start = b.chains.at(1).state;
  EXPECT_TRUE(start == a.last_state || start == c.last_state);
  EXPECT_EQ(b.chains.at(1).totals.restarts, 1);
  EXPECT_EQ(b.chains.at(0).totals.restarts, 0);
  // The metric is the two free chains' alone: the stuck chain's draws at 40 would make it ~400.
  WindowSums free(2, false);
  free.merge(a.window->sums);
  free.merge(c.window->sums);
  EXPECT_EQ(b.inverse_metric, regularised_inverse_metric(free));

  // The checkpointed state carries the restart and the forgotten windows.
  PooledWarmupRounds q(pooled_run(), 0);
  q.set_chains({0, 1, 2});
  q.restore(p.checkpoint_state());

  // Window 2: all three agree; the verdict now spans window 2 only (chain 1's window 1 is gone).
  const std::vector<ChainRoundReport> w2{window_report(0, 2, 0.6, 250.0, 1.0),
                                         window_report(1, 2, 0.55, 250.1, 1.0),
                                         window_report(2, 2, 0.5, 250.2, 1.0)};
  const auto next = run_round(p, w2);
  const auto restored = run_round(q, w2);
  EXPECT_EQ(next.inverse_metric, restored.inverse_metric);
  EXPECT_EQ(next.chains.at(1).totals.restarts, 1);
  EXPECT_EQ(restored.chains.at(1).totals.restarts, 1);
  WindowSums all(2, false);
  for (const auto& r : w2) all.merge(r.window->sums);
  EXPECT_EQ(next.inverse_metric, regularised_inverse_metric(all));
}

TEST(StuckChains, RestartsSurviveTheBroadcastsEncoding) {
  RoundBroadcast b;
  b.round = 3;
  b.plan = {Phase::kWindow, 2, 50, 95};
  ChainTotals t = totals(10, 0.5);
  t.restarts = 2;
  b.chains[4] = {Vector::Ones(2), t, 0.0};
  EXPECT_EQ(RoundBroadcast::decode(b.encode()).chains.at(4).totals.restarts, 2);
}

}  // namespace
}  // namespace pemc::warmup
