#pragma once
// The log Z checks that need a run's chains together (each chain's own rules are in
// log_z_trust.hpp). A per-chain flag must not be able to pick a subset of the chains whose
// estimates are biased, and a run whose chains cannot be compared must say so:
//   * independent draws (AIS's runs, ST's regeneration tours): a chain's own tail (and AIS's ESS)
//     rule fires for every chain of the run when any chain's own draws fail it: the few chains
//     that drew from a rare, heavy part of the distribution show it, and flagging only them would
//     leave the others, which missed it and are biased low, trusted.
//   * AIS: the chains' runs are also pooled (pooled_ais_weights.hpp) and the weight rules of every
//     chain read the pooled ESS and Pareto k-hat, scaled to its runs. The pooled estimate over all
//     runs is judged too (pooled_log_z_untrusted), and when some chains look heavy-tailed on their
//     own, what the pooled estimate would be without them.
//   * agreement: the chi-square test of the chains' estimates with their SEs (needs 3 chains);
//     when they disagree every chain is flagged chains_disagree.
//   * unchecked: with fewer than 3 chains with a log Z and an SE every chain gets log_z_unchecked =
//     1: nothing has compared it with an independent estimate, so it is never counted as trusted.
// Keys written into every chain of the run that has a log Z (after clear_log_z_trust):
//   log_z_untrusted, log_z_untrusted_<reason> (log_z_trust.hpp, re-derived with the keys below);
//   log_z_unchecked = 1 or 0; log_z_chains_compared = chains in the agreement test;
//   log_z_chains_spread_ratio = sqrt(chi2 / (n - 1)) (n >= 2);
//   runs of 2 or more AIS or ST chains: log_z_chains_heavy_tail (chains whose own draws fail the
//   tail rule) and, AIS, log_z_chains_low_ess (the ESS rule);
//   AIS runs of 2 or more chains: pooled_n_chains, pooled_n_runs, pooled_log_z, pooled_log_z_se,
//   pooled_ess, pooled_log_weight_pareto_k (when defined), pooled_log_z_untrusted = 1 or 0, and
//   when some but not all chains fail the tail rule on their own, pooled_heavy_tail_chains and
//   pooled_log_z_without_heavy_tail_chains.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "estimators/log_z_trust.hpp"
#include "estimators/pooled_ais_weights.hpp"

namespace pemc::estimators {

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
  bool disagree = false;      // n >= rules.min_chains_compared and p_value < rules' p
};
LogZAgreement log_z_agreement(const std::vector<double>& log_z, const std::vector<double>& se,
                              const LogZTrustRules& rules = {});

// One chain of a run as the run-level checks see it.
struct RunChainLogZ {
  std::map<std::string, double>* estimates = nullptr;  // modified
  std::span<const double> largest_log_weights;          // ChainSummary.largest_log_weights
};

struct LogZRunCheck {
  int n_with_log_z = 0;    // chains with a log Z (the others are left alone)
  LogZAgreement agreement;
  bool unchecked = false;  // n_with_log_z > 0 and agreement.n < rules.min_chains_compared
  std::optional<PooledAisWeights> pooled;  // AIS runs with 2 or more chains
};

// Clears and re-derives every trust key of the run's chains (above). Returns what it found.
LogZRunCheck annotate_log_z_run(const std::vector<RunChainLogZ>& chains,
                                const LogZTrustRules& rules = {});

// The same for chains without largest log weights (AIS tails then cannot be pooled).
LogZRunCheck annotate_log_z_run(const std::vector<std::map<std::string, double>*>& chains,
                                const LogZTrustRules& rules = {});

// For an AIS chain with pooled_* keys: "pooled over 32 chains' 6400 runs: log_z 116.3 ± 0.021
// (Pareto k-hat 0.45, ESS 3100)", then, when some chains' own weights look heavy-tailed, "; the 7
// chains whose own weights' Pareto k-hat is above the limit for their runs pull it by +0.131 (6.2
// SE): without them it would be 116.17", then "; it cannot be trusted: <reasons>" when
// pooled_log_z_untrusted = 1. Empty without pooled keys.
std::string describe_pooled_log_z(const std::map<std::string, double>& estimates,
                                  const LogZTrustRules& rules = {});

}  // namespace pemc::estimators
