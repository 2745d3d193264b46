#pragma once
// MCMC diagnostics of record files, per run (all its chains, across files) and per chain:
// rank-normalised split R-hat and bulk/tail ESS (Vehtari et al. 2021; src/estimators/rhat.hpp,
// ess.hpp) of every quantity (Stan names: x[1], ... or a Stan model's named outputs; at most
// TraceOptions::max_coordinates of them) and of the potential, Kish ESS of weighted draws,
// acceptance, divergences, tree depth, leapfrog steps, step size and the samplers' per-chain
// estimates (log Z, PT swap rates and round trips, ... as each sampler writes them).
//
// Memory: per chain K + 1 sequences of at most max_draws_per_chain doubles (diagnostics_traces.hpp);
// when a chain had to be thinned, the ESS is that of the thinned draws (a lower bound of the full
// chain's for positively correlated chains) and a note says so.
//
// JSON (diagnostics_to_json), stable keys:
// {"runs": [{"run_id", "sampler", "target", "quantity" ("state" | "pseudo_sample_weighted_mean", or
//            for named outputs "outputs" | "outputs_pseudo_sample_weighted_mean"),
//            "n_chains", "n_draws_used" (per chain, after thinning and truncation to the shortest),
//            "thinned_by", "max_rhat", "min_ess_bulk", "min_ess_tail", "n_divergent",
//            "parameters": [{"name" ("x[1]", ..., or "theta[1]", ..., then "potential"), "mean",
//                            "sd", "rhat", "rhat_bulk",
//                            "rhat_folded", "ess_bulk", "ess_tail"}],
//            "chains": [{"file", "chain_id", "seed", "n_draws", "n_draws_used", "thinned_by",
//                        "status", "mean_accept_stat", "n_divergent", "mean_tree_depth",
//                        "max_tree_depth", "mean_n_leapfrog", "step_size", "weighted", "kish_ess",
//                        "n_gradient_evals", "wall_seconds", "estimates": {...},
//                        "warnings": [...] (the chain's footer warnings, e.g. degenerate
//                        pseudo-extended weights),
//                        "model_messages" (what the model said when it rejected points or
//                        failed to compute outputs, one line; "" when nothing),
//                        "parameters": [{"name", "rhat", "ess_bulk", "ess_tail"}]}],
//            "warnings": [...] (one line per kind of chain warning: how many chains, the first
//                        one's text; also printed to stderr by pemc-report diagnose),
//            "log_z_trust"? (runs with a log Z): {"n_untrusted", "n_chains_compared",
//                            "spread_ratio", "chi2", "p_value", "chains_disagree"},
//            "modes"? (runs with a mode search): {"n_found", "n_starts", "complete",
//                      "unseen_probability", "untrusted", "max_rhat", "chain_ids": [...],
//                      "modes": [{"index" (1-based; the last entry is "outside"), "log_density",
//                                 "log_mass", "laplace_share", "share", "rhat",
//                                 "chain_shares": [...], "outputs": [...]}],
//                      "doubts": [...]},
//            "notes": [...]}],
//  "files": [{"path", "n_records", "complete", "problem"?: {"offset", "record_index", "message"}}]}
// Undefined values (an R-hat of constant draws, a chain too short) are null; "notes" says why.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "estimators/log_z_run_checks.hpp"
#include "report/diagnostics_modes.hpp"
#include "report/diagnostics_traces.hpp"

namespace pemc::report {

struct ParameterDiagnostics {
  std::string name;
  double mean = 0.0, sd = 0.0;  // of the draws used (unweighted)
  double rhat = 0.0, rhat_bulk = 0.0, rhat_folded = 0.0;
  double ess_bulk = 0.0, ess_tail = 0.0;
};

struct ChainDiagnostics {
  std::string file;
  int chain_id = 0;
  std::uint64_t seed = 0;
  std::int64_t n_draws = 0;
  std::int64_t n_draws_used = 0;
  std::int64_t thinned_by = 1;
  std::string status;
  double mean_accept_stat = 0.0;
  std::int64_t n_divergent = 0;
  double mean_tree_depth = 0.0;
  int max_tree_depth = 0;
  double mean_n_leapfrog = 0.0;
  double step_size = 0.0;
  bool weighted = false;
  double kish_ess = 0.0;
  std::int64_t n_gradient_evals = 0;
  double wall_seconds = 0.0;
  std::map<std::string, double> estimates;
  std::vector<std::string> warnings;             // ChainSummary.warnings
  std::string model_messages;                    // ChainSummary.model_messages, one line
  std::vector<double> largest_log_weights;       // ChainSummary.largest_log_weights (AIS)
  std::vector<ParameterDiagnostics> parameters;  // single-chain split R-hat and ESS
};

struct RunDiagnostics {
  std::string run_id;
  std::string sampler;
  std::string target;
  std::string quantity;
  int n_chains = 0;
  std::int64_t n_draws_used = 0;
  std::int64_t thinned_by = 1;
  double max_rhat = 0.0, min_ess_bulk = 0.0, min_ess_tail = 0.0;
  std::int64_t n_divergent = 0;
  std::vector<ParameterDiagnostics> parameters;
  std::vector<ChainDiagnostics> chains;
  // The chains' warnings, one line per kind (the text before its first ':'): "K of M chains: "
  // and the first such chain's warning.
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
  // Runs whose chains report a log Z: the run-level checks (report/diagnostics_log_z.hpp, which
  // also re-derives each chain's trust keys in `estimates`).
  std::optional<estimators::LogZRunCheck> log_z_check;
  // Runs with a mode search: where the chains' draws fell among the modes found
  // (report/diagnostics_modes.hpp).
  std::optional<ModeDiagnostics> modes;
};

// RunDiagnostics::warnings from its chains' warnings.
std::vector<std::string> summarize_chain_warnings(const std::vector<ChainDiagnostics>& chains);

struct DiagnosticsFileInfo {
  std::filesystem::path path;
  std::int64_t n_records = 0;
  bool complete = false;
  std::optional<records::ReadProblem> problem;
};

struct DiagnosticsReport {
  std::vector<RunDiagnostics> runs;  // ordered by run_id
  std::vector<DiagnosticsFileInfo> files;
};

// Diagnostics of already collected traces, grouped by run_id (chains of one run may come from
// several files). Pure computation, for tests.
std::vector<RunDiagnostics> diagnose_traces(const std::vector<FileTraces>& files,
                                            const TraceOptions& options);

// Reads the files (streaming, bounded memory; see the file comment) and diagnoses them.
DiagnosticsReport diagnose_files(const std::vector<std::filesystem::path>& paths,
                                 const TraceOptions& options);

std::string diagnostics_to_json(const DiagnosticsReport& report);
// The table lists each run's parameters worst first (undefined or largest R-hat, then smallest
// bulk ESS), the first `show` of them, and says how many more there are; its headline (max R-hat,
// min ESS) covers all of them, as the JSON does.
std::string diagnostics_to_table(const DiagnosticsReport& report, int show = 10);
// The order in which the table lists parameters (indices into ps).
std::vector<std::size_t> worst_first(const std::vector<ParameterDiagnostics>& ps);

}  // namespace pemc::report
