#pragma once
// ArviZ InferenceData as netCDF-4 (export --format netcdf; export.hpp), one <run>.nc per run:
//   group posterior:     one variable per Stan base name ("theta" for theta[1] .. theta[J]; "x"
//                        for a built-in target's x[1] .. x[d]) with dims (chain, draw[, sample],
//                        <name>_dim_0, ...), 1-based Stan indices stored at 0-based positions;
//   group sample_stats:  lp (the model's log density at the sample, as lp__: export.hpp) over
//                        (chain, draw), or (chain, draw, sample) for weighted samplers; the
//                        sampler's columns by their ArviZ names (acceptance_rate, step_size,
//                        tree_depth, n_steps, diverging, energy, and pemc's extended_lp,
//                        extended_energy, mala_step_size: sampler_columns.hpp) over (chain, draw);
//                        for weighted samplers log_weight over (chain, draw, sample) (export.hpp
//                        says which weights: a self-normalised average over all of the run's
//                        samples);
//   with include_warmup (and warmup draws in the file) also warmup_posterior and
//   warmup_sample_stats.
// Coordinates chain (pemc's chain ids) and draw (0-based). Weighted samplers' variables have the
// extra dim sample (the draw's weighted samples). Chains shorter than the longest (a damaged or
// unfinished file) are padded with NaN (integers with their _FillValue).
#include <filesystem>

#include "report/export.hpp"
#include "report/export_scan.hpp"

namespace pemc::report {

void export_netcdf(const std::filesystem::path& path, const export_detail::Scan& scan,
                   const ExportOptions& options, ExportResult& result);

}  // namespace pemc::report
