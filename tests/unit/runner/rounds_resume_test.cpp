// Resuming runs with rounds: a restarting round voids exactly its chains' summaries, states and
// warmup draws of that round; a run resuming in its final round keeps everything.
#include <gtest/gtest.h>

#include "config/multi_round.hpp"
#include "core/error.hpp"
#include "runner/rounds_resume.hpp"

namespace pemc::runner {
namespace {

std::vector<v1::RunConfig> two_runs() {
  v1::RunConfig a, b;
  a.set_name("pooled");
  b.set_name("other");
  return {a, b};
}

v1::Record draw(const std::string& run, int chain, std::int64_t iteration, bool warmup) {
  v1::Record r;
  auto& d = *r.mutable_draw();
  d.set_run_id(run);
  d.set_chain_id(chain);
  d.set_iteration(iteration);
  d.set_warmup(warmup);
  return r;
}

RoundsResume restarting_round() {
  extended::MultiRoundRun::ResumePoint p;
  p.round = 2;
  p.chains = {0, 2};  // chain 1 failed in an earlier round
  p.restarts = true;
  p.warmup_before = 45;
  return {{0, p}};
}

TEST(RoundsResume, ARestartingRoundDropsOnlyItsOwnRecords) {
  const auto runs = two_runs();
  const auto resume = restarting_round();
  EXPECT_TRUE(written_in_restarted_round(draw("pooled", 0, 45, true), resume, runs));
  EXPECT_TRUE(written_in_restarted_round(draw("pooled", 2, 60, true), resume, runs));
  EXPECT_FALSE(written_in_restarted_round(draw("pooled", 0, 44, true), resume, runs));   // earlier round
  EXPECT_FALSE(written_in_restarted_round(draw("pooled", 1, 50, true), resume, runs));   // not in it
  EXPECT_FALSE(written_in_restarted_round(draw("other", 0, 50, true), resume, runs));    // other run
  EXPECT_FALSE(written_in_restarted_round(draw("pooled", 0, 50, false), resume, runs));  // not warmup
  v1::Record estimates;
  estimates.mutable_estimates()->set_run_id("pooled");
  EXPECT_FALSE(written_in_restarted_round(estimates, resume, runs));

  auto final_round = resume;
  final_round[0].restarts = false;
  EXPECT_FALSE(written_in_restarted_round(draw("pooled", 0, 45, true), final_round, runs));
}

TEST(RoundsResume, ARestartingRoundVoidsItsChainsSummariesAndStates) {
  const auto runs = two_runs();
  v1::Checkpoint c;
  auto summary = [&](const std::string& run, int chain) {
    auto& s = *c.add_completed();
    s.set_run_id(run);
    s.set_chain_id(chain);
  };
  summary("pooled", 1);  // failed in an earlier round: stays
  summary("pooled", 2);  // failed in the restarting round: void
  summary("other", 5);
  auto& running = *c.add_in_progress();
  running.set_run_id("pooled");
  running.set_chain_id(0);
  drop_restarted_rounds(c, restarting_round(), runs);
  ASSERT_EQ(c.completed_size(), 2);
  EXPECT_EQ(c.completed(0).chain_id(), 1);
  EXPECT_EQ(c.completed(1).chain_id(), 5);
  EXPECT_EQ(c.in_progress_size(), 0);
}

TEST(RoundsResume, StatesMustFitThePlan) {
  auto runs = two_runs();
  runs[0].mutable_sampler()->mutable_nuts()->mutable_adaptation()->set_pooled(true);
  runs[0].set_warmup(100);
  runs[1].mutable_sampler()->mutable_nuts();
  const std::vector<config::Task> tasks{{0, 0, 1, 0}, {1, 0, 1, 1}, {2, 1, 1, 0}};
  v1::Checkpoint c;
  EXPECT_THROW(rounds_resume(runs, tasks, c, "x.ckpt"), ConfigError);  // no state for "pooled"
  auto pooled = config::make_multi_round_run(runs[0], 0);
  pooled->set_chains({0, 1});
  auto& s = *c.add_rounds();
  s.set_run_index(0);
  s.set_run_id("pooled");
  s.set_state(pooled->checkpoint_state());
  const auto resume = rounds_resume(runs, tasks, c, "x.ckpt");
  ASSERT_EQ(resume.size(), 1u);
  EXPECT_EQ(resume.at(0).round, 0);
  EXPECT_EQ(resume.at(0).chains, (std::vector<int>{0, 1}));
  EXPECT_TRUE(resume.at(0).restarts);

  auto& other = *c.add_rounds();
  other.set_run_index(1);
  other.set_run_id("other");
  EXPECT_THROW(rounds_resume(runs, tasks, c, "x.ckpt"), DataError);  // a run without rounds
  c.mutable_rounds()->RemoveLast();
  s.set_run_id("renamed");
  EXPECT_THROW(rounds_resume(runs, tasks, c, "x.ckpt"), DataError);
  s.set_run_id("pooled");
  s.set_state("garbage");
  EXPECT_THROW(rounds_resume(runs, tasks, c, "x.ckpt"), DataError);
}

}  // namespace
}  // namespace pemc::runner
