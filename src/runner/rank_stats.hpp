#pragma once
// What one rank's roles did, in counts and accumulated times, for the scaling study
// (docs/performance.md#scaling): messages each role handled and the CPU they took, the queue a
// rank's sends met, and how long its worker waited for the coordinator, the collector and its
// chain's group. Counted per message, never per draw; logged at the end of a run with
// --log-level debug (one "rank stats" line per rank, on rank 0). The draws do not depend on it.
#include <boost/mpi/communicator.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace pemc::runner {

struct RankStats {
  // Messages handled by one role: count, bytes, and thread CPU from receiving them to the end of
  // their handler (replies it sends included).
  struct Role {
    std::int64_t messages = 0;
    std::int64_t bytes = 0;
    double cpu_seconds = 0.0;
  };
  enum RoleBit : int { kCoordinator = 1, kCollector = 2, kWorker = 4 };

  int roles = 0;  // RoleBit flags
  Role coordinator, collector, worker;
  std::int64_t max_drain = 0;  // longest run of polls that each found a message waiting
  // Worker: task requests and the wall time until the coordinator's answer.
  std::int64_t task_waits = 0;
  double task_wait_seconds = 0.0;
  // Sends (parallel::SendStats): how many, the pending sends they met, waits for a free slot.
  std::int64_t sends = 0, sum_in_flight = 0, max_in_flight = 0, window_waits = 0, max_inbox = 0;
  double window_wait_seconds = 0.0;
  // The chain group's collectives (parallel::MpiGroupComm::Stats).
  std::int64_t group_calls = 0;
  double group_seconds = 0.0;
  // Collector: records and bytes written to the output.
  std::int64_t records = 0, record_bytes = 0;
  double cpu_seconds = 0.0;  // the process's user + system CPU
  // Worker: batches it wrote into the output itself (direct_writes.hpp), their bytes, and the
  // thread CPU of their crc32 and writes.
  std::int64_t direct_batches = 0, direct_bytes = 0;
  double direct_cpu_seconds = 0.0;

  // The role that handles a message with `tag` (parallel::Tag, RunnerTag).
  Role& role_of(int tag);
  void count(int tag, std::size_t bytes, double cpu_seconds);

  std::vector<double> encode() const;
  static RankStats decode(const std::vector<double>& values);
  // "rank stats: rank=R roles=... key=value ..." (the keys tests/bench/scaling.sh reads).
  std::string line(int rank) const;
};

// The user + system CPU seconds of this process so far.
double process_cpu_seconds();

// Collective: rank 0 gathers every rank's stats and logs one line per rank at debug level.
void log_rank_stats(const boost::mpi::communicator& world, const RankStats& mine);

}  // namespace pemc::runner
