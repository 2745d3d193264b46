// pemc-report: read record files written by pemc-dist. Thin: each subcommand calls src/report/.
#include <CLI/CLI.hpp>
#include <iostream>

#include "core/error.hpp"
#include "core/version.hpp"
#include "records/record_reader.hpp"
#include "report/export.hpp"
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
  std::string export_format = "csv";
  pemc::report::ExportOptions export_options;
  auto* exp = app.add_subcommand("export", "Draws as CSV (one row per draw)");
  exp->add_option("file", export_file, "Record file")->required()->check(CLI::ExistingFile);
  exp->add_option("--format", export_format, "csv")->check(CLI::IsMember({"csv"}));
  exp->add_flag("--include-warmup", export_options.include_warmup, "Also export warmup draws");

  std::string truth_config;
  auto* truth = app.add_subcommand("truth", "Exact truth of a config's target (mean, second moment, log Z)");
  truth->add_option("config", truth_config, "Run config")->required()->check(CLI::ExistingFile);
  truth->add_option("--format", format, "json")->check(CLI::IsMember({"json"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    summarize_options.with_truth = !no_truth;
    if (*summarize) return cmd_summarize(files, format, summarize_options);
    if (*verify) return cmd_verify(files);
    if (*truth) {
      std::cout << pemc::report::truth_of_config(truth_config);
      return 0;
    }
    if (*exp) {
      pemc::report::export_csv(export_file, std::cout, export_options);
      return 0;
    }
  } catch (const pemc::Error& e) {
    std::cerr << "pemc-report: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
