#pragma once
// The log Z calibration study (issue 31): every log Z estimator (PT stepping stone, AIS, ST, CT)
// on generated Boltzmann relaxations (CT paper Appendix B generator, `boltzmann { generated }`)
// whose exact log Z comes from enumerating the 2^{d_b} states. Shared by the statistical study
// (tests/statistical/log_z_calibration.cpp) and its small default-suite version
// (tests/unit/runner/log_z_calibration_test.cpp).
//
// Chains run in-process with runner::run_chain — the function pemc-dist's ranks call — with the
// same streams (seed, chain id), so every chain's footer summary, estimates and trust flags are
// exactly what pemc-dist would write. The run-level checks of the footer (the mode check, then
// AIS's pooled weights, the chains' agreement, "unchecked" below 3 chains;
// runner/mode_checks.hpp, estimators/log_z_run_checks.hpp) are applied to a cell's chains as the
// collector applies them: to all of them as one run, or to groups of 1 or 2 as runs of that many
// chains.
//
// Per cell (estimator x instance), over its n chains with estimate l_c, reported SE s_c and exact
// log Z t:
//   error e_c = l_c - t; mean error ± its SE sd(e) / sqrt(n); t statistic = mean / SE;
//   z_c = e_c / s_c; rms z = sqrt(mean z_c^2) and max |z_c| over the chains with a finite s_c;
//   "trusted" chains: log_z_untrusted = 0 and log_z_unchecked = 0 after the run-level checks
//   (estimators/log_z_trust.hpp);
//   "doubted" chains: flagged for a reason other than a missing SE;
//   "unchecked" chains: not doubted, in a run too small for the agreement check.
// The checks (unbiasedness and calibration where the chains mix, or an honest warning):
//   bias:         |mean error| <= 3 SE of the mean, over all chains;
//   trusted bias: the same over the trusted chains alone, when at least 4 are trusted, at the
//                 Student t quantile of the same two-sided 0.27 % for their n - 1 degrees of
//                 freedom: the flags must not leave a biased subset trusted;
//   calibration:  rms z in [0.7, 1.5] over the trusted chains, when >= 16 of them have an SE;
//   a cell passes when all three hold, or when most of its chains are doubted or unchecked (the
//   run warns).
// An estimator whose chains carry no log_z_se has only its mean error checked.
// With z_c ~ N(0, 1) the rms over n = 32 chains has sd about 1 / sqrt(2 n) = 0.125, so [0.7, 1.5]
// is 2.4 sd below and 4 sd above 1; 3 SE of the mean is a 0.3 % two-sided false alarm per cell.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <boost/math/distributions/students_t.hpp>

#include "config/defaults.hpp"
#include "config/factories.hpp"
#include "config/load.hpp"
#include "config/modes.hpp"
#include "config/overrides.hpp"
#include "config/validate.hpp"
#include "core/error.hpp"
#include "estimators/log_z_run_checks.hpp"
#include "estimators/log_z_trust.hpp"
#include "modes/mode_search.hpp"
#include "runner/chain_driver.hpp"
#include "runner/mode_checks.hpp"

namespace pemc::log_z_study {

// The samplers' settings: each gives about 10^6 target gradients per chain at d_b = 20 (about a
// second), with the fitted reference / base of the CT paper (mean-field mixture moment matched).
struct Estimator {
  std::string name;     // pt, ais, st, ct
  std::string sampler;  // text-format SamplerConfig body
  std::int64_t warmup = 0, iterations = 0;
};

inline const std::string kHmc =
    "hmc { step_size: 0.2 n_leapfrog: 10 jitter_n_leapfrog: true "
    "adaptation { enabled: true target_accept: 0.7 } }";
inline const std::string kFitted = "fitted { boltzmann_mean_field { n_starts: 20 seed: 1 } }";

inline std::vector<Estimator> default_estimators() {
  return {
      {"pt",
       "parallel_tempering { " + kHmc + " reference { " + kFitted +
           " } ladder { kind: LINEAR n_levels: 10 } n_local_steps: 2 adapt_schedule: true }",
       500, 5000},
      {"ais",
       "annealed_importance { " + kHmc + " reference { " + kFitted +
           " } ladder { kind: SIGMOIDAL n_levels: 500 sigmoid_scale: 4 } n_local_steps: 1 }",
       10, 200},
      // AIS with NUTS as the local kernel (not in the study's default selection).
      {"ais_nuts",
       "annealed_importance { nuts { step_size: 0.2 max_tree_depth: 6 adaptation { enabled: true "
       "} } reference { " + kFitted +
           " } ladder { kind: SIGMOIDAL n_levels: 500 sigmoid_scale: 4 } n_local_steps: 1 }",
       10, 200},
      {"st",
       "simulated_tempering { " + kHmc + " reference { " + kFitted +
           " } ladder { kind: LINEAR n_levels: 40 } n_local_steps: 2 adapt_weights: true "
           "first_pilot_length: 100 }",
       4000, 40000},
      {"ct",
       "continuous_tempering { variant: GIBBS " + kHmc + " base { boltzmann_mean_field { "
           "n_starts: 20 seed: 1 } } }",
       1000, 40000},
  };
}

struct Instance {
  std::uint64_t generator_seed = 1;
  int n_units = 20;
  std::string label() const { return fmt::format("gen{}-{}u", generator_seed, n_units); }
};

// The run config of one cell: `n_seeds` chains with seeds 1..n_seeds, then the --set overrides.
inline v1::RunConfig cell_config(const Estimator& e, const Instance& inst, int n_seeds,
                                 const std::vector<std::string>& sets = {}) {
  const std::string text = fmt::format(
      "name: \"{}_{}\"\n"
      "target {{ boltzmann {{ generated {{ seed: {} n_units: {} }} }} }}\n"
      "sampler {{ {} }}\n"
      "warmup: {} iterations: {}\n"
      "seeds {{ base: 1 count: {} }}\n"
      "init {{ uniform_radius: 2.0 }}\n"
      "output {{ path: \"{}\" }}\n",
      e.name, inst.label(), inst.generator_seed, inst.n_units, e.sampler, e.warmup, e.iterations,
      n_seeds, "/tmp/pemc_log_z_calibration_unused.pemc");
  auto loaded = config::parse_text_config(text, e.name + ".pbtxt");
  config::CommandLineOverrides o;
  o.sets = sets;
  config::apply_overrides(loaded, o, /*skip_oneof_mismatches=*/true);
  config::apply_defaults(loaded);
  config::validate(loaded, config::Scope::kRun);
  return loaded.config;
}

// The exact log Z of the cell's target (enumeration).
inline double exact_log_z(const v1::RunConfig& config) {
  const auto truth = config::make_target(config.target())->truth();
  if (!truth.log_z) throw Error("no exact log Z for " + config.name());
  return *truth.log_z;
}

// A cell's chains as the ranks' workers return them (no run-level checks yet), with the Laplace
// shares of the modes the run's search found (empty when the run does not search).
struct CellChains {
  std::vector<v1::ChainSummary> chains;
  std::vector<double> mode_shares;
};

// Every chain of the config (global chain id = seed index), `threads` at a time. The run's mode
// search runs once, as pemc-dist's does before any chain (runner/mode_search_step.hpp), and every
// chain gets it: the same modes each chain's own search would find.
inline CellChains run_chains(const v1::RunConfig& config, int threads) {
  const auto seeds = config::expand_seeds(config);
  const int n = static_cast<int>(seeds.size());
  CellChains out;
  out.chains.resize(static_cast<std::size_t>(n));
  modes::ModeSetPtr modes;
  if (config::mode_search_enabled(config)) {
    const auto target = config::make_target(config.target());
    const auto settings = config::mode_search_settings(config);
    modes = std::make_shared<const modes::ModeSet>(
        modes::search_modes(*target, settings, modes::serial_batches(*target, settings)));
    out.mode_shares = modes->laplace_shares();
  }
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int i; (i = next++) < n;) {
      auto target = config::make_target(config.target());
      out.chains[i] = runner::run_chain(config, target, runner::ChainTask{i, seeds[i]}, {},
                                        nullptr, nullptr, modes);
      out.chains[i].set_run_id(config.name());
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, std::min(threads, n)); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return out;
}

// The run-level checks over the "ok" chains, as the collector makes them before the footer
// (runner/collector.cpp): the mode check first (runner/mode_checks.hpp; its verdict enters the
// log Z trust rules), then estimators/log_z_run_checks.hpp. Over all of the chains as one run, or
// over consecutive groups of `chains_per_run` (so that 32 seeds stand for 32 runs of one chain, or
// 16 of two; 0 = one run of every chain). Returns the chains with their trust keys.
inline std::vector<v1::ChainSummary> check_runs(const CellChains& cell, int chains_per_run = 0) {
  auto chains = cell.chains;
  const int n = static_cast<int>(chains.size());
  const int group = chains_per_run > 0 ? chains_per_run : std::max(n, 1);
  for (int first = 0; first < n; first += group) {
    const int last = std::min(n, first + group);
    if (!cell.mode_shares.empty()) {
      v1::Footer footer;
      for (int i = first; i < last; ++i) *footer.add_chains() = chains[i];
      runner::annotate_mode_checks(footer, {{chains[first].run_id(), cell.mode_shares}});
      for (int i = first; i < last; ++i) chains[i] = footer.chains(i - first);
    }
    std::vector<std::map<std::string, double>> maps;
    std::vector<int> ok;
    for (int i = first; i < last; ++i)
      if (chains[i].status() == "ok") {
        ok.push_back(i);
        maps.emplace_back(chains[i].estimates().begin(), chains[i].estimates().end());
      }
    std::vector<estimators::RunChainLogZ> run;
    for (std::size_t j = 0; j < ok.size(); ++j) {
      const auto& w = chains[ok[j]].largest_log_weights();
      run.push_back({&maps[j], {w.data(), static_cast<std::size_t>(w.size())}});
    }
    estimators::annotate_log_z_run(run);
    for (std::size_t j = 0; j < ok.size(); ++j) {
      auto& e = *chains[ok[j]].mutable_estimates();
      e.clear();
      for (const auto& [k, v] : maps[j]) e[k] = v;
    }
  }
  return chains;
}

// A cell's chains, checked as one run.
inline std::vector<v1::ChainSummary> run_cell(const v1::RunConfig& config, int threads) {
  return check_runs(run_chains(config, threads));
}

struct ChainResult {
  std::uint64_t seed = 0;
  double error = NAN, se = NAN, z = NAN;
  bool trusted = false;  // log_z_untrusted = 0 and log_z_unchecked = 0
  bool doubted = false;  // a reason other than a missing SE (evidence against the estimate)
  bool unchecked = false;  // not doubted, but its run had too few chains to compare
  std::string doubts;
  std::string diagnostics;  // the numbers the trust rules read, for --chains
  double seconds = 0.0;
  std::int64_t gradient_evals = 0;
};

// Mean, its SE sd / sqrt(n) and the t statistic of a set of errors (NaN below 2 values).
struct MeanError {
  int n = 0;
  double mean = NAN, sd = NAN, se = NAN, t = NAN;
  explicit MeanError(const std::vector<double>& e = {}) : n(static_cast<int>(e.size())) {
    if (n == 0) return;
    mean = 0;
    for (double x : e) mean += x / n;
    if (n < 2) return;
    double ss = 0;
    for (double x : e) ss += (x - mean) * (x - mean);
    sd = std::sqrt(ss / (n - 1));
    se = sd / std::sqrt(static_cast<double>(n));
    t = mean / se;
  }
  // |t| within the two-sided 0.27 % point (3 sd of a normal) of Student's t with n - 1 dof.
  bool unbiased() const {
    if (n < 2) return false;
    const boost::math::students_t dist(n - 1);
    return std::fabs(t) <= boost::math::quantile(dist, 1.0 - 0.0027 / 2);
  }
};

struct CellStats {
  std::string estimator, instance;
  double truth = 0.0;
  int n = 0, n_failed = 0, n_with_se = 0, n_trusted = 0, n_trusted_with_se = 0, n_doubted = 0;
  int n_unchecked = 0;
  double mean_error = NAN, mean_error_se = NAN, t = NAN;
  MeanError trusted_error;              // over the trusted chains
  double rms_z = NAN, max_abs_z = NAN;  // over chains with an SE
  double rms_z_trusted = NAN;           // over trusted chains with an SE
  double mean_se = NAN;                 // mean reported SE
  double sd_error = NAN;                // spread of the chains' estimates
  double spread_ratio = NAN;            // the run-level check's sqrt(chi2 / (n - 1))
  double mean_seconds = 0.0, mean_gradient_evals = 0.0;
  std::vector<ChainResult> chains;

  bool bias_ok() const { return n >= 2 && std::fabs(mean_error) <= 3.0 * mean_error_se; }
  bool trusted_bias_checked() const { return n_trusted >= 4; }
  bool trusted_bias_ok() const { return trusted_error.unbiased(); }
  bool calibration_checked() const { return n_trusted_with_se >= 16; }
  bool calibration_ok() const { return rms_z_trusted >= 0.7 && rms_z_trusted <= 1.5; }
  // Most chains carry evidence that their log Z is wrong (a missing SE alone is no evidence, and
  // such a chain's mean error is still checked).
  bool mostly_flagged() const { return 2 * n_doubted > n; }
  // Most chains are doubted or unchecked: the run says its log Z is not to be relied on.
  bool mostly_warned() const { return 2 * (n_doubted + n_unchecked) > n; }
  // Right answers with honest SEs, or a warning on most chains.
  bool pass() const {
    return n > 0 && ((bias_ok() && (!trusted_bias_checked() || trusted_bias_ok()) &&
                      (!calibration_checked() || calibration_ok())) ||
                     mostly_warned());
  }
};

inline double estimate(const v1::ChainSummary& c, const std::string& key) {
  const auto it = c.estimates().find(key);
  return it == c.estimates().end() ? NAN : it->second;
}

inline CellStats summarise(const std::string& estimator, const std::string& instance, double truth,
                           const std::vector<v1::ChainSummary>& chains) {
  CellStats s;
  s.estimator = estimator;
  s.instance = instance;
  s.truth = truth;
  double sum_e = 0, sum_z2 = 0, sum_z2_trusted = 0, sum_se = 0;
  s.max_abs_z = 0;
  std::vector<double> errors, trusted_errors;
  for (const auto& c : chains) {
    std::map<std::string, double> e(c.estimates().begin(), c.estimates().end());
    const std::string key = estimators::log_z_key(e);
    if (c.status() != "ok" || key.empty() || !std::isfinite(e[key])) {
      ++s.n_failed;
      continue;
    }
    ChainResult r;
    r.seed = c.seed();
    r.error = e[key] - truth;
    r.se = e.count(key + "_se") ? e[key + "_se"] : NAN;
    r.trusted = estimators::log_z_trusted(e);
    r.doubts = estimators::describe_log_z_doubts(e);
    for (const char* k : {"round_trips", "round_trips_min_replica", "log_z_batches", "log_z_tours",
                          "log_z_tour_pareto_k", "n_runs", "ess", "log_weight_pareto_k", "ess_w1",
                          "rb_draws"})
      if (e.count(k)) r.diagnostics += fmt::format(" {}={:.4g}", k, e[k]);
    for (const auto& reason : estimators::log_z_doubts(e)) r.doubted |= reason != "no_se";
    r.unchecked = !r.doubted && estimators::log_z_unchecked(e);
    r.seconds = c.wall_seconds();
    r.gradient_evals = c.n_gradient_evals();
    if (e.count("log_z_chains_spread_ratio")) s.spread_ratio = e["log_z_chains_spread_ratio"];
    ++s.n;
    s.n_trusted += r.trusted;
    s.n_doubted += r.doubted;
    s.n_unchecked += r.unchecked;
    sum_e += r.error;
    if (r.trusted) trusted_errors.push_back(r.error);
    errors.push_back(r.error);
    s.mean_seconds += r.seconds;
    s.mean_gradient_evals += static_cast<double>(r.gradient_evals);
    if (std::isfinite(r.se) && r.se > 0) {
      r.z = r.error / r.se;
      ++s.n_with_se;
      sum_z2 += r.z * r.z;
      sum_se += r.se;
      s.max_abs_z = std::max(s.max_abs_z, std::fabs(r.z));
      if (r.trusted) {
        ++s.n_trusted_with_se;
        sum_z2_trusted += r.z * r.z;
      }
    }
    s.chains.push_back(r);
  }
  if (s.n == 0) return s;
  s.trusted_error = MeanError(trusted_errors);
  s.mean_error = sum_e / s.n;
  s.mean_seconds /= s.n;
  s.mean_gradient_evals /= s.n;
  if (s.n >= 2) {
    double ss = 0;
    for (double x : errors) ss += (x - s.mean_error) * (x - s.mean_error);
    s.sd_error = std::sqrt(ss / (s.n - 1));
    s.mean_error_se = s.sd_error / std::sqrt(static_cast<double>(s.n));
    s.t = s.mean_error / s.mean_error_se;
  }
  if (s.n_with_se > 0) {
    s.rms_z = std::sqrt(sum_z2 / s.n_with_se);
    s.mean_se = sum_se / s.n_with_se;
  } else {
    s.max_abs_z = NAN;
  }
  if (s.n_trusted_with_se > 0) s.rms_z_trusted = std::sqrt(sum_z2_trusted / s.n_trusted_with_se);
  return s;
}

inline std::string table_header() {
  return "| estimator | instance | chains (doubted) | mean error ± SE | t (trusted) | sd of log Z "
         "| mean SE | rms z (trusted) | max abs z | s per chain | check |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|\n";
}

// "flagged": most chains are doubted; "unchecked": most are doubted or unchecked (runs of 1 or 2
// chains); either way the run warns, so its SEs were not checked.
inline std::string verdict(const CellStats& s) {
  if (!s.pass()) return "FAIL";
  if (s.mostly_flagged()) return "flagged";
  if (s.mostly_warned()) return "unchecked";
  return "pass";
}

inline std::string table_row(const CellStats& s, bool checked) {
  auto f = [](double x, const char* spec) {
    return std::isfinite(x) ? fmt::format(fmt::runtime(spec), x) : std::string("—");
  };
  const std::string chains =
      s.n_unchecked > 0 ? fmt::format("{} ({}; {} unchecked)", s.n, s.n_doubted, s.n_unchecked)
                        : fmt::format("{} ({})", s.n, s.n_doubted);
  return fmt::format("| {} | {} | {} | {} ± {} | {} ({}) | {} | {} | {} ({}) | {} | {} | {} |\n",
                     s.estimator, s.instance, chains, f(s.mean_error, "{:+.4f}"),
                     f(s.mean_error_se, "{:.4f}"), f(s.t, "{:+.2f}"), f(s.trusted_error.t, "{:+.2f}"),
                     f(s.sd_error, "{:.4f}"), f(s.mean_se, "{:.4f}"), f(s.rms_z, "{:.2f}"),
                     f(s.rms_z_trusted, "{:.2f}"), f(s.max_abs_z, "{:.2f}"),
                     f(s.mean_seconds, "{:.2f}"), checked ? verdict(s) : "—");
}

}  // namespace pemc::log_z_study
