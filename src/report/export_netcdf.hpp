#pragma once
// ArviZ InferenceData as netCDF-4 (export --format netcdf; export.hpp), one <run>.nc per run, in
// the layout of ArviZ's schema (what arviz.from_netcdf reads: every group with xarray's
// open_dataset, the file's attributes as InferenceData.attrs):
//   posterior           one variable per Stan base name ("theta" for theta[1] .. theta[J]; "x" for
//                       a built-in target's x[1] .. x[d]): parameters, transformed parameters and
//                       generated quantities but the log-likelihoods (inference_data_layout.hpp);
//   log_likelihood      the quantities whose base name is log_lik (or ExportOptions::log_lik's
//                       names), under their own names, for az.loo / az.waic / az.compare; only
//                       when the run has some;
//   sample_stats        lp (the model's log density at the sample, as lp__: export.hpp) and the
//                       sampler's columns by their ArviZ names (acceptance_rate, step_size,
//                       tree_depth, n_steps, diverging, energy, and pemc's extended_lp,
//                       extended_energy, mala_step_size: config/sampler_columns.hpp);
//   warmup_posterior, warmup_log_likelihood, warmup_sample_stats  with include_warmup;
//   observed_data       a Stan target's data (target.stan.data_file, CmdStan JSON): every variable
//                       (ExportOptions::observed's only) over dims <name>_dim_0, ..., integers as
//                       int, with attributes pemc_data_file, pemc_data_sha256 (and pemc_data_note
//                       for --data whose content is not the run's); read only when its SHA-256 is
//                       the one the header records (observed_data_source.hpp: a changed file is
//                       refused), or from ExportOptions::data_file. Not for other targets, runs
//                       without a data file, files that record no data hashes (a note says so),
//                       or with observed_data false.
// Dims: chain and draw first, then <name>_dim_0, ... (1-based Stan indices at 0-based positions);
// every dim has a coordinate variable: chain = pemc's chain ids, draw and the others 0 .. n-1.
// Attributes of the file and of every group: created_at (ISO 8601, UTC), inference_library
// "pemc", inference_library_version (the project version); the file's also source, pemc_run,
// pemc_sampler, pemc_target and pemc_draws (plain, resampled or weighted).
// Weighted samplers: resampled by default (export_resample.hpp), plain draws as above; in the
// weighted form (resample false) every variable and lp have the dim weighted_sample after draw
// (never "sample", which az.extract creates) and sample_stats has log_weight over (chain, draw,
// weighted_sample); ArviZ's summaries of that form are unweighted.
// Chains shorter than the longest (a damaged or unfinished file) are padded with NaN (integers
// with their _FillValue).
#include <filesystem>

#include "report/export.hpp"
#include "report/export_scan.hpp"

namespace pemc::report {

// ConfigError (before anything is written) when options.log_lik names a base name no exported run
// has, and for the observed_data refusals (export_netcdf.cpp, observed_data_of).
void export_netcdf(const std::filesystem::path& path, const export_detail::Scan& scan,
                   const ExportOptions& options, ExportResult& result);

}  // namespace pemc::report
