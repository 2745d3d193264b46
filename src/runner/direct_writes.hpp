#pragma once
// Direct writes (OutputConfig.direct_writes): a chain's leader writes its record batches into the
// output itself instead of sending their bytes to the collector, which was the first bottleneck
// of the scaling model (docs/performance.md#scaling: its CPU per byte). Per batch the leader sends
// the collector a RecordRange (bytes, records, crc32); the collector reserves the file's next bytes
// for it (RecordWriter::reserve: the order, a checkpoint's position and the file's crc32 stay the
// collector's) and answers with the offset, where the leader writes the frames (FrameRangeWriter).
// The file holds the same frames as when the collector writes them.
//
// Checkpoints: a leader writes every range it was given and syncs before it sends its checkpoint
// part or its done message, so a checkpoint's records are all on disk.
//
// A leader whose write fails (a full disk, a file-size limit) says so and sends that range's
// frames to the collector (kTagRecordFill), and every later batch as before: the collector writes
// them or, failing too, ends the run saying what is on disk and how to continue. Ranges asked for after a
// leader's part are granted once the checkpoint is written (as the collector holds back frames).
//
// Where it is safe: a leader writes directly when the file it opens by name is the collector's
// (its first bytes match) and either it runs on the collector's host (the same kernel: its boot id)
// or the file is on a file system that takes writes from several hosts (Lustre, GPFS, BeeGFS; not
// NFS). Other leaders, and
// a leader on the collector's own rank, send their frames as before. Rank 0 logs who does what.
#include <boost/mpi/communicator.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "parallel/layout.hpp"
#include "records/frame_range_writer.hpp"

namespace pemc::runner {

// kTagRecordsReserve's message: a batch of whole frames a leader will write itself.
struct RecordRange {
  std::uint64_t bytes = 0;
  std::int64_t records = 0;
  std::uint32_t crc32 = 0;  // zlib crc32 of the batch's bytes

  std::string encode() const;
  static RecordRange decode(const std::string& bytes);
};

// kTagRecordsPlace's message: the offset the collector reserved for the leader's oldest waiting
// range.
std::string encode_offset(std::uint64_t offset);
std::uint64_t decode_offset(const std::string& bytes);

// kTagRecordFill's message: a range's offset, then its frames.
std::string encode_fill(std::uint64_t offset, const std::string& frames);
// The offset; `frames` gets the rest.
std::uint64_t decode_fill(const std::string& bytes, std::string_view& frames);

// Why a group leader may not write directly, before it opens the file; empty when it may.
// `enabled`: OutputConfig.direct_writes; `regular_file`: the collector's output is one;
// `same_kernel`: the leader runs on the collector's host; `fs_type`: statfs's f_type of the output
// where the leader sees it (-1: unknown); the host names are for the message.
std::string direct_write_refusal(bool enabled, bool regular_file, bool same_kernel, long fs_type,
                                 const std::string& host, const std::string& collector_host);

// Collective over `world`, after the collector wrote the file's first bytes (the header, or the
// resumed records): this rank's writer when it leads a group and may write directly, else nullptr.
// `enabled`: OutputConfig.direct_writes; `output`: the record file (a device such as /dev/null
// takes no ranges).
std::unique_ptr<records::FrameRangeWriter> set_up_direct_writes(
    const boost::mpi::communicator& world, const parallel::Layout& layout, bool enabled,
    const std::string& output);

}  // namespace pemc::runner
