#include "runner/rank_stats.hpp"

#include <gtest/gtest.h>

#include "parallel/messenger.hpp"
#include "runner/rank_messages.hpp"

namespace pemc::runner {
namespace {

// Each message is charged to the role that handles it: records, ranges and reports to the
// collector, requests and progress to the coordinator, assignments, epochs and offsets to the
// worker.
TEST(RankStats, ChargesEachTagToTheRoleThatHandlesIt) {
  RankStats s;
  s.count(parallel::kTagRecords, 1000, 0.5);
  s.count(parallel::kTagDone, 10, 0.25);
  s.count(kTagCkptPart, 5, 0.0);
  s.count(parallel::kTagTaskRequest, 0, 0.125);
  s.count(parallel::kTagProgress, 16, 0.0);
  s.count(kTagRoundReport, 7, 0.0);
  s.count(parallel::kTagTaskAssign, 4, 0.0);
  s.count(kTagCkptBegin, 9, 0.0);
  s.count(kTagRecordRange, 24, 0.0);  // direct writes: the collector reserves, the leader writes
  s.count(kTagRecordOffset, 8, 0.0);
  EXPECT_EQ(s.collector.messages, 4);
  EXPECT_EQ(s.collector.bytes, 1039);
  EXPECT_DOUBLE_EQ(s.collector.cpu_seconds, 0.75);
  EXPECT_EQ(s.coordinator.messages, 3);
  EXPECT_EQ(s.coordinator.bytes, 23);
  EXPECT_DOUBLE_EQ(s.coordinator.cpu_seconds, 0.125);
  EXPECT_EQ(s.worker.messages, 3);
}

// Rank 0 gathers the counters as doubles: every field survives the trip, and the line names them.
TEST(RankStats, EncodeDecodeKeepsEveryFieldAndTheLineShowsThem) {
  RankStats s;
  s.roles = RankStats::kCoordinator | RankStats::kWorker;
  s.count(parallel::kTagProgress, 16, 0.001);
  s.max_drain = 3;
  s.task_waits = 2;
  s.task_wait_seconds = 0.01;
  s.sends = 4;
  s.sum_in_flight = 6;
  s.max_in_flight = 3;
  s.window_waits = 1;
  s.window_wait_seconds = 0.02;
  s.max_inbox = 5;
  s.group_calls = 100;
  s.group_seconds = 0.5;
  s.records = 123456789;
  s.record_bytes = 9876543210;
  s.cpu_seconds = 1.5;
  s.direct_batches = 7;
  s.direct_bytes = 4096;
  s.direct_cpu_seconds = 0.003;
  const RankStats d = RankStats::decode(s.encode());
  EXPECT_EQ(d.encode(), s.encode());
  EXPECT_EQ(d.line(7),
            "rank stats: rank=7 roles=CW cpu_s=1.5000 coord_msgs=1 coord_bytes=16 "
            "coord_cpu_s=0.001000 coll_msgs=0 coll_bytes=0 coll_cpu_s=0.000000 worker_msgs=0 "
            "worker_cpu_s=0.000000 records=123456789 record_bytes=9876543210 max_drain=3 "
            "task_waits=2 task_wait_s=0.010000 sends=4 mean_in_flight=1.500 max_in_flight=3 "
            "window_waits=1 window_wait_s=0.020000 max_inbox=5 group_calls=100 "
            "group_wait_s=0.500000 direct_batches=7 direct_bytes=4096 direct_cpu_s=0.003000");
}

}  // namespace
}  // namespace pemc::runner
