// The coordinator's progress book (runner/coordinator_progress.hpp): the iterations a job has
// left (earlier rounds included, a checkpoint's work taken off) and the ranks' reports.
#include "runner/coordinator_progress.hpp"

#include <gtest/gtest.h>

#include "runner/rank_messages.hpp"

namespace pemc::runner {
namespace {

std::vector<pemc::v1::RunConfig> two_runs() {
  std::vector<pemc::v1::RunConfig> runs(2);
  runs[0].set_warmup(10);
  runs[0].set_iterations(90);
  runs[1].set_warmup(0);
  runs[1].set_iterations(50);
  return runs;
}

TEST(CoordinatorProgress, CountsReportsAndFinishedWorkers) {
  const auto runs = two_runs();
  const std::vector<config::Task> tasks{{0, 0, 1}, {1, 1, 1}};
  CoordinatorProgress p(runs, tasks, {0, 0}, 3, nullptr, CoordinatorProgress::Clock::now());
  WorkerProgress w(2);
  w.iterations = {30, 5};
  p.on_report(1, w);
  p.set_own_iterations(0, 7);
  EXPECT_EQ(p.done_iterations(), 42);
  EXPECT_FALSE(p.all_finished({1, 2}));
  w.finished = true;
  p.on_report(1, w);
  p.on_report(2, w);
  EXPECT_TRUE(p.all_finished({1, 2}));
}

TEST(CoordinatorProgress, EarlierRoundsAddToTheWork) {
  const auto runs = two_runs();
  const std::vector<config::Task> tasks{{0, 0, 1}, {1, 0, 2}, {2, 1, 1}};
  CoordinatorProgress p(runs, tasks, {5, 0}, 2, nullptr, CoordinatorProgress::Clock::now());
  EXPECT_EQ(p.total_iterations(), 105 + 105 + 50);
}

TEST(CoordinatorProgress, AResumeTakesOffWhatTheCheckpointHolds) {
  const auto runs = two_runs();
  const std::vector<config::Task> tasks{{0, 0, 1}, {1, 0, 2}, {2, 1, 1}};
  pemc::v1::Checkpoint resume;
  resume.add_completed()->set_chain_id(0);
  auto* running = resume.add_in_progress();
  running->set_chain_id(2);
  running->set_next_iteration(20);
  const auto t0 = CoordinatorProgress::Clock::now();
  CoordinatorProgress p(runs, tasks, {0, 0}, 2, &resume, t0);
  // Chain 0 (100 iterations) finished, chain 2 is 20 of 50 in: 100 + 30 left.
  EXPECT_EQ(p.total_iterations(), 130);
  // Nothing reported yet: the progress line does not divide by zero.
  p.log_if_due(t0 + std::chrono::seconds(3600), runs, 0, WorkerProgress(2), 1);
  EXPECT_EQ(p.done_iterations(), 0);
}

TEST(RankMessages, IntPrefixRoundTripsAndRejectsShortMessages) {
  const auto bytes = with_int_prefix({3, -1}, "payload");
  EXPECT_EQ(int_prefix(bytes, 0), 3);
  EXPECT_EQ(int_prefix(bytes, 1), -1);
  EXPECT_EQ(after_int_prefix(bytes, 2), "payload");
  EXPECT_THROW(int_prefix("ab", 0), std::exception);
  EXPECT_EQ(decode_task(encode_task(17)), 17);
  EXPECT_EQ(decode_task(encode_task(-1)), -1);
}

}  // namespace
}  // namespace pemc::runner
