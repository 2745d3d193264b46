// pemc-report: read record files written by pemc-dist. Thin: each subcommand calls src/report/.
#include <CLI/CLI.hpp>
#include <filesystem>
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
#include "report/quantities.hpp"
#include "report/reference_check.hpp"
#include "report/relaxation_export.hpp"
#include "report/summary.hpp"
#include "report/truth.hpp"

namespace {

int cmd_summarize(const std::vector<std::string>& files, const std::string& format,
                  const pemc::report::SummarizeOptions& options) {
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
  std::cout << (format == "json" ? pemc::report::summaries_to_json(summaries)
                                 : pemc::report::summaries_to_table(summaries));
  return damaged ? 1 : 0;
}

int cmd_verify(const std::vector<std::string>& files) {
  int rc = 0;
  for (const auto& f : files) {
    const auto v = pemc::records::verify(f);
    if (v.problem) {
      std::cout << f << ": DAMAGED at byte " << v.problem->offset << " (record "
                << v.problem->record_index << "): " << v.problem->message << "; " << v.n_records
                << " good records before it\n";
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

std::vector<std::filesystem::path> to_paths(const std::vector<std::string>& files) {
  return {files.begin(), files.end()};
}

// Commands that read files through their own readers: each damaged file (and, with `unfinished`,
// each file without a footer) gets a warning: they used what was intact before the damage.
// Returns 1 when some file was, else 0.
int warn_damaged(const std::vector<std::string>& files, const std::string& used,
                 bool unfinished = false) {
  int rc = 0;
  for (const auto& f : files) {
    const auto v = pemc::records::verify(f);
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
                 const pemc::report::TraceOptions& options, int show) {
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
                                 : pemc::report::diagnostics_to_table(report, show));
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pemc-report: summaries, checks and exports of pemc record files"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "pemc-report " + std::string(pemc::kVersion));

  std::vector<std::string> files;
  std::string format = "table";
  auto* summarize = app.add_subcommand("summarize", "Per-chain estimates and costs");
  summarize->add_option("files", files, "Record files")->required()->check(CLI::ExistingFile);
  summarize->add_option("--format", format, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  pemc::report::SummarizeOptions summarize_options;
  bool no_truth = false;
  summarize->add_flag("--no-truth", no_truth,
                      "Do not rebuild the target to compare with its exact truth");

  auto* verify = app.add_subcommand("verify", "Check every record's checksum");
  verify->add_option("files", files, "Record files")->required()->check(CLI::ExistingFile);

  std::string export_file;
  pemc::report::ExportOptions export_options;
  auto* exp = app.add_subcommand(
      "export", "Draws for other tools: CSV (one row per sample), CmdStan CSV or ArviZ netCDF");
  exp->add_option("file", export_file, "Record file")->required()->check(CLI::ExistingFile);
  exp->add_option("--format", export_options.format,
                  "csv (default), cmdstan (one CmdStan CSV per chain) or netcdf (ArviZ "
                  "InferenceData, one file per run)");
  exp->add_option("--output-dir", export_options.output_dir,
                  "Directory for the files (cmdstan, netcdf; csv: one file per run instead of "
                  "stdout); must be new or empty unless --overwrite");
  exp->add_flag("--overwrite", export_options.overwrite,
                "Write into an --output-dir that already holds files");
  exp->add_flag("--resample", export_options.resample,
                "cmdstan: weighted samplers' runs as one sample per draw, drawn by its normalised "
                "weight (CmdStan CSV has no place for weights)");
  exp->add_option("--seed", export_options.seed, "Seed of --resample (default 1)");
  exp->add_option("--run", export_options.run_filter, "Only this run");
  exp->add_flag("--include-warmup", export_options.include_warmup, "Also export warmup draws");
  bool export_estimates = false, export_moments = false;
  exp->add_flag("--estimates", export_estimates,
                "Export the running estimates (EstimatesSnapshot records) instead of the draws");
  exp->add_flag("--moments", export_moments,
                "With --estimates: also the running mean and covariance (upper triangle) and the "
                "base density's mean, covariance and log zeta");

  std::string truth_config;
  auto* truth = app.add_subcommand("truth", "Exact truth of a config's target (mean, second moment, log Z)");
  truth->add_option("config", truth_config, "Run config")->required()->check(CLI::ExistingFile);
  truth->add_option("--format", format, "json")->check(CLI::IsMember({"json"}));
  std::string relaxation_dir;
  bool relaxation_overwrite = false;
  truth->add_option("--write-relaxation", relaxation_dir,
                    "Boltzmann targets: also write the solved relaxation (Q, b, D, W as plain "
                    "text, relaxation.json) into this directory (new or empty unless --overwrite)");
  truth->add_flag("--overwrite", relaxation_overwrite,
                  "With --write-relaxation: write into a directory that already holds files");

  std::vector<std::string> compare_files;
  std::string compare_format = "markdown";
  pemc::report::CompareOptions compare_options;
  bool compare_no_truth = false;
  auto* compare = app.add_subcommand(
      "compare", "Runs compared over seeds: mean ± sd, RMSE vs truth, cost (paper-style table)");
  compare->add_option("files", compare_files, "Record files (chains are grouped across files)")
      ->required()
      ->check(CLI::ExistingFile);
  compare->add_option("--format", compare_format, "markdown, csv or json")
      ->check(CLI::IsMember({"markdown", "csv", "json"}));
  compare->add_option("--by", compare_options.by, "Group chains by run_id, sampler, target or file")
      ->check(CLI::IsMember({"run_id", "sampler", "target", "file"}));
  compare->add_option("--coords", compare_options.show_coordinates,
                      "Quantities shown individually in markdown/csv (default 4; the tables say "
                      "when they cut; RMSE 'all' and json cover every one)")
      ->check(CLI::PositiveNumber);
  std::string compare_estimates;
  compare->add_option("--estimates", compare_estimates,
                      "Sampler estimates shown as markdown columns, comma separated "
                      "(default log_z,log_z_ratio; json and csv hold all)");
  compare->add_flag("--include-incomplete", compare_options.include_incomplete,
                    "Also use chains whose status is not ok (failed or unfinished)");
  compare->add_flag("--no-truth", compare_no_truth, "Do not rebuild targets for their exact truth");

  std::vector<std::string> diagnose_files;
  std::string diagnose_format = "table";
  pemc::report::TraceOptions trace_options;
  bool no_potential = false;
  auto* diagnose = app.add_subcommand(
      "diagnose", "R-hat, bulk/tail ESS, Kish ESS, acceptance, divergences per run and chain");
  diagnose->add_option("files", diagnose_files, "Record files (chains are grouped across files)")
      ->required()
      ->check(CLI::ExistingFile);
  diagnose->add_option("--format", diagnose_format, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  int diagnose_show = 10;
  diagnose->add_option("--coords", diagnose_show,
                       "Table: show the N worst quantities (by R-hat, then bulk ESS; default 10). "
                       "Every quantity is diagnosed; the headline and --format json cover all")
      ->check(CLI::PositiveNumber);
  diagnose->add_option("--max-draws", trace_options.max_draws_per_chain,
                       "Keep at most this many draws per chain in memory (thinned; default 100000)")
      ->check(CLI::Range(std::int64_t{8}, std::int64_t{1} << 40));
  diagnose->add_option("--run", trace_options.run_filter, "Only this run");
  diagnose->add_flag("--no-potential", no_potential, "Do not diagnose the potential");

  std::vector<std::string> plot_files;
  std::string plot_kind = "scatter", plot_dims, plot_quantities;
  pemc::report::PlotOptions plot_options;
  bool no_contours = false;
  std::string plot_output;
  auto* plot = app.add_subcommand("plot", "PNG/SVG figures through gnuplot");
  plot->add_option("files", plot_files, "Record files")->required()->check(CLI::ExistingFile);
  plot->add_option("--kind", plot_kind,
                   "scatter, trace, hist, rmse-vs-n, rmse-vs-time, estimate-vs-time, error-vs-time or "
                   "schedule")
      ->check(CLI::IsMember({"scatter", "trace", "hist", "rmse-vs-n", "rmse-vs-time",
                             "estimate-vs-time", "error-vs-time", "schedule"}));
  plot->add_option("--output,-o", plot_output, "Image file (.png or .svg)")->required();
  plot->add_option("--quantities", plot_quantities,
                   "Quantities by name, e.g. mu,theta[1] or x[1],x[2] (scatter: two; default the "
                   "first one or two); a Stan model's are its constrained outputs");
  plot->add_option("--dims", plot_dims,
                   "Quantities by 0-based position instead, e.g. 0,1 (0 is x[1], or a Stan "
                   "model's first output)");
  plot->add_option("--run", plot_options.run_filter, "Only this run");
  plot->add_option("--max-points", plot_options.max_points,
                   "scatter/hist: resampled points per run (default 5000 / 20000)")
      ->check(CLI::PositiveNumber);
  plot->add_option("--trace-points", plot_options.trace_points,
                   "trace: draws per chain (thinned; default 4000)")
      ->check(CLI::PositiveNumber);
  plot->add_option("--width", plot_options.width, "Pixels (default from the panels)");
  plot->add_option("--height", plot_options.height, "Pixels (default from the panels)");
  plot->add_flag("--no-contours", no_contours, "scatter: no target density contours");
  plot->add_option("--x-field", plot_options.x_field,
                   "rmse-vs-n: config field for the x axis (dotted path, 'auto' or 'order')");
  plot->add_option("--metric", plot_options.metric, "rmse plots: mean, second_moment, log_z or all")
      ->check(CLI::IsMember({"mean", "second_moment", "log_z", "all"}));
  plot->add_option("--by", plot_options.compare.by, "rmse plots: group chains by run_id, sampler, target or file")
      ->check(CLI::IsMember({"run_id", "sampler", "target", "file"}));
  plot->add_option("--estimate", plot_options.estimate,
                   "estimate-vs-time, error-vs-time: the running estimate (default log_z)");
  plot->add_option("--normalise", plot_options.normalise,
                   "error-vs-time: none, or base (divide each chain's error by the base density's "
                   "own error: the CT paper's Figure 2)")
      ->check(CLI::IsMember({"none", "base"}));
  plot->add_option("--title", plot_options.title, "Figure title");
  plot->add_option("--seed", plot_options.seed, "Seed of the weighted resampling (default 1)");
  plot->add_option("--gnuplot", plot_options.gnuplot, "gnuplot program (default: gnuplot on PATH)");
  plot->add_flag("--keep-temp", plot_options.keep_temp, "Keep the gnuplot script and data");

  std::vector<std::string> errors_files;
  std::string errors_estimate = "log_z", errors_normalise = "none", errors_run;
  bool errors_final = false;
  auto* errors = app.add_subcommand(
      "errors", "Error of a running estimate against the exact value over run time, as CSV "
                "(the numbers of plot --kind error-vs-time; one curve per file)");
  errors->add_option("files", errors_files, "Record files")->required()->check(CLI::ExistingFile);
  errors->add_option("--estimate", errors_estimate, "log_z, mean or covariance (default log_z)")
      ->check(CLI::IsMember({"log_z", "mean", "covariance"}));
  errors->add_option("--normalise", errors_normalise, "none or base (default none)")
      ->check(CLI::IsMember({"none", "base"}));
  errors->add_option("--run", errors_run, "Only this run");
  errors->add_flag("--final", errors_final, "Only each file's last snapshot");

  std::string reference_file, reference_db, reference_name, reference_format = "table";
  pemc::report::ReferenceCheckOptions reference_options;
  auto* reference = app.add_subcommand(
      "reference", "Check a run's named outputs against a posteriordb reference posterior "
                   "(z-scores of means and second moments; exit 3 when any |z| > --threshold)");
  reference->add_option("file", reference_file, "Record file")->required()->check(CLI::ExistingFile);
  reference->add_option("--posteriordb", reference_db,
                        "posteriordb folder (with reference/<posterior>.json.zip and .info.json)");
  reference->add_option("--posterior", reference_name, "Posterior name, e.g. eight_schools-eight_schools_noncentered");
  reference->add_option("--draws", reference_options.reference_draws,
                        "Reference draws (.json or .json.zip) instead of --posteriordb/--posterior");
  reference->add_option("--info", reference_options.reference_info,
                        "The reference's .info.json (its bulk ESS per quantity)");
  reference->add_option("--run", reference_options.run_filter, "The run to check (studies)");
  reference->add_option("--threshold", reference_options.threshold, "Largest |z| that passes (default 4)")
      ->check(CLI::PositiveNumber);
  reference->add_option("--worst", reference_options.show_worst, "Rows shown (default 8)")
      ->check(CLI::NonNegativeNumber);
  reference->add_option("--format", reference_format, "table or json")
      ->check(CLI::IsMember({"table", "json"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    summarize_options.with_truth = !no_truth;
    if (*summarize) return cmd_summarize(files, format, summarize_options);
    if (*compare) {
      compare_options.with_truth = !compare_no_truth;
      if (!compare_estimates.empty()) {
        compare_options.show_estimates.clear();
        std::stringstream names(compare_estimates);
        for (std::string name; std::getline(names, name, ',');)
          if (!name.empty()) compare_options.show_estimates.push_back(name);
      }
      return cmd_compare(compare_files, compare_format, compare_options);
    }
    if (*diagnose) {
      trace_options.with_potential = !no_potential;
      return cmd_diagnose(diagnose_files, diagnose_format, trace_options, diagnose_show);
    }
    if (*plot) {
      plot_options.contours = !no_contours;
      plot_options.output = plot_output;
      return cmd_plot(plot_files, plot_kind, plot_dims, plot_quantities, plot_options);
    }
    if (*errors) {
      std::vector<std::string> notes;
      std::vector<std::filesystem::path> paths(errors_files.begin(), errors_files.end());
      pemc::report::write_error_curves_csv(
          paths, pemc::report::parse_error_quantity(errors_estimate),
          pemc::report::parse_normalise(errors_normalise), errors_run, errors_final, std::cout,
          notes);
      for (const auto& n : notes) std::cerr << "note: " << n << "\n";
      std::cout.flush();
      return warn_damaged(errors_files, "used");
    }
    if (*reference) return cmd_reference(reference_file, reference_db, reference_name,
                                         reference_format, reference_options);
    if (*verify) return cmd_verify(files);
    if (*truth) {
      if (relaxation_dir.empty()) {
        std::cout << pemc::report::truth_of_config(truth_config);
        return 0;
      }
      // Everything checked before anything is written.
      const auto t = pemc::report::target_of_config(truth_config);
      pemc::report::prepare_relaxation_dir(*t.target, relaxation_dir, relaxation_overwrite);
      const auto known = t.target->truth();
      for (const auto& f : pemc::report::write_relaxation(*t.target, relaxation_dir, known.log_z))
        std::cerr << "pemc-report: wrote " << f.string() << "\n";
      std::cout << pemc::report::truth_to_json(t.kind, t.target->dim(), known);
      return 0;
    }
    if (*exp) {
      if (export_estimates) {
        pemc::report::export_estimates_csv(export_file, std::cout, export_moments);
        std::cout.flush();
        return warn_damaged({export_file}, "exported", /*unfinished=*/true);
      }
      return cmd_export(export_file, export_options);
    }
  } catch (const pemc::Error& e) {
    std::cerr << "pemc-report: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
