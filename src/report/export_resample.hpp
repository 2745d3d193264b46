#pragma once
// Resampling of weighted runs for export (export.hpp): one plain draw per draw of the chain, drawn
// by the samples' normalised weights, reproducibly from ExportOptions::seed and the chain id
// (pseudo-extended: one of the draw's pseudo-samples; global weights: multinomial resampling of
// the chain's samples, as many as it has draws). Used by every format that resamples: cmdstan
// with --resample, csv with --resample, netcdf unless --no-resample. Internal to
// src/report/export*.cpp.
#include <cstddef>
#include <string>

#include "report/export.hpp"
#include "report/export_scan.hpp"

namespace pemc::report::export_detail {

// What an error about weights that cannot be resampled suggests instead (with a leading space).
inline constexpr const char* kUnresampledHint =
    " (export the weighted samples instead: --format netcdf --no-resample, or csv without "
    "--resample)";

// Whether the export resamples weighted runs: ExportOptions::resample when set, else the format's
// default (netcdf: yes; csv and cmdstan: no).
bool resampling(const ExportOptions& options);

// Refuses what resampling cannot give: warmup draws of a weighted run (their weights are not
// resampled). ConfigError naming the run and what to pass instead.
void check_resample_options(const Scan& scan, const ExportOptions& options);

// Fills every weighted run's chains' ChainScan::copies (scan_file with keep_weights) and marks
// the run RunScan::resampled. DataError when a draw or chain has no sample of positive weight.
void resample_weighted_runs(Scan& scan, const ExportOptions& options);

// How many copies of the chain's next post-warmup sample to write; `cursor` counts the samples
// walked so far (start at 0, in the order the file holds them).
int next_copies(const ChainScan& c, std::size_t& cursor);

// The note an export adds when it resampled without being asked (netcdf's default): which runs,
// how many draws, and how to get the weighted samples instead. "" when no run was resampled.
std::string resample_note(const Scan& scan, const ExportOptions& options);

}  // namespace pemc::report::export_detail
