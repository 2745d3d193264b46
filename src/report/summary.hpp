#pragma once
// Streaming summaries of record files: per (run, chain) moments of the draws, weighted where the
// sampler recorded weights, plus the footer's cost figures. Memory does not grow with file size.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "records/record_reader.hpp"

namespace pemc::report {

struct ChainRunSummary {
  std::string run_id;
  std::string sampler;
  std::string target;
  std::uint64_t seed = 0;
  int chain_id = 0;
  std::int64_t n_draws = 0;          // post-warmup draws read
  Vector mean;                       // (weighted) E[x]
  Vector second_moment;              // (weighted) E[x_i^2]
  bool weighted = false;
  double kish_ess = 0.0;             // of the weights (= n_draws when unweighted)
  double mean_accept_stat = 0.0;     // over the draws read
  std::int64_t n_divergent = 0;
  std::int64_t n_gradient_evals = 0; // from the footer (0 when the footer is missing)
  double wall_seconds = 0.0;         // from the footer
  std::string status;                // footer status, or "incomplete: no footer"
  std::map<std::string, double> estimates;  // sampler-level per-chain estimates (footer)
  // Errors against the target's exact truth, where the target knows it (empty otherwise).
  Vector error_mean;           // mean - E[x]
  Vector error_second_moment;  // second_moment - E[x^2]
};

struct FileSummary {
  std::filesystem::path path;
  std::int64_t n_records = 0;
  bool has_footer = false;
  std::optional<records::ReadProblem> problem;  // damage where reading stopped
  std::vector<ChainRunSummary> runs;            // ordered by (run_id, chain_id)
  std::string truth_note;                       // why no truth comparison was made, if none
};

struct SummarizeOptions {
  // Rebuild the target from the header's config to compare with its exact truth. Data files are
  // opened relative to the current directory; a target that cannot be rebuilt is skipped with a
  // note in FileSummary::truth_note.
  bool with_truth = true;
};

FileSummary summarize_file(const std::filesystem::path& path, const SummarizeOptions& options = {});

// {"runs": [...], "files": [...]} — the keys are a stable interface for scripts.
std::string summaries_to_json(const std::vector<FileSummary>& files);
std::string summaries_to_table(const std::vector<FileSummary>& files);

}  // namespace pemc::report
