// A group leader's record batches on their way into the output (the rank loop's worker role,
// rank_loop.hpp): sent to the collector, or written by the leader itself at offsets the collector
// reserves (direct_writes.hpp).
#include <spdlog/spdlog.h>

#include "core/cpu_time.hpp"
#include "core/error.hpp"
#include "records/frame.hpp"
#include "runner/direct_writes.hpp"
#include "runner/rank_loop.hpp"
#include "runner/rank_messages.hpp"

namespace pemc::runner {

// At most this many batches, and bytes of them, wait for their offsets (they wait longer only
// while the collector holds them for an open checkpoint epoch); then the leader waits.
constexpr std::size_t kMaxAwaitingBatches = 256;
constexpr std::size_t kMaxAwaitingBytes = std::size_t{64} << 20;

void RankLoop::ship_records(std::string frames, std::int64_t n) {
  if (!direct_) {
    deliver(layout_.collector, parallel::kTagRecords, std::move(frames));
    return;
  }
  const double t0 = thread_cpu_seconds();
  const RecordRange range{frames.size(), n, records::payload_crc32(frames)};
  stats_.direct_cpu_seconds += thread_cpu_seconds() - t0;
  awaiting_bytes_ += frames.size();
  awaiting_offset_.push_back(std::move(frames));
  deliver(layout_.collector, kTagRecordRange, range.encode());
  while (awaiting_bytes_ > kMaxAwaitingBytes || awaiting_offset_.size() > kMaxAwaitingBatches)
    service_wait();
}

void RankLoop::on_record_offset(const std::string& bytes) {
  const std::uint64_t offset = decode_offset(bytes);
  if (awaiting_offset_.empty())
    throw IoError("rank " + std::to_string(rank_) + ": an offset from the collector for no batch");
  std::string frames = std::move(awaiting_offset_.front());
  awaiting_offset_.pop_front();
  awaiting_bytes_ -= frames.size();
  if (direct_) {
    const double t0 = thread_cpu_seconds();
    try {
      direct_->write_at(offset, frames);
      ++stats_.direct_batches;
      stats_.direct_bytes += static_cast<std::int64_t>(frames.size());
      unsynced_ = true;
      stats_.direct_cpu_seconds += thread_cpu_seconds() - t0;
      return;
    } catch (const IoError& e) {
      spdlog::warn("rank {}: {}; its records go to the collector from now on", rank_, e.what());
      give_up_direct_writes();
    }
  }
  deliver(layout_.collector, kTagRecordFill, encode_fill(offset, frames));
}

// What this rank wrote itself stays (synced: a failure there is the run's, since a checkpoint may
// not count records that are not on disk); what it has not written yet goes to the collector.
void RankLoop::give_up_direct_writes() {
  if (unsynced_) direct_->sync();
  unsynced_ = false;
  direct_.reset();
}

void RankLoop::await_offsets() {
  while (!awaiting_offset_.empty()) service_wait();
}

void RankLoop::settle_direct_writes() {
  await_offsets();
  if (!direct_ || !unsynced_) return;
  direct_->sync();  // throws: records the checkpoint would count may not be on disk
  unsynced_ = false;
}

}  // namespace pemc::runner
