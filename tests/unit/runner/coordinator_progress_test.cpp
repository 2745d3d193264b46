// The coordinator's progress book (runner/coordinator_progress.hpp): the iterations a job has
// left (earlier rounds included, a checkpoint's work taken off) and the ranks' reports.
#include "runner/coordinator_progress.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

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
  CoordinatorProgress p(runs, tasks, {0, 0}, 3, nullptr, {}, CoordinatorProgress::Clock::now());
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
  CoordinatorProgress p(runs, tasks, {5, 0}, 2, nullptr, {}, CoordinatorProgress::Clock::now());
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
  CoordinatorProgress p(runs, tasks, {0, 0}, 2, &resume, {}, t0);
  // Chain 0 (100 iterations) finished, chain 2 is 20 of 50 in: 100 + 30 left.
  EXPECT_EQ(p.total_iterations(), 130);
  // Nothing reported yet: the progress line does not divide by zero.
  p.log_if_due(t0 + std::chrono::seconds(3600), runs, 0, WorkerProgress(2), 1);
  EXPECT_EQ(p.done_iterations(), 0);
}

// The progress lines CoordinatorProgress logs while `f` runs.
template <class F>
std::string progress_lines(F f) {
  std::ostringstream out;
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>(
      "progress-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_pattern("%v");
  spdlog::set_default_logger(logger);
  f();
  spdlog::set_default_logger(previous);
  return out.str();
}

TEST(CoordinatorProgress, NoEtaBeforeTheCostIsMeasuredAndSlowRatesShowAsSuch) {
  const auto runs = two_runs();  // 100 + 50 iterations
  const std::vector<config::Task> tasks{{0, 0, 1}, {1, 1, 1}};
  const auto t0 = CoordinatorProgress::Clock::now();
  CoordinatorProgress p(runs, tasks, {0, 0}, 2, nullptr, {}, t0);
  WorkerProgress w(2);
  w.iterations = {3, 0};
  w.seconds = {1.0, 0.0};  // 1 chain-second, 2 % of the work: not measured yet
  p.on_report(1, w);
  const auto early = progress_lines([&] {
    p.log_if_due(t0 + std::chrono::seconds(10), runs, 0, WorkerProgress(2), 1);
  });
  EXPECT_THAT(early, ::testing::HasSubstr("0.3 it/s, ETA estimating..."));
  w.iterations = {9, 0};
  w.seconds = {6.0, 0.0};  // 6 chain-seconds: measured
  p.on_report(1, w);
  const auto later = progress_lines([&] {
    p.log_if_due(t0 + std::chrono::seconds(30), runs, 0, WorkerProgress(2), 1);
  });
  // 141 iterations left at 2/3 s each.
  EXPECT_THAT(later, ::testing::HasSubstr("(9/150 iterations), 0.3 it/s, ETA 94 s"));
}

TEST(CoordinatorProgress, AFailedChainsIterationsLeaveTheTotal) {
  const auto runs = two_runs();
  const std::vector<config::Task> tasks{{0, 0, 1}, {1, 1, 1}};
  const auto t0 = CoordinatorProgress::Clock::now();
  CoordinatorProgress p(runs, tasks, {0, 0}, 2, nullptr, {}, t0);
  WorkerProgress w(2);
  w.iterations = {20, 10};
  w.seconds = {10.0, 5.0};
  w.skipped = {80, 0};  // run 0's chain failed at iteration 20
  p.on_report(1, w);
  const auto line = progress_lines([&] {
    p.log_if_due(t0 + std::chrono::seconds(10), runs, 0, WorkerProgress(2), 1);
  });
  // 30 of the 70 iterations that will run; 40 left at 0.5 s each.
  EXPECT_THAT(line, ::testing::HasSubstr("progress  42.9% (30/70 iterations), 3 it/s, ETA 20 s"));
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
