#pragma once
// Bootstrap rounds of continuous tempering (Graham & Storkey 2017, Section 6, last paragraph):
// run, pool the Rao-Blackwellised estimates of all chains, refit the Gaussian base (mean and
// covariance by eq. (21), log zeta = log Z by eq. (20)) and run again. Config:
// sampler.continuous_tempering.bootstrap (proto/pemc/v1/tempering.proto).
//
// What this file holds is everything about the rounds that does not need MPI, so that the
// distributed runner (through continuous_tempering_rounds.hpp), tests/statistical/ct_study.cpp
// and the unit tests share it:
//  - a round of a chain is a plain continuous-tempering run (bootstrap_round_config): round 0 with
//    the configured base, later rounds with the previous round's refit as a user Gaussian; the
//    bootstrap rounds (0 .. rounds-1) run `bootstrap.warmup` + `draws_per_round` iterations with
//    seeds of their own (bootstrap_round_seed), the final round (index `rounds`) the run's warmup +
//    iterations with the chain's own seed. Every round starts afresh from `init`.
//  - a chain's round result is the accumulator of its post-warmup draws (thin 1, so every
//    transition, exactly what the kernel's own RbTracker sums) and its gradient/time counts
//    (BootstrapChainReport);
//  - the coordinator's bookkeeping (BootstrapRounds): when every live chain of a round has
//    reported, their accumulators are merged in ascending global chain id and refitted. The refit
//    uses the POOLED accumulator of all chains (the coordinator's merge), not any single chain's:
//    the pooled estimate is what the issue describes and is far less noisy (per-chain Boltzmann
//    estimates are two-valued, docs/results.md), and with a fixed merge order it is bit-identical
//    for any number of ranks.
//  - which base the next round gets: the refit, or (when the refit's round did worse than an
//    earlier one) the best earlier round's base again (continuous_tempering_base_choice.hpp);
//  - the pooled estimates of a round and that choice as an EstimatesSnapshot record (chain_id
//    kBootstrapPooledChainId) and as a log line, with standard errors across chains.
//
// Records: only the final round's draws are written (their chain_id and seed are the chain's own),
// so pemc-report summarize/compare give the final-round estimates unchanged. The chain's footer
// summary counts all rounds: n_gradient_evals, wall_seconds and cpu_seconds include the
// bootstrap rounds, and so does n_gradient_evals_warmup (the bootstrap rounds are preparation,
// like warmup); its estimates add "bootstrap_rounds", "bootstrap_draws" (post-warmup draws per
// chain in the bootstrap rounds), "bootstrap_gradient_evals" and "bootstrap_base_origin" (the base
// its last round ran with: 0 the configured one, r the refit of round r's pooled estimates).
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "estimators/rb_tempering.hpp"
#include "extended/continuous_tempering_base_choice.hpp"
#include "pemc/v1/config.pb.h"
#include "pemc/v1/records.pb.h"

namespace pemc::extended {

// EstimatesSnapshot.chain_id of a round's pooled estimates.
inline constexpr int kBootstrapPooledChainId = -1;

struct BootstrapSettings {
  int rounds = 0;                    // bootstrap rounds before the final one
  std::int64_t draws_per_round = 0;  // post-warmup draws per chain in a bootstrap round
  std::int64_t warmup = 0;           // warmup per bootstrap round
  double covariance_scale = 1.0;     // the refitted covariance is multiplied by this
  double keep_variance_ratio = 2.0;  // choose_next_base's ratio
};

// The settings of a continuous-tempering run with bootstrap rounds; nullopt for any other run.
std::optional<BootstrapSettings> bootstrap_settings(const v1::RunConfig& run);

// sampler.continuous_tempering.sweeps_per_draw (1 when unset).
std::int64_t bootstrap_sweeps_per_draw(const v1::RunConfig& run);

// Iterations per chain (warmup included) that the bootstrap rounds add to the run's own (a
// bootstrap round runs draws_per_round x sweeps_per_draw single-sweep iterations).
std::int64_t bootstrap_extra_iterations(const v1::RunConfig& run);

// The stream seed of bootstrap round `round` (0-based, < rounds): seed and round mixed by the
// SplitMix64 finaliser, so no two rounds (nor a round and the final round, which uses `seed`)
// share random numbers.
std::uint64_t bootstrap_round_seed(std::uint64_t seed, int round);

// The plain continuous-tempering run that round `round` (0 .. rounds) of `run` is: bootstrap
// cleared; for round > 0 the base replaced by `base` (required then); for a bootstrap round
// (round < rounds) warmup = settings.warmup, iterations = draws_per_round x sweeps_per_draw with
// sweeps_per_draw cleared (every sweep is a draw, so the refit sees every state), thin 1, no warmup draws
// and no running estimates written. Throws ConfigError when `run` has no bootstrap rounds or a
// base is missing.
v1::RunConfig bootstrap_round_config(const v1::RunConfig& run, int round,
                                     const v1::BaseDensityConfig* base);

// `base` with its log zeta set to log_zeta (every kind has the field: the Gaussian's own, the
// fitted kinds' override).
v1::BaseDensityConfig with_log_zeta(v1::BaseDensityConfig base, double log_zeta);

// Adds a post-warmup draw of a continuous-tempering chain to `acc` (x = extra_states, log w0 and
// log w1 from extra, see continuous_tempering.hpp) and returns its log zeta. Throws DataError when
// the draw does not have that layout.
double add_ct_draw(estimators::TemperingRbAccumulator& acc, const v1::Draw& draw);

// One chain's result of one bootstrap round.
struct BootstrapChainReport {
  int chain_id = 0;
  int round = 0;
  std::string status = "ok";          // the round's ChainSummary status
  double log_zeta = 0.0;              // used in this round
  estimators::TemperingRbAccumulator acc;
  double log_z_se = std::numeric_limits<double>::quiet_NaN();  // the chain's batch-means SE
  std::int64_t log_z_batches = 0;     // the full batches that SE rests on (0: none)
  std::int64_t gradient_evals = 0;    // this round's, warmup included (target gradients)
  std::int64_t extended_gradient_evals = 0;  // ChainSummary.n_extended_gradient_evals, likewise
  double wall_seconds = 0.0;
  double cpu_seconds = 0.0;           // the leader thread's, as ChainSummary.cpu_seconds
  bool ok() const { return status == "ok"; }

  std::string encode() const;
  // Throws DataError on malformed bytes.
  static BootstrapChainReport decode(const std::string& bytes);
};

// The pooled result of a finished round.
struct BootstrapRoundResult {
  int round = 0;                    // the finished bootstrap round (0-based)
  int n_chains = 0;                 // chains pooled (those that finished the round "ok")
  double log_zeta_used = 0.0;
  double log_z = 0.0;               // eq. (20) over the pooled accumulator
  double log_z_se = 0.0;            // sd of the per-chain log Z / sqrt(n); NaN for n < 2
  // sqrt(sum of the chains' squared batch-means SEs) / n: the SE of the chains' mean log Z, which
  // the pooled log Z is to first order (equal chain lengths); NaN when a chain has none.
  double log_z_se_within = 0.0;
  // Degrees of freedom of the two SEs' squares: n - 1, and sum_c (batches_c - 1).
  double log_z_se_dof = 0.0, log_z_se_within_dof = 0.0;
  std::int64_t draws = 0;           // pooled post-warmup draws
  double ess_w0 = 0.0, ess_w1 = 0.0;
  Vector mean, mean_se;             // eq. (21) pooled; sd across chains / sqrt(n)
  Vector variance, variance_se;     // diagonal of the pooled covariance; likewise
  std::int64_t gradient_evals = 0;  // all chains, all rounds so far
  // The refit of the pooled estimates, or why there is none.
  std::optional<v1::GaussianBaseConfig> next_base;
  std::string error;
  // Filled by BootstrapRounds: the base this round ran with, and the choice of the next round's
  // base (the refit, or an earlier round's base again) with the base itself.
  int base_origin = kConfiguredBase;
  BootstrapRoundQuality quality;
  BootstrapBaseChoice choice;
  std::optional<v1::BaseDensityConfig> chosen_base;  // none: the run cannot go on (error says why)
  int chosen_base_origin = kConfiguredBase;
  double chosen_log_zeta = std::numeric_limits<double>::quiet_NaN();
};

// Pools `reports` (the "ok" reports of one round, in ascending chain id: the merge order) and
// refits. Never throws for a failed refit: result.error says why (no draws, no positive weights,
// a covariance that is not positive definite). Leaves the choice fields to BootstrapRounds.
BootstrapRoundResult pool_bootstrap_round(const std::vector<const BootstrapChainReport*>& reports,
                                          const BootstrapSettings& settings);

// The round's pooled estimates as a record: run_id, chain_id kBootstrapPooledChainId, iteration =
// bootstrap draws per chain so far, estimates "bootstrap_round" (1-based), "n_chains", "log_z",
// "log_z_se" (across chains), "log_z_se_within" (the chains' batch-means SEs), "log_z_var_x_draws"
// (the larger SE squared x pooled draws: the round's quality), "log_z_se_dof" (that SE's degrees of
// freedom), "log_zeta", "base_origin" (of the
// base this round ran with: 0 configured, r the refit of round r), "log_zeta_shift_z" (log Z against
// log zeta, in SEs, when log zeta was an estimate), "ess_w0", "ess_w1", "refit_ok",
// "next_base_origin", "base_kept" (1: the next round reuses an earlier round's base), "kept_round"
// (1-based, when kept), "variance_ratio" (this round's variance per draw over the best earlier
// one's), "variance_threshold" (the ratio beyond which the refit is dropped), "next_log_zeta", "mean_<i>", "mean_se_<i>", "var_<i>", "var_se_<i>" (SEs only with >= 2
// chains). Keys whose value is unknown are left out.
v1::Record bootstrap_snapshot(const BootstrapRoundResult& r, const std::string& run_id,
                              const BootstrapSettings& settings, double wall_seconds);

// One line for the log.
std::string describe(const BootstrapRoundResult& r, const BootstrapSettings& settings);

// What the coordinator tells every worker after a round: the base of round `round` (> 0) of a
// run, or why it has none, and each chain's bootstrap totals so far (ChainSummary's
// n_gradient_evals, n_extended_gradient_evals, wall_seconds and cpu_seconds summed over the
// finished rounds, by chain id; estimates "bootstrap_base_origin" = the origin of this base).
struct BootstrapBroadcast {
  int run_index = 0;
  int round = 0;
  std::optional<v1::BaseDensityConfig> base;
  std::string error;
  std::map<int, v1::ChainSummary> totals;

  std::string encode() const;
  static BootstrapBroadcast decode(const std::string& bytes);
};

// The coordinator's bookkeeping of one run's rounds over the chains of this job.
class BootstrapRounds {
 public:
  // configured_base: the run's sampler.continuous_tempering.base (round 0's).
  BootstrapRounds(int run_index, BootstrapSettings settings, std::vector<int> chain_ids,
                  v1::BaseDensityConfig configured_base);

  const BootstrapSettings& settings() const { return settings_; }
  // Records a report of the current round. When it completes the round, returns the pooled
  // result; then round() has advanced and live_chains() are those that finished it "ok". Throws
  // DataError for a report of another round or an unknown/duplicate chain.
  // The choice of the next base (choose_next_base over every finished round) is in the result.
  std::optional<BootstrapRoundResult> on_report(BootstrapChainReport report);
  // The round being run (rounds() once the bootstrap rounds are done: the final round).
  int round() const { return round_; }
  // Chains still running (ascending chain id).
  const std::vector<int>& live_chains() const { return live_; }
  // The message for the workers after the round `result` finished.
  BootstrapBroadcast broadcast(const BootstrapRoundResult& result) const;

 private:
  // Fills result's quality and choice and sets the base of the next round.
  void choose_base(BootstrapRoundResult& result);

  int run_index_;
  BootstrapSettings settings_;
  int round_ = 0;
  std::vector<int> live_;
  std::map<int, BootstrapChainReport> reports_;  // this round's, by chain id
  std::map<int, v1::ChainSummary> totals_;
  std::int64_t gradient_evals_ = 0;
  // Every finished round's quality and base (round 0: the configured base).
  std::vector<BootstrapRoundQuality> history_;
  std::vector<v1::BaseDensityConfig> bases_;
  v1::BaseDensityConfig current_base_;
  int current_origin_ = kConfiguredBase;
  double current_log_zeta_se_ = std::numeric_limits<double>::quiet_NaN();
};

// A chain's final-round summary with its bootstrap totals added (see the file comment).
void add_bootstrap_totals(v1::ChainSummary& summary, const v1::ChainSummary& totals,
                          const BootstrapSettings& settings);

}  // namespace pemc::extended
