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
//            "thinned_by", "max_rhat", "min_ess_bulk", "min_ess_tail", "n_divergent", "warmup",
//            "parameters": [{"name" ("x[1]", ..., or "theta[1]", ..., then "potential"), "mean",
//                            "mcse_mean", "sd", "q5", "q50", "q95", "rhat", "rhat_bulk",
//                            "rhat_folded", "ess_bulk", "ess_tail"}],
//            "n_model_parameters"? (a Stan model's: the first this many of "parameters" are its
//                            parameters and transformed parameters, the named outputs after them
//                            its generated quantities; absent where the file does not say),
//            "lp"? (the same keys, for lp__ = -potential where that is the model's log density),
//            "lp_note"? (why there is no lp__),
//            "chains": [{"file", "chain_id", "seed", "n_draws", "n_draws_used", "thinned_by",
//                        "status", "mean_accept_stat", "n_divergent", "mean_tree_depth",
//                        "max_tree_depth", "mean_n_leapfrog", "step_size",
//                        "n_max_tree_depth"?, "configured_max_tree_depth"? (NUTS: draws at the
//                        configured maximum tree depth, and that depth), "ebfmi" (null without
//                        energy__), "weighted", "kish_ess",
//                        "n_gradient_evals", "wall_seconds", "estimates": {...},
//                        "warnings": [...] (the chain's footer warnings, e.g. degenerate
//                        pseudo-extended weights),
//                        "model_messages" (what the model said when it rejected points or
//                        failed to compute outputs, one line; "" when nothing),
//                        "parameters": [{"name", "rhat", "ess_bulk", "ess_tail"}]}],
//            "warnings": [...] (estimators/sampler_warnings.hpp: divergences, tree depth, E-BFMI,
//                        R-hat, bulk ESS, and one line per kind of chain warning; also printed
//                        to stderr by pemc-report diagnose),
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
#include <span>
#include <string>
#include <vector>

#include "estimators/log_z_run_checks.hpp"
#include "estimators/sampler_warnings.hpp"
#include "report/diagnostics_modes.hpp"
#include "report/diagnostics_traces.hpp"

namespace pemc::report {

struct ParameterDiagnostics {
  std::string name;
  double mean = 0.0, sd = 0.0;  // of the draws used (unweighted; sd with the n - 1 denominator)
  // posterior::mcse_mean (sd / sqrt(ESS of the mean), estimators/ess.hpp) and posterior::quantile2
  // (type 7 quantiles of the pooled draws). Run level only (0 in a chain's own entries).
  double mcse_mean = 0.0, q5 = 0.0, q50 = 0.0, q95 = 0.0;
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
  // Draws at the configured maximum tree depth (unset when the sampler records no tree depth),
  // and that depth.
  std::optional<std::int64_t> n_max_tree_depth;
  int configured_max_tree_depth = 0;
  // E-BFMI of the chain's energy__ (estimators/ebfmi.hpp); NaN when the sampler records no
  // model energy (config/sampler_columns.hpp records_model_energy) or an energy was not finite.
  double ebfmi = 0.0;
  bool records_divergences = false;  // the sampler's draws have divergent__
  bool records_step_size = false;    // ... a step size (stepsize__ or mala_stepsize__)
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
  std::int64_t warmup = 0;  // the run's configured warmup iterations per chain
  std::vector<ParameterDiagnostics> parameters;
  // The first this many of `parameters` are the model's parameters and transformed parameters
  // (RunInfo.n_parameter_outputs); the named outputs after them are its generated quantities (the
  // potential is neither). Unset where the file does not say (other targets, older files).
  std::optional<std::size_t> n_model_parameters;
  // lp__, the model's log density (-potential) as CmdStan's export has it (export_lp.hpp), when
  // the draws' potential is the target's (config/sampler_columns.hpp LpSource::kDrawPotential) and
  // the potential was read; otherwise unset and lp_note says why.
  std::optional<ParameterDiagnostics> lp;
  std::string lp_note;
  std::vector<ChainDiagnostics> chains;
  // estimators/sampler_warnings.hpp over the run: divergences, tree depth, E-BFMI, R-hat, bulk
  // ESS (of the quantities, not the potential), and the chains' own warnings, one line per kind.
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
  // Runs whose chains report a log Z: the run-level checks (report/diagnostics_log_z.hpp, which
  // also re-derives each chain's trust keys in `estimates`).
  std::optional<estimators::LogZRunCheck> log_z_check;
  // Runs with a mode search: where the chains' draws fell among the modes found
  // (report/diagnostics_modes.hpp).
  std::optional<ModeDiagnostics> modes;
};

// Mean, sd, MCSE, quantiles, R-hat and ESS of one quantity over the given chains (one span per
// chain). Non-finite draws make the diagnostics undefined (NaN), with a line in `notes` (when
// given) instead of an exception.
ParameterDiagnostics diagnose_quantity(const std::string& name,
                                       const std::vector<std::span<const double>>& chains,
                                       std::vector<std::string>* notes);

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

// How much diagnose_traces computes.
enum class DiagnosisScope {
  kFull,  // everything above
  // What the run-level R-hat and bulk ESS warnings need (report/draw_checks.hpp, at a run's end):
  // per run-level quantity (and lp__) its mean, sd, R-hat and bulk ESS, the same values as kFull's;
  // MCSE, quantiles and tail ESS NaN; the chains' own `parameters` empty.
  kRhatAndBulkEss,
};

// Diagnostics of already collected traces, grouped by run_id (chains of one run may come from
// several files). Pure computation, for tests.
std::vector<RunDiagnostics> diagnose_traces(const std::vector<FileTraces>& files,
                                            const TraceOptions& options,
                                            DiagnosisScope scope = DiagnosisScope::kFull);

// The quantities whose R-hat and bulk ESS estimators/sampler_warnings.hpp judges in a run: lp__
// (where there is one) and every quantity but the potential (which lp__ stands for where it is
// the model's).
std::vector<estimators::QuantityHealth> judged_quantities(const RunDiagnostics& rd);

// Reads the files (streaming, bounded memory; see the file comment) and diagnoses them.
DiagnosticsReport diagnose_files(const std::vector<std::filesystem::path>& paths,
                                 const TraceOptions& options);

std::string diagnostics_to_json(const DiagnosticsReport& report);
// The table lists each run's lp__ first (when there is one; it then stands for the potential),
// then its quantities worst first (undefined or largest R-hat, then smallest bulk ESS): where the
// file says which are a Stan model's generated quantities (RunDiagnostics::n_model_parameters),
// the parameters and transformed parameters worst first, then the generated quantities worst
// first, so that 200 log_lik entries do not hide the parameters. The first `show` of them, and how
// many more there are; its headline (max R-hat, min ESS) covers all of them, as the JSON does.
// With `vars` (--vars, quantity_selection.hpp) it lists exactly those, in the same order;
// ConfigError for a name a run does not have.
std::string diagnostics_to_table(const DiagnosticsReport& report, int show = 10,
                                 const std::vector<std::string>& vars = {});
// The order in which the table lists parameters (indices into ps): by `group` (ascending; empty:
// one group), then worst first within each group.
std::vector<std::size_t> worst_first(const std::vector<ParameterDiagnostics>& ps,
                                     const std::vector<int>& group = {});

}  // namespace pemc::report
