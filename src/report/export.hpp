#pragma once
// Draws exported for other tools, with Stan's conventions (report/quantities.hpp):
//   csv      one row per sample: run_id, chain_id, seed, iteration, warmup, [sample, log_weight,]
//            lp__, the sampler's columns (config/sampler_columns.hpp), then the run's quantities by
//            their Stan names (x[1], ... or a Stan model's "theta[1]"). To stdout when every
//            exported run has the same weighting and quantities (else an error says to use
//            --output-dir or --run), as one table with the sampler columns of all the study's
//            runs (of the --run run only), a run's cell empty where its sampler has no such column;
//            with output_dir one file per run, <run>.csv, with that run's own columns.
//   cmdstan  one CmdStan CSV per chain, <run>_<chain_id>.csv in output_dir: CmdStan's '#' comment
//            header (model, sampler, seed, chain, warmup and draws, adaptation), columns lp__ and
//            those of the sampler's columns that are CmdStan's own, then the quantities by
//            CmdStan's dotted names (theta.1, Sigma.2.1, x.1). Read by rstan::read_stan_csv.
//   netcdf   ArviZ InferenceData (netCDF-4), <run>.nc in output_dir: groups posterior,
//            log_likelihood and sample_stats (and their warmup_ versions), dims chain, draw and
//            per-quantity dims, every dim with a coordinate, and a Stan model's data as
//            observed_data (export_netcdf.hpp).
//
// lp__ is the model's log density at the exported sample: -potential of the run's target, with
// the Jacobian and the constants the run kept (Stan's lp__ for a Stan model). Samplers whose
// draws record an extended density (pseudo-extended, continuous and simulated tempering) have the
// target evaluated at each sample, built from the user's --config (export_lp.hpp); without it
// their csv and netcdf exports have no lp__ (ExportResult::notes says so) and CmdStan CSV is
// refused. Their extended density is the column extended_lp__.
//
// Weighted samplers (pseudo-extended, continuous and simulated tempering, AIS) are exported in one
// of two forms. Resampled (cmdstan and csv with resample; netcdf unless resample is false): one
// plain draw per draw, drawn by the normalised weights (export_resample.hpp: pseudo-extended
// within the draw; global weights: multinomial resampling of the chain's samples, as many as it
// has draws), reproducibly from `seed`; warmup draws are not resampled, so include_warmup is then
// refused. Weighted (csv by default; netcdf with resample false): every weighted sample with its
// log_weight, the log of the weight to use in a self-normalised average over all rows of the
// run: pseudo-extended's weights normalised within their draw (Theorem 2.1: each draw's
// pseudo-samples share one unit of weight), the other samplers' as recorded (their weights are
// global; draw_weights.hpp). CmdStan CSV has no place for weights: a weighted run is refused
// unless resampled.
//
// include_warmup on a file without warmup draws is refused (the config's output.write_warmup
// saves them). Damaged or unfinished files: everything readable before the damage is exported
// and the result says why the file is incomplete (the CLI warns and exits 1).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "records/record_reader.hpp"

namespace pemc::report {

struct ExportOptions {
  bool include_warmup = false;
  std::string format = "csv";        // csv | cmdstan | netcdf (export_formats())
  std::filesystem::path output_dir;  // required for cmdstan and netcdf; optional for csv
  bool overwrite = false;            // allow an output_dir that already holds files
  // Weighted runs resampled to one plain draw per draw (export_resample.hpp): true for
  // --resample, false for --no-resample; unset, the format's default (netcdf: resampled; csv and
  // cmdstan: not).
  std::optional<bool> resample;
  std::uint64_t seed = 1;  // of the resampling
  // netcdf: the base names of the quantities that go to the log_likelihood group (--log-lik);
  // empty: "log_lik", where a run has it.
  std::vector<std::string> log_lik;
  // netcdf: the observed_data group, for runs whose target is a Stan model with a data file
  // (observed_data_source.hpp); false: no such group (--no-observed-data).
  bool observed_data = true;
  // netcdf: the CmdStan JSON file for observed_data instead of the data file each run read
  // (--data; empty: the run's own, which must still have the content the header records).
  std::filesystem::path data_file;
  // netcdf: only these variables of the data in observed_data (--observed; empty: all).
  std::vector<std::string> observed;
  std::string run_filter;            // only this run (empty: all)
  // --config: the config the file was written with; lp__ of samplers whose draws record an
  // extended density is evaluated with the target built from it (report/run_targets.hpp).
  std::filesystem::path target_config;
};

struct ExportResult {
  std::int64_t rows = 0;                     // data rows (samples) written
  std::vector<std::filesystem::path> files;  // files written (empty: to the stream)
  std::int64_t n_records = 0;                // records read
  bool has_footer = false;
  std::optional<records::ReadProblem> problem;  // damage where reading stopped
  std::vector<std::string> notes;               // what the export left out and why
  // Why the export is incomplete ("" when the file is whole): damage, or no footer.
  std::string incomplete_reason() const;
};

// The formats export_draws knows, in the order the CLI lists them.
const std::vector<std::string>& export_formats();

// Exports `path` as options.format says (to `out` for csv without output_dir). ConfigError for bad
// options (an unknown format, a missing or non-empty output directory, a weighted run to CmdStan
// without resample or without the target its lp__ needs, runs of different columns to one
// stream, include_warmup on a file without warmup draws or with resampled weighted runs, log_lik
// names no exported run has or with another format than netcdf; data_file, observed or
// observed_data false with another format than netcdf, and observed_data's refusals:
// export_netcdf.hpp), DataError for a draw whose content does not match its run or a data file
// that is no CmdStan JSON (before anything is written: the file is scanned first).
ExportResult export_draws(const std::filesystem::path& path, std::ostream& out,
                          const ExportOptions& options);

// csv to a stream: export_draws with format csv; returns the rows written.
std::int64_t export_csv(const std::filesystem::path& path, std::ostream& out,
                        const ExportOptions& options);

}  // namespace pemc::report
