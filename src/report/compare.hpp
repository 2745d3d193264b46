#pragma once
// Multi-seed comparisons: chains grouped by run (or sampler, target, file) across record files;
// per group, over its chains (one per seed, or several per seed), the mean and standard deviation
// of each estimate, RMSE against the target's exact truth where it is known, mean cost (wall
// time, gradient evaluations) and the cost-adjusted error MSE x cost — the layout of the papers'
// tables (pseudo-extended Table 1: runs as rows, moments as columns).
//
// Reading streams each file once through summarize_file (memory independent of file size); the
// exact truth comes from rebuilding each distinct target config once (TruthCache); summarize_file
// also rebuilds each file's targets (cheap: truths are lazy) for the held-out lpd.
//
// Definitions, over the n chains of a group with per-chain estimates m_c (self-normalised weighted
// means where the sampler writes weights, as summarize forms them) and truth t:
//   mean_i = (1/n) sum_c m_ci,   sd_i = sqrt(sum_c (m_ci - mean_i)^2 / (n - 1))
//   rmse_i = sqrt((1/n) sum_c (m_ci - t_i)^2)                        (per coordinate)
//   rmse_all = sqrt((1/(n d)) sum_c sum_i (m_ci - t_i)^2)             (all d coordinates)
//   mse_x_time = rmse_all^2 * mean wall seconds;  mse_x_grad_evals = rmse_all^2 * mean gradient evals
// where gradient evals are the TARGET's (ChainSummary.n_gradient_evals: pseudo-extended counts N
// per extended leapfrog step, PT every replica's; files from before that field are converted,
// report/gradient_counts.hpp), so the cost compares samplers fairly; n_extended_gradient_evals_mean
// is the sampler's own evaluations (pseudo-extended: extended leapfrog steps).
// The same for second moments E[x_i^2]. Per-chain sampler estimates (footer "estimates", e.g.
// log_z) get mean, sd and — when the truth knows them ("log_z" = Truth::log_z, other keys = a
// scalar Truth::extras entry of the same name) — rmse. Estimates with a per-chain standard error
// (<name>_se) also get se_mean, the mean reported SE, to set beside sd: the two agree when the
// SEs mean what they say; with a truth, rms_z = sqrt(mean ((value - truth) / se)^2) (about 1 then).
// log_z gets n_untrusted, the chains that flagged it (log_z_untrusted, estimators/log_z_trust.hpp),
// and n_unchecked, the others whose run had too few chains to check it (log_z_unchecked).
// The markdown table shows "mean ± sd (mean SE s) k of n untrusted, m of n unchecked" and
// "rmse (rms z r)".
// The held-out log predictive density (summarize's per-chain held_out_lpd, for targets with a test
// set such as horseshoe_logistic) gets mean and sd over the chains that have it, like an estimate.
// Only chains whose status is "ok" are used unless include_incomplete; the others are listed in
// "excluded" with the reason.
//
// JSON (comparison_to_json), stable keys:
// {"by": "run_id",
//  "groups": [{"key", "sampler", "target", "dim", "names", "n_chains", "files": [...],
//              "excluded": [{"file", "chain_id", "reason"}],
//              "mean": {"mean": [...], "sd": [...], "rmse"?: [...], "truth"?: [...]},
//              "second_moment": {same},
//              "rmse_all"?: {"mean", "second_moment"},
//              "wall_seconds_mean", "n_gradient_evals_mean", "n_extended_gradient_evals_mean",
//              "n_draws_mean", "kish_ess_mean",
//              "mse_x_time"?: {"mean", "second_moment"},
//              "mse_x_grad_evals"?: {"mean", "second_moment"},
//              "estimates": {"<name>": {"n", "mean", "sd", "n_nonfinite", "truth"?, "rmse"?,
//                                       "se_mean"?, "rms_z"?, "n_untrusted"?, "n_unchecked"?}},
//              "held_out_lpd"?: {"n", "mean", "sd", "n_nonfinite"},
//              "truth_log_z"?}],
//  "notes": [...]}
// Keys marked ? are absent when the truth is unknown; undefined numbers (sd of one chain) are null.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "pemc/v1/config.pb.h"
#include "report/summary.hpp"
#include "targets/target.hpp"

namespace pemc::report {

struct CompareOptions {
  std::string by = "run_id";        // run_id | sampler | target | file
  bool include_incomplete = false;  // also use chains whose status is not "ok"
  bool with_truth = true;  // against the exact truths the record files hold
  // --config: the config the files were written with, for the held-out lpd of targets with a test
  // set (report/run_targets.hpp); empty: none.
  std::filesystem::path target_config;
  // Tables (markdown, csv): coordinates shown individually; the aggregate RMSE covers all.
  int show_coordinates = 4;
  // Markdown: sampler estimates shown as columns (JSON and CSV hold all of them).
  std::vector<std::string> show_estimates = {"log_z", "log_z_ratio"};
};

struct MomentStats {
  Vector mean, sd;
  Vector rmse;   // empty without truth
  Vector truth;  // empty without truth
};

struct EstimateStats {
  int n = 0;             // finite values used
  int n_nonfinite = 0;   // NaN/inf values left out
  double mean = 0.0, sd = 0.0;
  std::optional<double> truth, rmse;
  // The chains' own <name>_se: their mean (beside sd, the spread over the chains) and, with a
  // truth, rms over chains of (value - truth) / se.
  std::optional<double> se_mean, rms_z;
  std::optional<int> n_untrusted;  // log_z / log_z_ratio: chains with log_z_untrusted = 1
  std::optional<int> n_unchecked;  // and the others with log_z_unchecked = 1
};

struct ExcludedChain {
  std::string file;
  int chain_id = 0;
  std::string reason;
};

struct CompareGroup {
  std::string key;
  std::string sampler;  // "a, b" when the group mixes kinds
  std::string target;
  int dim = 0;
  std::vector<std::string> names;  // Stan names of the quantities (x[1], ... or a model's outputs)
  int n_chains = 0;
  std::vector<std::string> files;
  std::vector<ExcludedChain> excluded;
  MomentStats mean, second_moment;
  std::optional<double> rmse_all_mean, rmse_all_second_moment;
  double wall_seconds_mean = 0.0;
  double n_gradient_evals_mean = 0.0;           // target gradients
  double n_extended_gradient_evals_mean = 0.0;  // the sampler's own evaluations
  double n_draws_mean = 0.0;
  double kish_ess_mean = 0.0;
  std::optional<double> mse_x_time_mean, mse_x_time_second_moment;
  std::optional<double> mse_x_grad_evals_mean, mse_x_grad_evals_second_moment;
  std::map<std::string, EstimateStats> estimates;
  std::optional<EstimateStats> held_out_lpd;  // when some chain of the group has one
  std::optional<double> truth_log_z;
  pemc::v1::RunConfig config;  // the (resolved) run config of the group's first chain
};

struct Comparison {
  std::string by;
  std::vector<CompareGroup> groups;  // in order of first appearance
  std::vector<std::string> notes;
};

// One chain's summary with the context compare needs (pure input of compare_summaries).
struct ComparedChain {
  ChainRunSummary summary;
  std::string file;
  pemc::v1::RunConfig config;
  std::optional<targets::Truth> truth;  // nullopt when unknown
};

Comparison compare_chains(const std::vector<ComparedChain>& chains, const CompareOptions& options);

// Reads the files (summarize_file, streaming) and compares. Damaged files contribute the chains
// read before the damage (their status says they are incomplete); a note names each.
Comparison compare_files(const std::vector<std::filesystem::path>& paths,
                         const CompareOptions& options);

std::string comparison_to_json(const Comparison& comparison);
std::string comparison_to_markdown(const Comparison& comparison, const CompareOptions& options);
std::string comparison_to_csv(const Comparison& comparison, const CompareOptions& options);

// Dotted field path into a RunConfig, e.g. "sampler.pseudo_extended.n_pseudo" or "iterations":
// the numeric value when every message on the path is set (nullopt otherwise). ConfigError when
// the path names no such field or a non-numeric one.
std::optional<double> config_number(const pemc::v1::RunConfig& config, const std::string& path);

}  // namespace pemc::report
