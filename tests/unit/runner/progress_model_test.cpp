// The coordinator's ETA (runner/progress_model.hpp): runs priced at their own cost per iteration,
// the tail of a run with fewer chains left than ranks, and the workers' progress messages.
#include "runner/progress_model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"

namespace pemc::runner {
namespace {

TEST(EtaSeconds, PricesEachRunAtItsOwnCost) {
  // A study of plain NUTS (1e-5 s per iteration) and pseudo-extended NUTS (1e-3 s), two chains
  // of 10000 iterations each: NUTS is 3/4 done, PE has barely started. A single rate over all
  // iterations done (16000 in 1.15 chain-seconds) would promise (24000 - 16000 + ...) / rate,
  // a few seconds; PE's 19000 iterations left alone take 19 chain-seconds.
  std::vector<RunWork> runs(2);
  runs[0] = {10000, 5000, 15000, 0.15};
  runs[1] = {10000, 19000, 1000, 1.0};
  // Chains left: 1 NUTS + 2 PE, so 3 run at once on 4 groups.
  EXPECT_NEAR(eta_seconds(runs, 4), (5000 * 1e-5 + 19000 * 1e-3) / 3, 1e-12);
  EXPECT_NEAR(eta_seconds(runs, 2), (5000 * 1e-5 + 19000 * 1e-3) / 2, 1e-12);
}

TEST(EtaSeconds, RunsNotStartedArePricedAtTheMeanCost) {
  std::vector<RunWork> runs(2);
  runs[0] = {100, 100, 100, 2.0};  // 0.02 s per iteration
  runs[1] = {100, 200, 0, 0.0};
  EXPECT_NEAR(eta_seconds(runs, 1), (100 + 200) * 0.02, 1e-12);
}

TEST(EtaSeconds, NothingDoneOrNothingLeft) {
  std::vector<RunWork> runs(1);
  runs[0] = {100, 400, 0, 0.0};
  EXPECT_EQ(eta_seconds(runs, 4), 0.0);
  runs[0] = {100, 0, 400, 3.0};
  EXPECT_EQ(eta_seconds(runs, 4), 0.0);
}

TEST(WorkerProgress, RoundTripsThroughBytes) {
  WorkerProgress p(3);
  p.finished = true;
  p.iterations = {5, 0, 7};
  p.seconds = {0.5, 0.0, 1.75};
  p.skipped = {0, 40, 3};
  const auto back = WorkerProgress::decode(p.encode(), 3);
  EXPECT_TRUE(back.finished);
  EXPECT_EQ(back.iterations, p.iterations);
  EXPECT_EQ(back.seconds, p.seconds);
  EXPECT_EQ(back.skipped, p.skipped);
  EXPECT_EQ(back.total_iterations(), 12);
}

TEST(WorkerProgress, MalformedBytesAreAnError) {
  const auto bytes = WorkerProgress(2).encode();
  EXPECT_THAT([&] { WorkerProgress::decode(bytes, 3); },
              ::testing::ThrowsMessage<IoError>(::testing::HasSubstr(
                  "progress message of 56 bytes, expected 80 for 3 run(s)")));
}

}  // namespace
}  // namespace pemc::runner
