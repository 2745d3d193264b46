#pragma once
// The messages between the ranks of one run besides parallel::Tag's (records, done, task requests
// and assignments, progress), and the small encodings they share. Bytes are in native order: every
// rank of a job runs the same binary.
#include <cstdint>
#include <initializer_list>
#include <string>

namespace pemc::runner {

enum RunnerTag : int {
  // Checkpoint epochs (checkpoint_epoch.hpp).
  kTagCkptRequest = 21,  // any rank -> coordinator: please stop with a checkpoint (signal, testing)
  kTagCkptBegin = 22,    // coordinator -> group leaders: EpochBegin
  kTagCkptPart = 23,     // group leader -> collector: CheckpointPart
  kTagCkptWritten = 24,  // collector -> coordinator: CheckpointPart {epoch, error}
  kTagCkptRounds = 25,   // coordinator -> collector: CheckpointPart {epoch, rounds}
  // Runs whose chains run in rounds (extended/multi_round_run.hpp).
  kTagRoundReport = 31,     // group leader -> coordinator: int32 run index, then the chain's report
  kTagRoundBroadcast = 32,  // coordinator -> every worker: int32 run index, int32 round, then what
                            // that round needs
  // Direct writes (direct_writes.hpp).
  kTagRecordRange = 41,   // group leader -> collector: RecordRange of a batch it writes itself
  kTagRecordOffset = 42,  // collector -> group leader: the offset of its oldest waiting range
  kTagRecordFill = 43,    // group leader -> collector: an offset, then the frames of its range
                          // that the leader could not write itself
};

// `ints`, then `payload`.
std::string with_int_prefix(std::initializer_list<std::int32_t> ints, const std::string& payload);

// The i-th int32 of with_int_prefix's bytes; throws IoError when the bytes are too short.
std::int32_t int_prefix(const std::string& bytes, std::size_t i);

// The rest of with_int_prefix's bytes after n ints.
std::string after_int_prefix(const std::string& bytes, std::size_t n);

// A task assignment (parallel::kTagTaskAssign): one int, an item or -1 (none left).
std::string encode_task(int item);
int decode_task(const std::string& bytes);

}  // namespace pemc::runner
