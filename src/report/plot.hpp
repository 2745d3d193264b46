#pragma once
// Figures from record files through gnuplot (PNG via pngcairo, SVG): the data and a gnuplot script
// are written to a temporary directory, `gnuplot` runs on it and its exit code is checked.
//
// Quantities: a run's quantities are its target's named outputs (a Stan model's constrained
// parameters, transformed parameters and generated quantities, from Draw.outputs) or, for a
// built-in target, its coordinates x[1] .. x[d] (report/quantities.hpp). A plot chooses them by
// name (PlotOptions::quantities, e.g. mu,theta[1]) or by 0-based position in that list (dims),
// and labels them by name.
//
// Kinds:
//   scatter      draws of two quantities (default the first two), one panel per run, over the
//                contours of the target density when the original target is 2-D and has no named
//                outputs and --config names the run's config (the target is built from it, never
//                from the header: report/run_targets.hpp; contour levels at log density
//                max - k^2/2, k = 1..6).
//                Weighted draws are RESAMPLED, not drawn with sizes: a draw with pseudo-samples
//                shows one of them, chosen with its within-draw normalised weight (Theorem 2.1 of
//                the pseudo-extended paper makes that a draw from the target); draws with one log
//                weight each (continuous tempering, AIS) enter a weighted reservoir sample
//                without replacement (Efraimidis & Spirakis 2006, keys u^(1/w)); unweighted draws
//                a uniform one. At most max_points per panel, seeded: the same files give the
//                same figure. With very uneven weights (Kish ESS below max_points) each heavy draw
//                appears once, so the cloud under-represents them.
//   trace        the diagnosed quantity (diagnostics_traces.hpp) of each chain against its draw
//                index, one panel per quantity (default the first), thinned to at most
//                trace_points per chain.
//   hist         marginal histograms of the resampled draws (as for scatter), one panel per
//                quantity (default the first), one line per run; for 1-D built-in targets the
//                exact density is overlaid when --config names the run's config.
//   rmse-vs-n    compare's aggregate RMSE (E[x], E[x^2], log Z) per group against a numeric
//                config field (--x-field, a dotted path such as sampler.pseudo_extended.n_pseudo;
//                "auto" = n_pseudo when some run has it, else iterations when they differ, else
//                the groups' order). Groups without the field are drawn as dashed baselines.
//   rmse-vs-time the same RMSEs against each group's mean wall time (log-log, labelled points).
//   estimate-vs-time  a running estimate (--estimate, default log_z) of every chain against its
//                wall time, from the EstimatesSnapshot records (output.estimates_every > 0), with
//                the exact value as a dashed line when the estimate is a log Z and the target's
//                log Z is known.
//   error-vs-time  per file (e.g. one sampler's study over several targets): the RMSE over its
//                chains of a running estimate (--estimate, default log_z) against the exact value
//                of each chain's own target, at each snapshot index, against the chains' mean wall
//                time there (log-log) -- the CT paper's Figure 2 layout. With --estimate mean or
//                covariance, or --normalise base: per chain the error of the running log Z, mean
//                or covariance (error_curves.hpp), divided by the base density's own error with
//                normalise = "base"; the mean over chains with a +-3 standard error band.
//   schedule     parallel tempering's final ladder: the communication barrier Lambda(beta)
//                against beta, one line per chain, points at the chain's temperatures.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "report/compare.hpp"
#include "report/diagnostics_traces.hpp"

namespace pemc::report {

enum class PlotKind {
  kScatter, kTrace, kHist, kRmseVsN, kRmseVsTime, kEstimateVsTime, kErrorVsTime, kSchedule
};

// "scatter", "trace", "hist", "rmse-vs-n", "rmse-vs-time", "estimate-vs-time", "error-vs-time",
// "schedule";
// ConfigError otherwise.
PlotKind parse_plot_kind(const std::string& name);

struct PlotOptions {
  PlotKind kind = PlotKind::kScatter;
  std::filesystem::path output;   // .png or .svg (ConfigError otherwise)
  // The quantities shown, by name (Stan's names: "x[1]", "mu", "Sigma[2,1]"); when empty, by
  // 0-based position in the run's quantity list (dims: 0 is x[1], or a Stan model's first
  // output); when both are empty, the kind's default (the first one or two). ConfigError naming
  // the run and its quantities when a run lacks one.
  std::vector<std::string> quantities;
  std::vector<int> dims;
  std::string run_filter;         // only this run (empty = all)
  int max_points = 0;             // scatter/hist: resampled points per run (0: 5000 / 20000)
  int trace_points = 4000;        // trace: kept draws per chain
  int width = 0, height = 0;      // pixels; 0 = from the number of panels
  bool contours = true;           // scatter: target density contours when possible
  // --config: the config the files were written with; the target itself (contours, the exact
  // density over a 1-D histogram) is built from it only (report/run_targets.hpp).
  std::filesystem::path target_config;
  std::string x_field = "auto";   // rmse-vs-n
  std::string metric = "all";     // rmse plots: mean | second_moment | log_z | all
  std::string estimate = "log_z"; // estimate-vs-time: the estimate's name
  std::string normalise = "none"; // error-vs-time: none | base (error_curves.hpp)
  std::string title;              // overall title (default: kind and files)
  std::uint64_t seed = 1;         // of the resampling
  std::string gnuplot = "gnuplot";
  bool keep_temp = false;         // keep the script and data (path in PlotResult::work_dir)
  CompareOptions compare;         // rmse plots: grouping
};

struct PlotResult {
  std::filesystem::path output;
  std::filesystem::path work_dir;  // the script and data; removed unless keep_temp
  std::vector<std::string> notes;
};

// Throws ConfigError for bad options (unknown extension, a coordinate outside the target),
// DataError when there is nothing to plot, IoError when gnuplot is missing or fails (with its
// message; the work directory is then kept and named).
PlotResult plot_files(const std::vector<std::filesystem::path>& files, const PlotOptions& options);

// Runs `program script` with output to `log`; IoError when the program cannot be started (not
// installed) or exits non-zero (the log's tail in the message).
void run_gnuplot(const std::string& program, const std::filesystem::path& script,
                 const std::filesystem::path& log);

}  // namespace pemc::report
