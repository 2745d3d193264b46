#pragma once
// Checks a run against a reference posterior (posteriordb's gold-standard draws), as
// ../shared/posteriordb/README.md describes: for every quantity q of the reference (parameters and
// transformed parameters, constrained scale), with the reference's mean m_ref, sd s_ref and bulk
// ESS_ref, and the run's estimate m with its Monte Carlo standard error,
//   z = (m - m_ref) / sqrt(MCSE^2 + s_ref^2 / ESS_ref),
// and the same for the second moment E[q^2]. A run passes when no |z| exceeds the threshold (4).
//
// The run's estimate of E[f] and its MCSE, for every sampler alike: each post-warmup draw t gives
// a numerator a_t and a denominator b_t, estimate = sum a_t / sum b_t:
//   - plain draws: a_t = f(x_t), b_t = 1;
//   - pseudo-extended draws (weights normalised within the draw, draw_weights.hpp): a_t =
//     sum_j w_tj f(x_tj) with sum_j w_tj = 1, b_t = 1;
//   - draws with a global weight (continuous/simulated tempering, AIS): a_t = W_t f(x_t), b_t = W_t
//     (W_t = exp(log weight - the largest log weight of the run)).
// The ratio's MCSE is that of the mean of r_t = (a_t - estimate b_t) / mean(b) (the delta method),
// sd(r) / sqrt(ESS(r)), with ESS the bulk ESS of r over the run's chains.
#include <filesystem>
#include <string>
#include <vector>

namespace pemc::report {

struct ReferenceCheckOptions {
  std::filesystem::path reference_draws;  // posteriordb reference: .json or .json.zip
  std::filesystem::path reference_info;   // its .info.json (bulk ESS per quantity); may be empty
  std::string run_filter;                 // the run to check in a study file (empty: the only run)
  double threshold = 4.0;
  int show_worst = 8;
};

struct QuantityCheck {
  std::string name;
  std::string moment;  // "mean" or "second moment"
  double estimate = 0, mcse = 0, ess = 0;
  double reference = 0, reference_sd = 0, reference_ess = 0;
  double z = 0;
};

struct ReferenceCheck {
  std::string run_id;
  std::string sampler;
  int n_chains = 0;
  long long n_draws = 0;                // post-warmup draws read over all chains
  std::vector<QuantityCheck> checks;    // worst |z| first
  double max_abs_z = 0;
  bool passed = false;                  // max_abs_z <= threshold and every z finite
  std::vector<std::string> warnings;    // e.g. a damaged file read up to the damage
};

// Reads the record file and the reference and computes every z. Throws ConfigError/DataError/
// IoError naming the file: unreadable files, a reference quantity the run does not output, a
// study file without --run, no post-warmup draws.
ReferenceCheck check_against_reference(const std::filesystem::path& record_file,
                                       const ReferenceCheckOptions& options);

std::string reference_check_to_table(const ReferenceCheck& check, const ReferenceCheckOptions& o);
std::string reference_check_to_json(const ReferenceCheck& check);

// The text of a posteriordb file: a .zip holding one member is read through libzip, anything
// else as it is.
std::string read_maybe_zipped(const std::filesystem::path& path);

}  // namespace pemc::report
