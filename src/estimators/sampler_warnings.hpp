#pragma once
// The warnings a finished run deserves, one rule set for every place that shows them (pemc-report
// summarize and diagnose; the run-end log can use it too): numbers about the run in, one line per
// problem out, each saying what is wrong, how much, and what to try. Pure: no I/O.
//
// Rules (thresholds as Stan's and posterior's defaults, Vehtari et al. 2021):
//   divergences          any divergent post-warmup draw (count and share of the draws)
//   tree depth           any post-warmup draw at the configured maximum tree depth
//   E-BFMI               a chain's E-BFMI below kEbfmiMin (estimators/ebfmi.hpp)
//   R-hat                a quantity's R-hat above kRhatMax
//   bulk ESS             a quantity's bulk ESS below kEssBulkPerChainMin per chain
//   the chains' own      each kind of ChainSummary.warnings (e.g. degenerate pseudo-extended
//                        weights), once per run with how many chains have it
// Each rule gives at most one line per run.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace pemc::estimators {

inline constexpr double kRhatMax = 1.01;
inline constexpr double kEssBulkPerChainMin = 100.0;
inline constexpr double kEbfmiMin = 0.3;

struct ChainHealth {
  int chain_id = 0;
  std::int64_t n_draws = 0;  // post-warmup
  // Unset: the sampler records no such thing (no divergences, no tree depth).
  std::optional<std::int64_t> n_divergent;
  std::optional<std::int64_t> n_max_tree_depth;  // draws at max_tree_depth
  int max_tree_depth = 0;
  double ebfmi = std::numeric_limits<double>::quiet_NaN();  // NaN: not available
  // The chain's own warnings (ChainSummary.warnings), "kind: details".
  std::vector<std::string> warnings;
};

struct QuantityHealth {
  std::string name;
  double rhat = std::numeric_limits<double>::quiet_NaN();      // NaN: undefined, not judged
  double ess_bulk = std::numeric_limits<double>::quiet_NaN();  // NaN: undefined, not judged
};

struct RunHealth {
  std::vector<ChainHealth> chains;
  std::vector<QuantityHealth> quantities;
};

// One line per problem, in the order of the rules above; empty when nothing is wrong.
std::vector<std::string> sampler_warnings(const RunHealth& run);

// The chains' own warnings only, one line per kind (the text before its first ':'), in order of
// first appearance: "K of M chains: <the first such chain's warning> (the numbers are chain C's)".
std::vector<std::string> chain_warning_lines(const std::vector<ChainHealth>& chains);

}  // namespace pemc::estimators
