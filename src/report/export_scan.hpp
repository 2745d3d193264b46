#pragma once
// The first pass of every export (export.hpp): which runs and chains a record file holds, their
// quantities, whether they carry weights, how many draws each chain has, and the checks that must
// pass before any output is written. Internal to src/report/export*.cpp.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pemc/v1/records.pb.h"
#include "report/diagnostics_traces.hpp"
#include "report/export.hpp"
#include "config/sampler_columns.hpp"
#include "targets/target.hpp"

namespace pemc::report::export_detail {

struct ChainScan {
  std::string run_id;
  int chain_id = 0;
  std::uint64_t seed = 0;
  std::int64_t n_draws = 0;      // post-warmup draws exported
  std::int64_t n_warmup = 0;     // warmup draws exported (include_warmup)
  int max_samples = 1;           // most samples in one of its draws
  double final_step_size = 0.0;  // from the footer, else the last draw's
  std::string status;            // footer status, or why it is missing
  double wall_seconds = -1.0;    // from the footer (-1: not there)
  // Resampling (export_resample.hpp): every post-warmup sample's export log weight, in order,
  // the number of samples per draw, and then how many copies of each sample are written.
  std::vector<double> log_weights;
  std::vector<int> samples_per_draw;
  std::vector<int> copies;
};

struct RunScan {
  RunMeta meta;
  std::vector<std::string> names;   // Stan names of the quantities
  bool named_outputs = false;       // values from Draw.outputs
  bool weighted = false;            // some draw carries weighted samples
  bool resampled = false;           // weighted, and exported resampled (export_resample.hpp)
  // The sampler's lp__ source and columns (config/sampler_columns.hpp).
  config::SamplerColumns columns;
  bool has_lp = true;               // lp__ is written (export_lp.hpp resolve_lp)
  targets::TargetPtr lp_target;     // evaluated for lp__ at each sample (null: -potential)
  std::map<int, ChainScan> chains;  // by chain_id
};

struct Scan {
  v1::Header header;
  std::vector<std::string> run_order;  // runs in order of their first exported draw
  std::map<std::string, RunScan> runs;
  std::int64_t n_records = 0;
  bool has_footer = false;
  std::optional<records::ReadProblem> problem;
};

// True for draws the options export (warmup, run filter).
bool exported(const v1::Draw& d, const ExportOptions& options);

// Pass 1. Throws DataError (naming the record) for a draw whose quantities do not match its run,
// ConfigError when run_filter names no run of the file.
Scan scan_file(const std::filesystem::path& path, const ExportOptions& options, bool keep_weights);

// The log weights of draw d's samples for a self-normalised average over all rows of its run
// (export.hpp): pseudo-extended's normalised within the draw, others as recorded; 0 when the draw
// is unweighted.
void export_log_weights(const v1::Draw& d, const RunScan& run, std::vector<double>& out);

// The run's scan for draw d (which scan_file saw).
const RunScan& run_of(const Scan& scan, const v1::Draw& d);

// Prepares options.output_dir: creates it, or refuses one that holds files unless overwrite.
void prepare_output_dir(const ExportOptions& options);

// An export file may replace a regular file only: ConfigError naming it when a directory, a FIFO
// (which would block the export) or another special file has its name.
void refuse_special_output(const std::filesystem::path& file);

// A file name stem for a run name: characters outside [A-Za-z0-9._-] become '_'.
std::string file_stem(const std::string& run_id);

}  // namespace pemc::report::export_detail
