// pemc-report: read record files written by pemc-dist. Thin: each subcommand calls src/report/.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <iostream>
#include <sstream>

#include "core/error.hpp"
#include "core/version.hpp"
#include "records/record_reader.hpp"
#include "report/compare.hpp"
#include "report/diagnostics.hpp"
#include "report/error_curves.hpp"
#include "report/estimate_series.hpp"
#include "report/export.hpp"
#include "report/plot.hpp"
#include "report/posterior_summary.hpp"
#include "report/posterior_summary_format.hpp"
#include "report/quantities.hpp"
#include "report/reference_check.hpp"
#include "report/relaxation_export.hpp"
#include "report/summary.hpp"
#include "report/truth.hpp"
#include "report/verify.hpp"

namespace {

std::vector<std::filesystem::path> to_paths(const std::vector<std::string>& files) {
  return {files.begin(), files.end()};
}

int cmd_summarize(const std::vector<std::string>& files, const std::string& format,
                  const std::string& vars, const pemc::report::SummarizeOptions& options) {
  std::vector<pemc::report::FileSummary> summaries;
  bool damaged = false;
  for (const auto& f : files) {
    summaries.push_back(pemc::report::summarize_file(f, options));
    if (const auto& p = summaries.back().problem) {
      damaged = true;
      std::cerr << "pemc-report: warning: " << f << ": damaged at byte " << p->offset
                << " (record " << p->record_index << "): " << p->message
                << "; summarised the " << summaries.back().n_records << " records before it\n";
    }
  }
  // The posterior summary: every quantity's draws, read again (bounded memory, diagnostics.hpp).
  const auto diagnostics = pemc::report::diagnose_files(to_paths(files), {});
  const auto posterior = pemc::report::posterior_summaries(
      diagnostics, summaries, pemc::report::split_quantity_list(vars));
  if (format == "json")
    std::cout << pemc::report::summarize_to_json(summaries, posterior);
  else if (format == "csv")
    std::cout << pemc::report::posterior_to_csv(posterior);
  else
    std::cout << pemc::report::summaries_to_table(summaries)
              << pemc::report::posterior_to_table(posterior);
  return damaged ? 1 : 0;
}

int cmd_verify(const std::vector<std::string>& files) {
  int rc = 0;
  for (const auto& f : files) {
    const auto v = pemc::report::verify_file(f);
    if (v.problem) {
      // A skipped gap (records/record_reader.hpp) leaves good records after the problem too.
      const std::int64_t before = v.problem->record_index, after = v.n_records - before;
      std::cout << f << ": DAMAGED at byte " << v.problem->offset << " (record " << before
                << "): " << v.problem->message << "; " << before << " good records before it"
                << (after > 0 ? ", " + std::to_string(after) + " after it" : std::string()) << "\n";
      rc = 1;
    } else if (!v.has_header || !v.has_footer) {
      std::cout << f << ": checksums OK (" << v.n_records << " records) but "
                << (v.has_header ? "no footer: the run did not finish" : "no header") << "\n";
      rc = 1;
    } else {
      std::cout << f << ": OK (" << v.n_records << " records, " << v.n_bytes << " bytes)\n";
    }
  }
  return rc;
}

int cmd_reference(const std::string& file, const std::string& db, const std::string& name,
                  const std::string& format, pemc::report::ReferenceCheckOptions options) {
  if (options.reference_draws.empty()) {
    if (db.empty() || name.empty())
      throw pemc::ConfigError("reference: give --posteriordb DIR and --posterior NAME, or --draws FILE");
    const std::filesystem::path ref = std::filesystem::path(db) / "reference";
    options.reference_draws = ref / (name + ".json.zip");
    if (options.reference_info.empty()) options.reference_info = ref / (name + ".info.json");
  }
  const auto check = pemc::report::check_against_reference(file, options);
  for (const auto& w : check.warnings) std::cerr << "pemc-report: warning: " << w << "\n";
  std::cout << (format == "json" ? pemc::report::reference_check_to_json(check)
                                 : pemc::report::reference_check_to_table(check, options));
  if (!check.passed) return 3;
  return check.warnings.empty() ? 0 : 1;
}

// Commands that read files through their own readers: each damaged file (and, with `unfinished`,
// each file without a footer) gets a warning: they used what was intact before the damage.
// Returns 1 when some file was, else 0.
int warn_damaged(const std::vector<std::string>& files, const std::string& used,
                 bool unfinished = false) {
  int rc = 0;
  for (const auto& f : files) {
    const auto v = pemc::report::verify_file(f);
    if (v.problem) {
      std::cerr << "pemc-report: warning: " << f << ": damaged at byte " << v.problem->offset
                << " (record " << v.problem->record_index << "): " << v.problem->message << "; "
                << used << " the " << v.n_records << " records before it\n";
      rc = 1;
    } else if (unfinished && !v.has_footer) {
      std::cerr << "pemc-report: warning: " << f
                << ": no footer (the run did not finish or is still running); " << used
                << " the " << v.n_records << " records it holds\n";
      rc = 1;
    }
  }
  return rc;
}

int cmd_export(const std::string& file, const pemc::report::ExportOptions& options) {
  const auto result = pemc::report::export_draws(file, std::cout, options);
  std::cout.flush();
  for (const auto& f : result.files) std::cerr << "pemc-report: wrote " << f.string() << "\n";
  for (const auto& n : result.notes) std::cerr << "pemc-report: note: " << n << "\n";
  const std::string reason = result.incomplete_reason();
  if (reason.empty()) return 0;
  std::cerr << "pemc-report: warning: " << file << ": " << reason << "; exported the "
            << result.rows << " samples of the " << result.n_records
            << " records before it (the export is incomplete)\n";
  return 1;
}

int cmd_compare(const std::vector<std::string>& files, const std::string& format,
                const pemc::report::CompareOptions& options) {
  const auto comparison = pemc::report::compare_files(to_paths(files), options);
  bool damaged = false;
  for (const auto& n : comparison.notes) {
    if (n.find("damaged at byte") != std::string::npos) damaged = true;
    std::cerr << "pemc-report: note: " << n << "\n";
  }
  if (format == "json")
    std::cout << pemc::report::comparison_to_json(comparison);
  else if (format == "csv")
    std::cout << pemc::report::comparison_to_csv(comparison, options);
  else
    std::cout << pemc::report::comparison_to_markdown(comparison, options);
  return damaged ? 1 : 0;
}

int cmd_diagnose(const std::vector<std::string>& files, const std::string& format,
                 const pemc::report::TraceOptions& options, int show, const std::string& vars) {
  if (format == "json" && !vars.empty())
    throw pemc::ConfigError("diagnose: --vars chooses the table's rows; --format json lists every "
                            "quantity (give one or the other)");
  const auto report = pemc::report::diagnose_files(to_paths(files), options);
  bool damaged = false;
  for (const auto& f : report.files)
    if (f.problem) {
      damaged = true;
      std::cerr << "pemc-report: warning: " << f.path.string() << ": damaged at byte "
                << f.problem->offset << " (record " << f.problem->record_index
                << "): " << f.problem->message << "; diagnosed the " << f.n_records
                << " records before it\n";
    }
  for (const auto& r : report.runs)
    for (const auto& w : r.warnings)
      std::cerr << "pemc-report: warning: run " << r.run_id << ": " << w << "\n";
  std::cout << (format == "json" ? pemc::report::diagnostics_to_json(report)
                                 : pemc::report::diagnostics_to_table(
                                       report, show, pemc::report::split_quantity_list(vars)));
  return damaged ? 1 : 0;
}

int cmd_plot(const std::vector<std::string>& files, const std::string& kind, const std::string& dims,
             const std::string& quantities, pemc::report::PlotOptions options) {
  options.kind = pemc::report::parse_plot_kind(kind);
  if (!quantities.empty() && !dims.empty())
    throw pemc::ConfigError("plot: give --quantities (names) or --dims (positions), not both");
  options.quantities = pemc::report::split_quantity_list(quantities);
  std::stringstream parts(dims);
  std::string part;
  while (std::getline(parts, part, ',')) {
    if (part.empty()) continue;
    try {
      std::size_t used = 0;
      const int d = std::stoi(part, &used);
      if (used != part.size()) throw std::invalid_argument(part);
      options.dims.push_back(d);
    } catch (const std::exception&) {
      throw pemc::ConfigError("plot --dims '" + dims + "': '" + part +
                              "' is not a coordinate index (expected e.g. 0,1)");
    }
  }
  const auto result = pemc::report::plot_files(to_paths(files), options);
  bool damaged = false;
  for (const auto& n : result.notes) {
    if (n.find("damaged at byte") != std::string::npos) damaged = true;
    std::cerr << "pemc-report: note: " << n << "\n";
  }
  std::cout << "wrote " << result.output.string() << "\n";
  if (!result.work_dir.empty())
    std::cout << "gnuplot script and data kept in " << result.work_dir.string() << "\n";
  // Kinds that read only footers or snapshots say nothing of damage themselves.
  if (!damaged && warn_damaged(files, "plotted") != 0) damaged = true;
  return damaged ? 1 : 0;
}

// --config: the only way a report gets a run's target (report/run_targets.hpp).
template <typename T>
void add_config_option(CLI::App& sub, T& into, const std::string& what) {
  sub.add_option("--config", into,
                 "The config the record files were written with, " + what +
                     ": pemc-report builds a target only from a config you name, never from a "
                     "file's header")
      ->check(CLI::ExistingFile);
}

// One subcommand: its CLI11 node, and what runs when the command line chose it. Each add_* below
// declares a subcommand's arguments (held by the closure) and returns it; main adds them in the
// order --help lists them.
struct Subcommand {
  CLI::App* node;
  std::function<int()> run;
};

Subcommand add_summarize(CLI::App& app) {
  struct Args {
    std::vector<std::string> files;
    std::string format = "table", config, vars;
    bool no_truth = false;
  };
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "summarize", "Posterior summary per run (mean, MCSE, sd, quantiles, ESS, R-hat, sampler "
                   "health, warnings) and per-chain costs");
  sub->add_option("files", a->files, "Record files (chains are grouped into runs across files)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--format", a->format,
                  "table (default), json (every number, per chain and per run) or csv (one row "
                  "per run and quantity)")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  sub->add_option("--vars", a->vars,
                  "Quantities to show, comma-separated Stan names: 'mu,theta' (a variable's name "
                  "selects all its elements), 'theta[2]', 'lp__'; default: all");
  sub->add_flag("--no-truth", a->no_truth,
                "Do not compare with the exact truth the file records");
  add_config_option(*sub, a->config, "for the held-out lpd of a target with a test set");
  return {sub, [a] {
            pemc::report::SummarizeOptions options;
            options.with_truth = !a->no_truth;
            options.target_config = a->config;
            return cmd_summarize(a->files, a->format, a->vars, options);
          }};
}

Subcommand add_verify(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto* sub = app.add_subcommand("verify", "Check every record's checksum");
  sub->add_option("files", *files, "Record files")->required()->check(CLI::ExistingFile);
  return {sub, [files] { return cmd_verify(*files); }};
}

Subcommand add_export(CLI::App& app) {
  struct Args {
    std::string file;
    pemc::report::ExportOptions options;
    bool estimates = false, moments = false;
    bool resample = false, no_resample = false, no_observed_data = false;
  };
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "export", "Draws for other tools: CSV (one row per sample), CmdStan CSV or ArviZ netCDF");
  sub->add_option("file", a->file, "Record file")->required()->check(CLI::ExistingFile);
  sub->add_option("--format", a->options.format,
                  "csv (default), cmdstan (one CmdStan CSV per chain) or netcdf (ArviZ "
                  "InferenceData, one file per run)");
  sub->add_option("--output-dir", a->options.output_dir,
                  "Directory for the files (cmdstan, netcdf; csv: one file per run instead of "
                  "stdout); must be new or empty unless --overwrite");
  sub->add_flag("--overwrite", a->options.overwrite,
                "Write into an --output-dir that already holds files");
  auto* resample = sub->add_flag(
      "--resample", a->resample,
      "Weighted samplers' runs as one plain draw per draw, drawn by the normalised weights "
      "(cmdstan, csv; netcdf does this by default)");
  sub->add_flag("--no-resample", a->no_resample,
                "netcdf: weighted samplers' runs as their weighted samples, with the weights in "
                "sample_stats/log_weight (dim weighted_sample)")
      ->excludes(resample);
  sub->add_option("--seed", a->options.seed, "Seed of the resampling (default 1)");
  sub->add_option("--log-lik", a->options.log_lik,
                  "netcdf: base name of quantities for the log_likelihood group (repeatable; "
                  "default log_lik)")
      ->allow_extra_args(false);  // one name per --log-lik: never the record file after it
  auto* no_observed = sub->add_flag(
      "--no-observed-data", a->no_observed_data,
      "netcdf: no observed_data group (by default a Stan model's data file, when its content "
      "is still the one the run read)");
  sub->add_option("--data", a->options.data_file,
                  "netcdf: the CmdStan JSON data for observed_data instead of each run's "
                  "target.stan.data_file (use it when that file moved or changed since the run)")
      ->excludes(no_observed);
  sub->add_option("--observed", a->options.observed,
                  "netcdf: only these variables of the data in observed_data (repeatable or "
                  "comma-separated: --observed y,N)")
      ->allow_extra_args(false)  // one list per --observed: never the record file after it
      ->excludes(no_observed);
  sub->add_option("--run", a->options.run_filter, "Only this run");
  add_config_option(*sub, a->options.target_config,
                    "for lp__ of the samples of pseudo-extended, continuous and simulated "
                    "tempering runs (their draws record an extended density)");
  sub->add_flag("--include-warmup", a->options.include_warmup,
                "Also export warmup draws (an error when the file holds none: the config's "
                "output.write_warmup saves them)");
  sub->add_flag("--estimates", a->estimates,
                "Export the running estimates (EstimatesSnapshot records) instead of the draws");
  sub->add_flag("--moments", a->moments,
                "With --estimates: also the running mean and covariance (upper triangle) and the "
                "base density's mean, covariance and log zeta");
  return {sub, [a] {
            if (a->resample) a->options.resample = true;
            if (a->no_resample) a->options.resample = false;
            if (a->no_observed_data) a->options.observed_data = false;
            if (!a->estimates) return cmd_export(a->file, a->options);
            pemc::report::export_estimates_csv(a->file, std::cout, a->moments);
            std::cout.flush();
            return warn_damaged({a->file}, "exported", /*unfinished=*/true);
          }};
}

Subcommand add_truth(CLI::App& app) {
  struct Args {
    std::string config, format = "table", relaxation_dir;
    bool overwrite = false;
  };
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("truth", "Exact truth of a config's target (mean, second moment, log Z)");
  sub->add_option("config", a->config, "Run config")->required()->check(CLI::ExistingFile);
  sub->add_option("--format", a->format, "json")->check(CLI::IsMember({"json"}));
  sub->add_option("--write-relaxation", a->relaxation_dir,
                  "Boltzmann targets: also write the solved relaxation (Q, b, D, W as plain "
                  "text, relaxation.json) into this directory (new or empty unless --overwrite)");
  sub->add_flag("--overwrite", a->overwrite,
                "With --write-relaxation: write into a directory that already holds files");
  return {sub, [a] {
            if (a->relaxation_dir.empty()) {
              std::cout << pemc::report::truth_of_config(a->config);
              return 0;
            }
            // Everything checked before anything is written.
            const auto t = pemc::report::target_of_config(a->config);
            pemc::report::prepare_relaxation_dir(*t.target, a->relaxation_dir, a->overwrite);
            const auto known = t.target->truth();
            for (const auto& f :
                 pemc::report::write_relaxation(*t.target, a->relaxation_dir, known.log_z))
              std::cerr << "pemc-report: wrote " << f.string() << "\n";
            std::cout << pemc::report::truth_to_json(t.kind, t.target->dim(), known);
            return 0;
          }};
}

Subcommand add_compare(CLI::App& app) {
  struct Args {
    std::vector<std::string> files;
    std::string format = "markdown", estimates;
    pemc::report::CompareOptions options;
    bool no_truth = false;
  };
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "compare", "Runs compared over seeds: mean ± sd, RMSE vs truth, cost (paper-style table)");
  sub->add_option("files", a->files, "Record files (chains are grouped across files)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--format", a->format, "markdown, csv or json")
      ->check(CLI::IsMember({"markdown", "csv", "json"}));
  sub->add_option("--by", a->options.by, "Group chains by run_id, sampler, target or file")
      ->check(CLI::IsMember({"run_id", "sampler", "target", "file"}));
  sub->add_option("--coords", a->options.show_coordinates,
                  "Quantities shown individually in markdown/csv (default 4; the tables say "
                  "when they cut; RMSE 'all' and json cover every one)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--estimates", a->estimates,
                  "Sampler estimates shown as markdown columns, comma separated "
                  "(default log_z,log_z_ratio; json and csv hold all)");
  sub->add_flag("--include-incomplete", a->options.include_incomplete,
                "Also use chains whose status is not ok (failed or unfinished)");
  sub->add_flag("--no-truth", a->no_truth, "Do not compare with the exact truths the files record");
  add_config_option(*sub, a->options.target_config,
                    "for the held-out lpd of a target with a test set");
  return {sub, [a] {
            a->options.with_truth = !a->no_truth;
            if (!a->estimates.empty()) {
              a->options.show_estimates.clear();
              std::stringstream names(a->estimates);
              for (std::string name; std::getline(names, name, ',');)
                if (!name.empty()) a->options.show_estimates.push_back(name);
            }
            return cmd_compare(a->files, a->format, a->options);
          }};
}

Subcommand add_diagnose(CLI::App& app) {
  struct Args {
    std::vector<std::string> files;
    std::string format = "table";
    pemc::report::TraceOptions options;
    bool no_potential = false;
    int show = 10;
    std::string vars;
  };
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "diagnose", "R-hat, bulk/tail ESS, Kish ESS, acceptance, divergences per run and chain");
  sub->add_option("files", a->files, "Record files (chains are grouped across files)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--format", a->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  sub->add_option("--coords", a->show,
                  "Table: show the N worst quantities (by R-hat, then bulk ESS; default 10). "
                  "Every quantity is diagnosed; the headline and --format json cover all")
      ->check(CLI::PositiveNumber);
  sub->add_option("--max-draws", a->options.max_draws_per_chain,
                  "Keep at most this many draws per chain in memory (thinned; default 100000)")
      ->check(CLI::Range(std::int64_t{8}, std::int64_t{1} << 40));
  sub->add_option("--run", a->options.run_filter, "Only this run");
  sub->add_option("--vars", a->vars,
                  "Table: list exactly these quantities (worst first), comma-separated Stan "
                  "names: 'mu,theta' (a variable's name selects all its elements), 'lp__'");
  sub->add_flag("--no-potential", a->no_potential, "Do not diagnose the potential");
  return {sub, [a] {
            a->options.with_potential = !a->no_potential;
            return cmd_diagnose(a->files, a->format, a->options, a->show, a->vars);
          }};
}

Subcommand add_plot(CLI::App& app) {
  struct Args {
    std::vector<std::string> files;
    std::string kind = "scatter", dims, quantities, output;
    pemc::report::PlotOptions options;
    bool no_contours = false;
  };
  auto a = std::make_shared<Args>();
  auto& o = a->options;
  auto* sub = app.add_subcommand("plot", "PNG/SVG figures through gnuplot");
  sub->add_option("files", a->files, "Record files")->required()->check(CLI::ExistingFile);
  sub->add_option("--kind", a->kind,
                  "scatter, trace, hist, rmse-vs-n, rmse-vs-time, estimate-vs-time, error-vs-time or "
                  "schedule")
      ->check(CLI::IsMember({"scatter", "trace", "hist", "rmse-vs-n", "rmse-vs-time",
                             "estimate-vs-time", "error-vs-time", "schedule"}));
  sub->add_option("--output,-o", a->output, "Image file (.png or .svg)")->required();
  sub->add_option("--quantities", a->quantities,
                  "Quantities by name, e.g. mu,theta[1] or x[1],x[2] (scatter: two; default the "
                  "first one or two); a Stan model's are its constrained outputs");
  sub->add_option("--dims", a->dims,
                  "Quantities by 0-based position instead, e.g. 0,1 (0 is x[1], or a Stan "
                  "model's first output)");
  sub->add_option("--run", o.run_filter, "Only this run");
  sub->add_option("--max-points", o.max_points,
                  "scatter/hist: resampled points per run (default 5000 / 20000)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--trace-points", o.trace_points, "trace: draws per chain (thinned; default 4000)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--width", o.width, "Pixels (default from the panels)");
  sub->add_option("--height", o.height, "Pixels (default from the panels)");
  sub->add_flag("--no-contours", a->no_contours, "scatter: no target density contours");
  add_config_option(*sub, o.target_config,
                    "for scatter's density contours and hist's exact density");
  sub->add_option("--x-field", o.x_field,
                  "rmse-vs-n: config field for the x axis (dotted path, 'auto' or 'order')");
  sub->add_option("--metric", o.metric, "rmse plots: mean, second_moment, log_z or all")
      ->check(CLI::IsMember({"mean", "second_moment", "log_z", "all"}));
  sub->add_option("--by", o.compare.by, "rmse plots: group chains by run_id, sampler, target or file")
      ->check(CLI::IsMember({"run_id", "sampler", "target", "file"}));
  sub->add_option("--estimate", o.estimate,
                  "estimate-vs-time, error-vs-time: the running estimate (default log_z)");
  sub->add_option("--normalise", o.normalise,
                  "error-vs-time: none, or base (divide each chain's error by the base density's "
                  "own error: the CT paper's Figure 2)")
      ->check(CLI::IsMember({"none", "base"}));
  sub->add_option("--title", o.title, "Figure title");
  sub->add_option("--seed", o.seed, "Seed of the weighted resampling (default 1)");
  sub->add_option("--gnuplot", o.gnuplot, "gnuplot program (default: gnuplot on PATH)");
  sub->add_flag("--keep-temp", o.keep_temp, "Keep the gnuplot script and data");
  return {sub, [a] {
            a->options.contours = !a->no_contours;
            a->options.output = a->output;
            return cmd_plot(a->files, a->kind, a->dims, a->quantities, a->options);
          }};
}

Subcommand add_errors(CLI::App& app) {
  struct Args {
    std::vector<std::string> files;
    std::string estimate = "log_z", normalise = "none", run;
    bool final_only = false;
  };
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "errors", "Error of a running estimate against the exact value over run time, as CSV "
                "(the numbers of plot --kind error-vs-time; one curve per file)");
  sub->add_option("files", a->files, "Record files")->required()->check(CLI::ExistingFile);
  sub->add_option("--estimate", a->estimate, "log_z, mean or covariance (default log_z)")
      ->check(CLI::IsMember({"log_z", "mean", "covariance"}));
  sub->add_option("--normalise", a->normalise, "none or base (default none)")
      ->check(CLI::IsMember({"none", "base"}));
  sub->add_option("--run", a->run, "Only this run");
  sub->add_flag("--final", a->final_only, "Only each file's last snapshot");
  return {sub, [a] {
            std::vector<std::string> notes;
            pemc::report::write_error_curves_csv(
                to_paths(a->files), pemc::report::parse_error_quantity(a->estimate),
                pemc::report::parse_normalise(a->normalise), a->run, a->final_only, std::cout,
                notes);
            for (const auto& n : notes) std::cerr << "note: " << n << "\n";
            std::cout.flush();
            return warn_damaged(a->files, "used");
          }};
}

Subcommand add_reference(CLI::App& app) {
  struct Args {
    std::string file, db, name, format = "table";
    pemc::report::ReferenceCheckOptions options;
  };
  auto a = std::make_shared<Args>();
  auto& o = a->options;
  auto* sub = app.add_subcommand(
      "reference", "Check a run's named outputs against a posteriordb reference posterior "
                   "(z-scores of means and second moments; exit 3 when any |z| > --threshold)");
  sub->add_option("file", a->file, "Record file")->required()->check(CLI::ExistingFile);
  sub->add_option("--posteriordb", a->db,
                  "posteriordb folder (with reference/<posterior>.json.zip and .info.json)");
  sub->add_option("--posterior", a->name, "Posterior name, e.g. eight_schools-eight_schools_noncentered");
  sub->add_option("--draws", o.reference_draws,
                  "Reference draws (.json or .json.zip) instead of --posteriordb/--posterior");
  sub->add_option("--info", o.reference_info, "The reference's .info.json (its bulk ESS per quantity)");
  sub->add_option("--run", o.run_filter, "The run to check (studies)");
  sub->add_option("--threshold", o.threshold, "Largest |z| that passes (default 4)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--worst", o.show_worst, "Rows shown (default 8)")->check(CLI::NonNegativeNumber);
  sub->add_option("--format", a->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  return {sub, [a] { return cmd_reference(a->file, a->db, a->name, a->format, a->options); }};
}

}  // namespace

// Exit codes: 0 ok; 1 an error, or damaged input; 2 a command line CLI11 refuses, or input
// pemc-report does not read (a special file, a header beyond the bounds of any run); 3 reference:
// some |z| above the threshold.
int main(int argc, char** argv) {
  CLI::App app{"pemc-report: summaries, checks and exports of pemc record files"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "pemc-report " + std::string(pemc::kVersion));
  const std::vector<Subcommand> subcommands = {
      add_summarize(app), add_verify(app),  add_export(app), add_truth(app),     add_compare(app),
      add_diagnose(app),  add_plot(app),    add_errors(app), add_reference(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    for (const auto& s : subcommands)
      if (s.node->parsed()) return s.run();
  } catch (const pemc::UntrustedInputError& e) {
    std::cerr << "pemc-report: error: " << e.what() << "\n";
    return 2;
  } catch (const pemc::Error& e) {
    std::cerr << "pemc-report: error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "pemc-report: error: not enough memory for the files' runs (their dimensions "
                 "or quantities); report fewer runs or quantities (--run, --quantities)\n";
    return 1;
  }
  return 0;
}
