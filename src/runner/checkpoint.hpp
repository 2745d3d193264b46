#pragma once
// Checkpoint files of pemc-dist (proto/pemc/v1/checkpoint.proto): naming, atomic write, read, the
// config hash that ties a checkpoint to its config, and rebuilding the record file's prefix.
//
// Integrity: a checkpoint file is a header (magic, format version, crc32 and length of the content)
// followed by the serialised Checkpoint. read_checkpoint() refuses a file whose header, length or
// checksum is wrong, and content that is inconsistent (check_checkpoint_content), with a DataError
// saying why: a damaged checkpoint never resumes a run.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pemc/v1/checkpoint.pb.h"
#include "pemc/v1/config.pb.h"
#include "pemc/v1/records.pb.h"
#include "records/record_writer.hpp"

namespace pemc::runner {

inline constexpr std::uint32_t kCheckpointFormatVersion = 2;
inline constexpr std::string_view kCheckpointMagic = "PEMCCKPT";
inline constexpr std::size_t kCheckpointHeaderBytes =
    24;  // magic, u32 version, u32 crc, u64 length

// CheckpointConfig.path, or "<output.path>.ckpt".
std::filesystem::path checkpoint_path(const pemc::v1::RunConfig& plan);

// The plan without the fields that do not change the draws: checkpoint, logging and output.path
// (a record file moved together with its checkpoint resumes from the new place).
pemc::v1::RunConfig hashed_plan(const pemc::v1::RunConfig& plan);

// FNV-1a (64 bit) of hashed_plan()'s deterministic serialisation: a resumed run must have the same.
std::uint64_t config_hash(const pemc::v1::RunConfig& plan);

// What differs between the plan a checkpoint was written for and this run's (both hashed_plan()s),
// one "field: checkpoint X, now Y" per difference, at most `max_lines` (then "... and N more").
std::vector<std::string> describe_plan_differences(const pemc::v1::RunConfig& checkpointed,
                                                   const pemc::v1::RunConfig& now,
                                                   std::size_t max_lines = 8);

// The file's bytes for `checkpoint`: header + content. IoError if the content exceeds 2 GiB
// (protobuf's limit).
std::string encode_checkpoint(const pemc::v1::Checkpoint& checkpoint);
// The header for `content` (its crc32 and length) followed by it.
std::string checkpoint_file_bytes(std::string_view content);

// Parses a checkpoint file's bytes: header (magic, version), length, checksum, then the content
// (parse and check_checkpoint_content). DataError "<name>: <reason>" on any failure.
pemc::v1::Checkpoint decode_checkpoint(std::string_view bytes, const std::string& name);

// Consistency of a checkpoint's content on its own: counts and positions non-negative, task range
// ordered, chain ids inside it and unique, states of matching sizes, finite numbers where a chain's
// state or totals need them. DataError "<name>: inconsistent checkpoint: <what>".
void check_checkpoint_content(const pemc::v1::Checkpoint& checkpoint, const std::string& name);

// Writes `<path>.tmp` (created afresh: a link at that name is removed, not followed), fsyncs it,
// renames it over `path` and fsyncs the directory: a reader sees the old checkpoint or the new
// one, never a torn one. IoError naming the path on failure.
void write_checkpoint(const std::filesystem::path& path, const pemc::v1::Checkpoint& checkpoint);

// IoError (unreadable) or DataError (not a checkpoint, wrong format version, damaged: see
// decode_checkpoint) naming the path. Reads the header first: a file whose length disagrees with it
// is refused without reading the rest.
pemc::v1::Checkpoint read_checkpoint(const std::filesystem::path& path);

// Makes fd-level durability explicit for a file written through another descriptor (fsync).
void fsync_file(const std::filesystem::path& path);

// Resume: rebuilds `path` as its first `bytes` bytes (magic and `n_records` whole frames) and
// returns a writer appending after them. The prefix is copied into `<path>.resume.tmp` (created
// afresh, never through a link), which then replaces `path` by rename, so the original stays
// intact until the copy is complete. DataError
// when the file is shorter than the checkpoint says, the prefix does not hold n_records frames, or
// (when `crc32` is given) the prefix's crc32 differs from it: another or a damaged record file.
// `drop`, when given, says which of those records the rebuilt file leaves out (records written in
// a round that restarts: rounds_resume.hpp); the checks above are of the file as it was.
using RecordDropFilter = std::function<bool(const pemc::v1::Record&)>;
records::RecordWriter reopen_record_file(const std::filesystem::path& path, std::int64_t bytes,
                                         std::int64_t n_records,
                                         std::optional<std::uint32_t> crc32 = std::nullopt,
                                         const RecordDropFilter& drop = nullptr);

// Checks, without changing anything, that `path` holds the records a checkpoint covers: at least
// `bytes` bytes whose crc32 is `crc32`. DataError naming the file otherwise.
void check_record_prefix(const std::filesystem::path& path, std::int64_t bytes,
                         std::uint32_t crc32);

}  // namespace pemc::runner
