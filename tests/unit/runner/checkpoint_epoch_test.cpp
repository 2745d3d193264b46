// The checkpoint-epoch protocol's state (runner/checkpoint_epoch.hpp), without MPI: when the
// coordinator opens an epoch, the stop, and a leader's answer.
#include "runner/checkpoint_epoch.hpp"

#include <gtest/gtest.h>

namespace pemc::runner {
namespace {

using Clock = CheckpointEpochs::Clock;
using std::chrono::seconds;

TEST(CheckpointEpochs, NoPeriodNoStopNoEpoch) {
  const auto t0 = Clock::now();
  CheckpointEpochs e(0.0, 0, t0, 0, 0);
  EXPECT_FALSE(e.due(t0 + seconds(1000), 1000000, 4, false).has_value());
}

TEST(CheckpointEpochs, PeriodicEpochsOneAtATime) {
  const auto t0 = Clock::now();
  CheckpointEpochs e(60.0, 0, t0, 0, 0);
  EXPECT_FALSE(e.due(t0 + seconds(59), 0, 2, false).has_value());
  const auto due = e.due(t0 + seconds(60), 0, 2, false);
  ASSERT_TRUE(due.has_value());
  EXPECT_FALSE(*due);  // periodic, not a stop
  const auto begin = e.open(false);
  EXPECT_EQ(begin.epoch, 1);
  EXPECT_FALSE(begin.stop);
  EXPECT_FALSE(e.stopping());
  // While it is open, nothing else starts, not even a stop.
  e.request_stop();
  EXPECT_FALSE(e.due(t0 + seconds(200), 0, 2, false).has_value());
  pemc::v1::CheckpointPart written;
  written.set_epoch(1);
  written.set_record_bytes(123);
  e.on_written(written, t0 + seconds(61), 0);
  EXPECT_EQ(e.last_written_sequence(), 1);
  EXPECT_EQ(e.last_written_bytes(), 123);
  // The stop asked for meanwhile comes next.
  const auto stop = e.due(t0 + seconds(62), 0, 2, false);
  ASSERT_TRUE(stop.has_value());
  EXPECT_TRUE(*stop);
  EXPECT_EQ(e.open(true).epoch, 2);
  EXPECT_TRUE(e.stopping());
}

TEST(CheckpointEpochs, IterationPeriodCountsEveryRunningChain) {
  const auto t0 = Clock::now();
  CheckpointEpochs e(0.0, 100, t0, 0, 0);
  EXPECT_FALSE(e.due(t0, 399, 4, false).has_value());
  ASSERT_TRUE(e.due(t0, 400, 4, false).has_value());
  e.open(false);
  pemc::v1::CheckpointPart written;
  written.set_epoch(1);
  e.on_written(written, t0, 400);
  EXPECT_FALSE(e.due(t0, 799, 4, false).has_value());
  EXPECT_TRUE(e.due(t0, 800, 4, false).has_value());
}

TEST(CheckpointEpochs, AFailedCheckpointKeepsTheOneOnDisk) {
  const auto t0 = Clock::now();
  CheckpointEpochs e(1.0, 0, t0, 7, 4096);  // resumed from checkpoint 7
  e.open(false);
  pemc::v1::CheckpointPart failed;
  failed.set_epoch(8);
  failed.set_error("disk full");
  e.on_written(failed, t0, 0);
  EXPECT_EQ(e.last_written_sequence(), 7);
  EXPECT_EQ(e.last_written_bytes(), 4096);
}

TEST(CheckpointEpochs, NothingToSaveOnceEveryChainFinished) {
  const auto t0 = Clock::now();
  CheckpointEpochs e(1.0, 0, t0, 0, 0);
  e.request_stop();
  EXPECT_FALSE(e.due(t0 + seconds(5), 0, 1, /*idle=*/true).has_value());
}

TEST(EpochBegin, RoundTrips) {
  const auto b = EpochBegin::decode(EpochBegin{42, true}.encode());
  EXPECT_EQ(b.epoch, 42);
  EXPECT_TRUE(b.stop);
  EXPECT_THROW(EpochBegin::decode("short"), std::exception);
}

TEST(LeaderEpoch, AStopEpochStopsTheLeaderOnceAnswered) {
  LeaderEpoch l;
  EXPECT_FALSE(l.open());
  l.pending = 3;
  l.pending_stop = false;
  EXPECT_TRUE(l.open());
  l.answered();
  EXPECT_FALSE(l.open());
  EXPECT_FALSE(l.stopped);
  l.pending = 4;
  l.pending_stop = true;
  l.answered();
  EXPECT_TRUE(l.stopped);
}

}  // namespace
}  // namespace pemc::runner
