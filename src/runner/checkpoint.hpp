#pragma once
// Checkpoint files of pemc-dist (proto/pemc/v1/checkpoint.proto): naming, atomic write, read, the
// config hash that ties a checkpoint to its config, and rebuilding the record file's prefix.
#include <cstdint>
#include <filesystem>

#include "pemc/v1/checkpoint.pb.h"
#include "pemc/v1/config.pb.h"
#include "records/record_writer.hpp"

namespace pemc::runner {

inline constexpr std::uint32_t kCheckpointFormatVersion = 1;

// CheckpointConfig.path, or "<output.path>.ckpt".
std::filesystem::path checkpoint_path(const pemc::v1::RunConfig& plan);

// FNV-1a (64 bit) of the plan's deterministic serialisation with the fields that do not change the
// draws (checkpoint, logging) cleared: a resumed run must have the same hash.
std::uint64_t config_hash(const pemc::v1::RunConfig& plan);

// Writes `<path>.tmp`, fsyncs it, renames it over `path` and fsyncs the directory: a reader sees
// the old checkpoint or the new one, never a torn one. IoError naming the path on failure.
void write_checkpoint(const std::filesystem::path& path, const pemc::v1::Checkpoint& checkpoint);

// IoError (unreadable) or DataError (not a checkpoint, wrong format version) naming the path.
pemc::v1::Checkpoint read_checkpoint(const std::filesystem::path& path);

// Makes fd-level durability explicit for a file written through another descriptor (fsync).
void fsync_file(const std::filesystem::path& path);

// Resume: rebuilds `path` as its first `bytes` bytes (magic and `n_records` whole frames) and
// returns a writer appending after them. The prefix is copied into `<path>.resume.tmp`, which then
// replaces `path` by rename, so the original stays intact until the copy is complete. DataError when
// the file is shorter than the checkpoint says or the prefix does not hold n_records frames.
records::RecordWriter reopen_record_file(const std::filesystem::path& path, std::int64_t bytes,
                                         std::int64_t n_records);

}  // namespace pemc::runner
