#pragma once
// When a sampler's per-chain log Z and its standard error cannot be trusted, judged from the
// numbers the sampler reports with it (a chain's footer "estimates"), and whether the chains of a
// run agree within their standard errors.
//
// Every per-chain SE (PT's and ST's batch means, AIS's delta method over runs, CT's) describes the
// fluctuations of what the chain has seen. None can see a mode the chain never reached or a
// weight it never drew, so each estimator is flagged when the sign of that is there:
//   * round_trips (PT, ST): fewer index round trips 0 -> K-1 -> 0 than max(10, batches), where
//     batches = "log_z_batches" (the batch-means batches). A round trip passes through the
//     reference, which forgets the mode the chain was in; a batch without one is not independent
//     of its neighbours, and a batch-means SE over such batches is too small. PT also when one
//     replica made none ("round_trips_min_replica" = 0) however many the others made: that
//     replica's mode has been held for the whole run.
//   * weight_ess (AIS, CT): Kish ESS of the weights (AIS's runs, CT's w1) below 30 or below 1 % of
//     the draws: a handful of draws carry the estimate, so its sample SE rests on a handful of
//     values.
//   * weight_tail (AIS): Pareto k-hat of the runs' weights ("log_weight_pareto_k",
//     pareto_tail.hpp) above min(1 - 1/log10 n, 0.7): the weights' variance is effectively
//     infinite, Z-hat is dominated by weights not seen yet and biased low on the log scale, and
//     sd(r) / sqrt(n) means nothing.
//   * no_se: a log Z without a finite standard error.
//   * chains_disagree (run level, log_z_agreement): the chains' estimates scatter more than their
//     SEs allow.
//   * modes (run level, modes/mode_occupancy.hpp via "modes_untrusted" = 1): a mode the search
//     found that no chain visited, or chains that disagree on the modes' shares.
// Keys added to a chain's estimates (annotate_log_z_trust, annotate_log_z_agreement):
//   log_z_untrusted = 1 or 0 (always, once the chain has a log Z),
//   log_z_untrusted_<reason> = 1 for each reason that applies (absent otherwise),
//   log_z_chains_spread_ratio = sqrt(chi^2 / (n - 1)) of the run's chains (see below).
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
};

// The reasons (short names, in a fixed order) why this chain's log Z cannot be trusted; empty when
// none applies or the chain has no log Z. Reads only the keys named above.
std::vector<std::string> log_z_doubts(const std::map<std::string, double>& estimates,
                                      const LogZTrustRules& rules = {});

// Adds log_z_untrusted and log_z_untrusted_<reason> to a chain's estimates from log_z_doubts
// (keeps a chains_disagree already there). No-op without a log Z. Returns the reasons.
std::vector<std::string> annotate_log_z_trust(std::map<std::string, double>& estimates,
                                              const LogZTrustRules& rules = {});

// Do n chains' estimates l_c with standard errors s_c agree? With weights 1 / s_c^2 and their
// weighted mean m: chi2 = sum_c (l_c - m)^2 / s_c^2, which is chi-square with n - 1 degrees of
// freedom when every SE is right and the chains estimate the same number. spread_ratio =
// sqrt(chi2 / (n - 1)) is the factor by which the SEs understate the scatter (about 1 when they are
// right). Chains without a finite estimate or a positive finite SE are left out.
struct LogZAgreement {
  int n = 0;                  // chains used
  double weighted_mean = 0.0;
  double chi2 = 0.0;
  double p_value = 1.0;       // P(chi2_{n-1} >= chi2); 1 for n < 2
  double spread_ratio = 0.0;  // NaN for n < 2
  bool disagree = false;      // n >= 3 and p_value < rules.disagreement_p_value
};
LogZAgreement log_z_agreement(const std::vector<double>& log_z, const std::vector<double>& se,
                              const LogZTrustRules& rules = {});

// The run-level check on the chains of one run (their estimates maps, modified): computes
// log_z_agreement over the chains that have a log Z, writes log_z_chains_spread_ratio into each of
// them and, when the chains disagree, log_z_untrusted_chains_disagree = 1 and log_z_untrusted = 1.
LogZAgreement annotate_log_z_agreement(const std::vector<std::map<std::string, double>*>& chains,
                                       const LogZTrustRules& rules = {});

// "log_z" or "log_z_ratio", whichever the estimates hold ("" if neither).
std::string log_z_key(const std::map<std::string, double>& estimates);

// One line for logs: "<reason>, <reason>" with the numbers behind each, e.g.
// "round_trips (4 < 32 batches)". Empty when trusted.
std::string describe_log_z_doubts(const std::map<std::string, double>& estimates,
                                  const LogZTrustRules& rules = {});

// True when the estimates carry log_z_untrusted = 1.
bool log_z_untrusted(const std::map<std::string, double>& estimates);

// The line logs and notes give an untrusted estimate: "log_z 117.2 ± 0.21 cannot be trusted:
// <describe_log_z_doubts>" ("± (no SE)" without a finite SE).
std::string describe_untrusted_log_z(const std::map<std::string, double>& estimates);

}  // namespace pemc::estimators
