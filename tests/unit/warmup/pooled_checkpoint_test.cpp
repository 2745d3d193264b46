// Checkpoints of a pooled warmup: the coordinator's state survives encoding, and a coordinator
// restored from it mid-warmup pools the next rounds exactly as the one it was taken from.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "warmup/pooled_messages.hpp"
#include "support/pooled_run.hpp"
#include "warmup/pooled_warmup_rounds.hpp"

namespace pemc::warmup {
namespace {

using testing::pooled_run;

// Chain `id`'s report of round `round`: a window of `n` draws when `window`, its log density
// shifted by `offset`.
std::string report(int id, int round, bool window, int n, double offset) {
  ChainRoundReport r;
  r.chain_id = id;
  r.round = round;
  r.last_state = Vector::Constant(2, 0.1 * id + round);
  r.final_step_size = 0.3 + 0.01 * id;
  r.cost = {100 + id, 0, 0.5, 0.25};
  if (window) {
    r.window = ChainWindow{WindowSums(2, false), {}};
    for (int i = 0; i < n; ++i) {
      const double u = std::sin(1.7 * i + id + 3 * round);
      r.window->sums.add(Vector::Constant(2, u));
      r.window->log_density.push_back(offset + u);
    }
  }
  return r.encode();
}

// Feeds every chain's report of the run's current round; returns the round's end.
extended::MultiRoundRun::RoundEnd finish_round(PooledWarmupRounds& p, const std::vector<int>& ids,
                                               int round, bool window, int n) {
  std::optional<extended::MultiRoundRun::RoundEnd> end;
  for (int id : ids) end = p.on_report(report(id, round, window, n, 0.0), 1.0);
  EXPECT_TRUE(end);
  return *end;
}

void expect_same_broadcast(const std::string& a, const std::string& b) {
  const auto x = RoundBroadcast::decode(a), y = RoundBroadcast::decode(b);
  EXPECT_EQ(x.round, y.round);
  EXPECT_EQ(x.plan.phase, y.plan.phase);
  EXPECT_EQ(x.plan.window, y.plan.window);
  EXPECT_EQ(x.plan.warmup_before, y.plan.warmup_before);
  EXPECT_EQ(x.inverse_metric, y.inverse_metric);
  EXPECT_EQ(x.step_size, y.step_size);
  EXPECT_EQ(x.converged, y.converged);
  ASSERT_EQ(x.chains.size(), y.chains.size());
  for (const auto& [id, c] : x.chains) {
    EXPECT_EQ(c.state, y.chains.at(id).state);
    EXPECT_EQ(c.totals.gradient_evals, y.chains.at(id).totals.gradient_evals);
    EXPECT_EQ(c.step_size, y.chains.at(id).step_size);
  }
}

TEST(PooledCheckpoint, CoordinatorStateRoundTrip) {
  CoordinatorState s;
  RoundBroadcast b;
  b.round = 2;
  b.plan = {Phase::kWindow, 2, 50, 45};
  b.chains[3] = {Vector::Ones(2), {10, 0, 0.5, 0.5}, 0.0};
  s.broadcast = b.encode();
  s.totals[3] = {10, 0, 0.5, 0.5};
  s.totals[5] = {7, 0, 0.25, 0.25};  // a chain that failed earlier
  s.windows[1][3] = ChainWindow{WindowSums(2, false), {-1.0, -2.5}};
  s.windows[1][3].sums.add(Vector::Ones(2));
  s.decision = WindowDecision{false, 1, 1, 1.2, 30.0, 100, {0.5, 2.0}};
  const auto back = CoordinatorState::decode(s.encode());
  EXPECT_EQ(RoundBroadcast::decode(back.broadcast).plan.warmup_before, 45);
  ASSERT_EQ(back.totals.size(), 2u);
  EXPECT_EQ(back.totals.at(5).gradient_evals, 7);
  ASSERT_EQ(back.windows.at(1).size(), 1u);
  EXPECT_EQ(back.windows.at(1).at(3).log_density, (std::vector<double>{-1.0, -2.5}));
  EXPECT_EQ(back.windows.at(1).at(3).sums.count(), 1);
  ASSERT_TRUE(back.decision);
  EXPECT_EQ(back.decision->rhat, 1.2);
  EXPECT_EQ(back.decision->inverse_metric, (std::vector<double>{0.5, 2.0}));
  EXPECT_THROW(CoordinatorState::decode(b.encode()), DataError);  // a broadcast is not a state
}

TEST(PooledCheckpoint, RestoredCoordinatorPoolsTheSameRounds) {
  const std::vector<int> ids{0, 1, 2};
  PooledWarmupRounds a(pooled_run(), 0);
  a.set_chains(ids);
  EXPECT_TRUE(a.can_checkpoint());
  finish_round(a, ids, 0, false, 0);  // initial buffer
  finish_round(a, ids, 1, true, 25);  // window 1
  // Taken in window 2, after one chain has reported it: that report is not part of the state.
  a.on_report(report(0, 2, true, 50, 0.0), 1.0);
  const std::string state = a.checkpoint_state();

  PooledWarmupRounds b(pooled_run(), 0);
  b.set_chains(ids);
  const auto point = b.restore(state);
  EXPECT_EQ(point.round, 2);
  EXPECT_EQ(point.chains, ids);
  EXPECT_TRUE(point.restarts);
  EXPECT_EQ(point.warmup_before, 45);  // 20 + 25
  EXPECT_FALSE(point.broadcast.empty());
  EXPECT_TRUE(b.rounds_pending());

  // The restored coordinator takes chain 0's report of round 2 again, then pools the same rounds.
  std::optional<extended::MultiRoundRun::RoundEnd> ea, eb;
  for (int id : {1, 2}) ea = a.on_report(report(id, 2, true, 50, 0.0), 2.0);
  for (int id : ids) eb = b.on_report(report(id, 2, true, 50, 0.0), 2.0);
  ASSERT_TRUE(ea && eb);
  EXPECT_EQ(ea->next_round, eb->next_round);
  EXPECT_EQ(ea->next_chains, eb->next_chains);
  expect_same_broadcast(ea->broadcast, eb->broadcast);
  EXPECT_EQ(ea->record.estimates().n_gradient_evals(), eb->record.estimates().n_gradient_evals());
  EXPECT_EQ(ea->record.estimates().estimates().at("metric_draws"),
            eb->record.estimates().estimates().at("metric_draws"));

  // Driven to sampling, a state says each chain resumes on its own.
  int round = ea->next_round;
  while (RoundBroadcast::decode(ea->broadcast).plan.phase != Phase::kSample) {
    const bool window = RoundBroadcast::decode(ea->broadcast).plan.phase == Phase::kWindow;
    ea = finish_round(a, ids, round, window, 50);
    round = ea->next_round;
  }
  PooledWarmupRounds c(pooled_run(), 0);
  c.set_chains(ids);
  const auto sampling = c.restore(a.checkpoint_state());
  EXPECT_FALSE(sampling.restarts);
  EXPECT_EQ(sampling.round, round);
  EXPECT_FALSE(c.rounds_pending());
}

TEST(PooledCheckpoint, StateOfAnotherRunRefused) {
  PooledWarmupRounds a(pooled_run(), 0);
  a.set_chains({0, 1});
  finish_round(a, {0, 1}, 0, false, 0);
  PooledWarmupRounds b(pooled_run(), 0);
  b.set_chains({4, 5});  // chains the state does not know
  EXPECT_THROW(b.restore(a.checkpoint_state()), DataError);
  EXPECT_THROW(b.restore("garbage"), DataError);
}

}  // namespace
}  // namespace pemc::warmup
