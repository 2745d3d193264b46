#pragma once
// Which data file a run's observed_data comes from (export --format netcdf; observed_data.hpp),
// and whether it still holds the data the run read. A record file's header names each run's
// config (so target.stan.data_file, as written: a relative path is relative to pemc-dist's working
// directory), and, since it recorded them, the SHA-256 of every file the runs read
// (Header.inputs) and rank 0's working directory (Header.working_directory). The report opens the
// data file only to read it as JSON, and only when its content is the recorded one: a file
// edited or replaced since the run is refused rather than exported as the run's data. The user
// may name the data instead (--data FILE): that file is trusted, with a note when its content is
// not the one recorded.
#include <cstdint>
#include <filesystem>
#include <string>

#include "pemc/v1/config.pb.h"
#include "pemc/v1/records.pb.h"

namespace pemc::report {

struct ObservedDataSource {
  enum class Kind {
    kNone,         // the run's target is no Stan model with a data file: no observed_data
    kNotRecorded,  // the file records no hashes of its inputs (an older pemc-dist) and no --data
    kRead,         // `text` holds the data
  };
  Kind kind = Kind::kNone;
  std::string run_data_file;    // target.stan.data_file as the run's config names it
  std::filesystem::path path;   // the file read (kRead): the run's, resolved, or --data's
  std::string text;             // its content (kRead)
  std::string sha256;           // of `text` (kRead)
  std::string recorded_sha256;  // the header's hash of the run's data file ("": not recorded)
  // --data whose content is not the recorded one, or cannot be compared with it: what to tell the
  // user (also written into the group's attributes). Empty otherwise.
  std::string note;
};

// The largest data file read, as pemc-dist's own limit (config/targets/stan.cpp).
inline constexpr std::uintmax_t kMaxObservedDataBytes = std::uintmax_t{1} << 30;

// `path` as the run opened it: absolute paths as they are, relative ones against the header's
// working directory (the current one when the header does not record it).
std::filesystem::path resolve_run_path(const pemc::v1::Header& header, const std::string& path);

// Run `run_id` (config `run`) of the file with `header`: its data, from `data_override` when not
// empty (the user's --data), else from the run's data file, which must have the recorded content.
// ConfigError naming the run and the file when the run's data file cannot be read or its content
// changed since the run (the message says to pass --data FILE or --no-observed-data); when
// --data cannot be read. UntrustedInputError for a file that is not a regular file or is larger
// than kMaxObservedDataBytes.
ObservedDataSource observed_data_source(const pemc::v1::Header& header,
                                        const pemc::v1::RunConfig& run, const std::string& run_id,
                                        const std::filesystem::path& data_override);

}  // namespace pemc::report
