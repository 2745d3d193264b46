#pragma once
// When a sampler's per-chain log Z and its standard error cannot be trusted, judged from the
// numbers the sampler reports with it (a chain's footer "estimates") and from the run-level checks
// of log_z_run_checks.hpp, which write their results into the same estimates.
//
// Every per-chain SE (PT's batch means, ST's regenerative tours, AIS's delta method over runs,
// CT's) describes the fluctuations of what the chain has seen. None can see a mode the chain never
// reached or a weight it never drew, so each estimator is flagged when the sign of that is there:
//   * round_trips (PT, ST): fewer index round trips 0 -> K-1 -> 0 than max(10, batches), where
//     batches = "log_z_batches" (PT's batch-means batches; ST reports none when its SE comes from
//     regeneration tours, which are independent however few). A round trip passes through the
//     reference, which forgets the mode the chain was in; a batch without one is not independent
//     of its neighbours, and a batch-means SE over such batches is too small. PT also when one
//     replica made none ("round_trips_min_replica" = 0) however many the others made: that
//     replica's mode has been held for the whole run.
//   * weight_ess (AIS, CT): Kish ESS of the weights (AIS's runs, CT's w1) below 30 or below 1 % of
//     the draws: a handful of draws carry the estimate, so its sample SE rests on a handful of
//     values.
//   * weight_tail (AIS): Pareto k-hat of the runs' weights (pareto_tail.hpp) above
//     min(1 - 1/log10 n, 0.7) for the chain's n runs: the weights' variance is effectively
//     infinite, Z-hat is dominated by weights not seen yet and biased low on the log scale, and
//     sd(r) / sqrt(n) means nothing.
//   * tour_tail (ST): the same for the sums of its regeneration tours ("log_z_tour_pareto_k" over
//     "log_z_tours"): a rare kind of tour (one that finds a mode at the top and stays) carries the
//     estimate, and no SE from the chain's tours is right.
//     Where the run-level checks ran, these rules (and AIS's weight_ess) fire for every chain of
//     the run when any of its chains' own draws fail them ("log_z_chains_heavy_tail",
//     "log_z_chains_low_ess"), and AIS's read the run's pooled weights ("pooled_ess",
//     "pooled_n_runs", "pooled_log_weight_pareto_k"): judged on each chain's own draws alone they
//     would flag exactly the chains that drew the rare heavy runs and leave the others, biased
//     low, trusted.
//   * directions_disagree (PT): the forward and reverse stepping-stone estimates ("<key>_forward",
//     "<key>_reverse" with their SEs) differ by more than 4.5 times the SE of their difference.
//     Each direction weights one level's draws by the next level's density; when a level puts
//     mass where its neighbour's draws never go (a mode the reference misses, seen only near
//     beta = 1) one direction never sees it and is confidently wrong, and their mean with it.
//   * no_se: a log Z without a finite standard error.
//   * chains_disagree (run level): the chains' estimates scatter more than their SEs allow.
//   * modes (run level, modes/mode_occupancy.hpp via "modes_untrusted" = 1): a mode the search
//     found that no chain visited, or chains that disagree on the modes' shares.
// A log Z is "unchecked" (log_z_unchecked = 1) when its run has fewer than 3 chains with a log Z
// and an SE: the run-level agreement check, the only one that can see a mode every chain of the
// run missed or SEs that are all too small, could not be made. Unchecked is not evidence against
// the estimate, but it is never trusted.
// Keys in a chain's estimates:
//   log_z_untrusted = 1 or 0 (always, once the chain has a log Z),
//   log_z_untrusted_<reason> = 1 for each reason that applies (absent otherwise),
//   and from the run-level checks: log_z_unchecked = 1 or 0, log_z_chains_compared,
//   log_z_chains_spread_ratio and the pooled_* keys of an AIS run (log_z_run_checks.hpp).
// For samplers on the power path (no normalised reference) the estimate is "log_z_ratio"; the same
// keys are used.
#include <map>
#include <string>
#include <vector>

namespace pemc::estimators {

struct LogZTrustRules {
  double min_round_trips = 10.0;
  double min_weight_ess = 30.0;
  double min_weight_ess_fraction = 0.01;
  // Chains disagree when the chi-square test of equal means with their SEs has p below this.
  double disagreement_p_value = 1e-3;
  // Fewer chains with a log Z and an SE than this: the agreement check is not made (unchecked).
  int min_chains_compared = 3;
  // Forward and reverse stepping-stone estimates disagree beyond this many SEs of their difference.
  double max_direction_z = 4.5;
};

// The reasons (short names, in a fixed order) why this chain's log Z cannot be trusted; empty when
// none applies or the chain has no log Z. Reads only the keys named above.
std::vector<std::string> log_z_doubts(const std::map<std::string, double>& estimates,
                                      const LogZTrustRules& rules = {});

// Adds log_z_untrusted and log_z_untrusted_<reason> to a chain's estimates from log_z_doubts
// (keeps a chains_disagree already there). No-op without a log Z. Returns the reasons.
std::vector<std::string> annotate_log_z_trust(std::map<std::string, double>& estimates,
                                              const LogZTrustRules& rules = {});

// "log_z" or "log_z_ratio", whichever the estimates hold ("" if neither).
std::string log_z_key(const std::map<std::string, double>& estimates);

// One line for logs: "<reason>, <reason>" with the numbers behind each, e.g.
// "round_trips (4 < 32 batches)". Empty when trusted.
std::string describe_log_z_doubts(const std::map<std::string, double>& estimates,
                                  const LogZTrustRules& rules = {});

// True when the estimates carry log_z_untrusted = 1.
bool log_z_untrusted(const std::map<std::string, double>& estimates);
// True when the estimates carry log_z_unchecked = 1 (the run had too few chains to compare).
bool log_z_unchecked(const std::map<std::string, double>& estimates);
// True only when both checks ran and passed: log_z_untrusted = 0 and log_z_unchecked = 0.
bool log_z_trusted(const std::map<std::string, double>& estimates);

// Erases every key the trust checks write (log_z_untrusted*, log_z_unchecked*, log_z_chains_*,
// pooled_*), so that they can be derived afresh.
void clear_log_z_trust(std::map<std::string, double>& estimates);

// The line logs and notes give an untrusted estimate: "log_z 117.2 ± 0.21 cannot be trusted:
// <describe_log_z_doubts>" ("± (no SE)" without a finite SE).
std::string describe_untrusted_log_z(const std::map<std::string, double>& estimates);
// The same for an unchecked one: "log_z 117.2 ± 0.21 is unchecked: the run has 1 chain with ...".
std::string describe_unchecked_log_z(const std::map<std::string, double>& estimates);

}  // namespace pemc::estimators
