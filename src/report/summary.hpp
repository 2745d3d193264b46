#pragma once
// Streaming summaries of record files: per (run, chain) moments of the draws, weighted where the
// sampler recorded weights, plus the footer's cost figures. Memory does not grow with file size.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "records/record_reader.hpp"
#include "targets/target.hpp"

namespace pemc::report {

// The held-out log predictive density of a target with a test set (Target::n_test_points() > 0),
// accumulated online from weighted samples x_s without storing them:
//   lpd = sum_j log( sum_s w_s p(y_j | x_s) / sum_s w_s )   over the test points j,
// with log-sum-exp accumulators per test point (memory O(test points), not O(draws)). Weights are
// given as log w_s (0 for unweighted draws); summarize passes each pseudo-sample with its
// within-draw normalised weight, exactly as for the moments.
class HeldOutLpd {
 public:
  // The target must outlive the accumulator. ConfigError when it has no test set.
  explicit HeldOutLpd(const targets::Target& target);

  // log_weight = -inf: the sample carries no weight (skipped). NumericalError for a NaN or +inf
  // log weight, or a NaN log p(y_j | x).
  void add(ConstVectorRef x, double log_weight = 0.0);
  // NaN when no sample with positive weight was added.
  double value() const;
  std::int64_t n_samples() const { return n_samples_; }  // samples with positive weight

 private:
  const targets::Target* target_;
  std::vector<double> log_numerator_;  // per test point: log sum_s w_s p(y_j | x_s)
  std::vector<double> scratch_;
  double log_denominator_;             // log sum_s w_s
  std::int64_t n_samples_ = 0;
};

struct ChainRunSummary {
  std::string run_id;
  std::string sampler;
  std::string target;
  std::uint64_t seed = 0;
  int chain_id = 0;
  std::int64_t n_draws = 0;          // post-warmup draws read
  // Stan names of the quantities the moments are of: a Stan model's named outputs (constrained
  // scale, Draw.outputs), or x[1] .. x[d] (report/quantities.hpp).
  std::vector<std::string> names;
  Vector mean;                       // (weighted) E[x]
  Vector second_moment;              // (weighted) E[x_i^2]
  bool weighted = false;
  double kish_ess = 0.0;             // of the weights (= n_draws when unweighted)
  double mean_accept_stat = 0.0;     // over the draws read
  std::int64_t n_divergent = 0;
  // From the footer (0 when the footer is missing), in target gradients, and the sampler's own
  // (pseudo-extended: extended) evaluations; older files converted (report/gradient_counts.hpp).
  std::int64_t n_gradient_evals = 0;
  std::int64_t n_extended_gradient_evals = 0;
  double wall_seconds = 0.0;         // from the footer
  double cpu_seconds = 0.0;          // from the footer: the chain's thread CPU time
  std::string status;                // footer status, or "incomplete: no footer"
  std::map<std::string, double> estimates;  // sampler-level per-chain estimates (footer)
  // The footer's warnings about this chain (ChainSummary.warnings: e.g. degenerate
  // pseudo-extended weights); the table marks the chain and prints each kind once per run.
  std::vector<std::string> warnings;
  // What the model said when it rejected points or failed to compute outputs
  // (ChainSummary.model_messages), as kept by the chain.
  google::protobuf::RepeatedPtrField<v1::ModelMessage> model_messages;
  // Errors against the target's exact truth, where the target knows it (empty otherwise).
  Vector error_mean;           // mean - E[x]
  Vector error_second_moment;  // second_moment - E[x^2]
  // Held-out log predictive density (HeldOutLpd over the same weighted samples as the moments),
  // for targets with a test set when the target was built from --config
  // (SummarizeOptions::target_config).
  std::optional<double> held_out_lpd;
  // Weighted runs: the weighted samples themselves (WeightedSampleStore, weighted_quantiles.hpp),
  // sample_values[i][s] quantity i (of `names`) of sample s with log weight sample_log_weights[s]
  // (pseudo-samples' normalised within their draw), kept from every sample_stride-th draw. Empty
  // for unweighted runs.
  std::vector<std::vector<double>> sample_values;
  std::vector<double> sample_log_weights;
  std::int64_t sample_stride = 1;
};

struct FileSummary {
  std::filesystem::path path;
  std::int64_t n_records = 0;
  bool has_footer = false;
  std::optional<records::ReadProblem> problem;  // damage where reading stopped
  std::vector<ChainRunSummary> runs;            // ordered by (run_id, chain_id)
  std::string truth_note;                       // why no truth comparison was made, if none
  std::string lpd_note;  // why a run with a held-out test set has no lpd (needs --config), if so
};

struct SummarizeOptions {
  // Compare each chain with its run's exact truth, as the record file's header holds it
  // (report/run_targets.hpp); a run without one gets a note in FileSummary::truth_note.
  bool with_truth = true;
  // With with_truth: also form the errors here (compare sets false: it forms them itself).
  bool truth_errors = true;
  // The config the user names with --config: the held-out log predictive density of a target with
  // a test set needs the target itself, which is built from it (never from the header). Empty:
  // no held-out lpd, with a note saying how to get it.
  std::filesystem::path target_config;
};

FileSummary summarize_file(const std::filesystem::path& path, const SummarizeOptions& options = {});

// {"runs": [...], "files": [...]} — the keys are a stable interface for scripts. "runs" has one
// entry per chain.
nlohmann::ordered_json summaries_json(const std::vector<FileSummary>& files);
std::string summaries_to_json(const std::vector<FileSummary>& files);
// Per file, one row per chain: draws, acceptance, cost, held-out lpd, status and the chain's
// warning kinds; the model's messages and the log Z verdicts below it. The estimates themselves
// are the posterior summary's (posterior_summary_format.hpp).
std::string summaries_to_table(const std::vector<FileSummary>& files);

}  // namespace pemc::report
