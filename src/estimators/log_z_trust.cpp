#include "estimators/log_z_trust.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>

#include "estimators/pareto_tail.hpp"

namespace pemc::estimators {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const char* kUntrusted = "log_z_untrusted";
constexpr const char* kDisagree = "chains_disagree";
constexpr const char* kUnchecked = "log_z_unchecked";

std::optional<double> get(const std::map<std::string, double>& e, const std::string& key) {
  const auto it = e.find(key);
  if (it == e.end()) return std::nullopt;
  return it->second;
}

struct Doubt {
  std::string reason;
  std::string detail;
};

// AIS's run weights and ST's regeneration tours are independent draws whose mean the chain's log Z
// takes, and their rules are the run's once its chains were checked together
// (log_z_run_checks.hpp): a rule fires for every chain of the run when any chain's own draws fail
// it (log_z_chains_heavy_tail, log_z_chains_low_ess) or, for AIS, when the run's pooled weights
// fail it (pooled_*, scaled to the chain's runs). A rare, heavy part of the draws' distribution
// shows in the few chains that drew from it; flagging only those would leave the others, which
// missed it and are biased low, trusted. In a run of one chain its own draws are judged.

// "k chain(s) of the run have <what>" when the run-level count says some did ("" otherwise).
std::string chains_failing(const std::map<std::string, double>& e, const char* count_key,
                           const char* what) {
  const double n = get(e, count_key).value_or(0.0);
  if (!(n > 0.0)) return "";
  return fmt::format("{:g} chain{} of the run {} {}", n, n == 1.0 ? "" : "s",
                     n == 1.0 ? "has" : "have", what);
}

// AIS runs (n_runs, ess) and CT's w1 (rb_draws, ess_w1): fewer effective draws than the rules ask.
std::optional<Doubt> weight_ess_doubt(const std::map<std::string, double>& e,
                                      const LogZTrustRules& rules) {
  std::optional<double> ess, draws;
  std::string source;
  if (const auto n = get(e, "n_runs")) {
    draws = n;
    ess = get(e, "ess");
    const auto pooled_ess = get(e, "pooled_ess"), pooled_runs = get(e, "pooled_n_runs");
    if (pooled_ess && pooled_runs) {
      // What a chain of n runs can expect from the run's weights.
      ess = *pooled_ess / *pooled_runs * *n;
      source = fmt::format(", from the run's pooled weights' ESS {:.3g} of {:g} runs", *pooled_ess,
                           *pooled_runs);
    }
  } else if (const auto w1 = get(e, "ess_w1")) {
    ess = w1;
    draws = get(e, "rb_draws");
  }
  if (!ess || !draws) return std::nullopt;
  const double need = std::max(rules.min_weight_ess, rules.min_weight_ess_fraction * *draws);
  if (!(*ess >= need))
    return Doubt{"weight_ess", fmt::format("weight ESS {:.3g} of {:g} draws < {:.3g}{}", *ess,
                                           *draws, need, source)};
  const auto others = chains_failing(e, "log_z_chains_low_ess",
                                     "a weight ESS below the rule's: a few runs dominate them");
  if (others.empty()) return std::nullopt;
  return Doubt{"weight_ess", others};
}

// The Pareto k-hat of the independent draws whose mean the chain's log Z takes: AIS's run weights
// ("weight_tail", over n_runs; the run's pooled weights when pooled) and ST's regeneration tours
// ("tour_tail", over log_z_tours), with the limit for the chain's number of them.
struct TailOf {
  const char* reason;
  std::optional<double> k;
  double n;
  std::string what;
};

std::optional<TailOf> tail_of(const std::map<std::string, double>& e) {
  if (const auto n = get(e, "n_runs")) {
    if (const auto pooled_runs = get(e, "pooled_n_runs"))
      return TailOf{"weight_tail", get(e, "pooled_log_weight_pareto_k"), *n,
                    fmt::format("the run's pooled weights ({:g} runs)", *pooled_runs)};
    return TailOf{"weight_tail", get(e, "log_weight_pareto_k"), *n, "the run weights"};
  }
  if (const auto tours = get(e, "log_z_tours"))
    return TailOf{"tour_tail", get(e, "log_z_tour_pareto_k"), *tours,
                  "the regeneration tours' sums"};
  return std::nullopt;
}

std::optional<Doubt> tail_doubt(const std::map<std::string, double>& e) {
  const auto t = tail_of(e);
  if (!t) return std::nullopt;
  const double limit = pareto_k_threshold(t->n);
  if (t->k && std::isfinite(*t->k) && std::isfinite(limit) && *t->k > limit)
    return Doubt{t->reason, fmt::format("Pareto k-hat of {} {:.2f} > {:.2f}, the limit for {:g}",
                                        t->what, *t->k, limit, t->n)};
  const auto others = chains_failing(e, "log_z_chains_heavy_tail",
                                     "a Pareto k-hat above the limit for their draws: a heavy "
                                     "tail that the others have not drawn from");
  if (others.empty()) return std::nullopt;
  return Doubt{t->reason, others};
}

// PT's forward and reverse stepping stones against the SE of their difference (see the header).
std::optional<Doubt> direction_doubt(const std::map<std::string, double>& e, const std::string& key,
                                     const LogZTrustRules& rules) {
  const auto f = get(e, key + "_forward"), r = get(e, key + "_reverse");
  const auto fse = get(e, key + "_forward_se"), rse = get(e, key + "_reverse_se");
  if (!f || !r || !fse || !rse) return std::nullopt;
  const double gap = std::abs(*f - *r), se = std::hypot(*fse, *rse);
  if (!std::isfinite(gap) || !std::isfinite(se) || gap <= rules.max_direction_z * se)
    return std::nullopt;
  return Doubt{"directions_disagree",
               fmt::format("forward {:.4g} ± {:.2g} vs reverse {:.4g} ± {:.2g}: one direction never "
                           "saw mass the other level has",
                           *f, *fse, *r, *rse)};
}

std::vector<Doubt> doubts(const std::map<std::string, double>& e, const LogZTrustRules& rules) {
  std::vector<Doubt> out;
  const std::string key = log_z_key(e);
  if (key.empty()) return out;
  // PT and ST: index round trips against the batch-means batches (ST over regeneration tours
  // reports none: its tours are independent however few round trips they hold).
  if (const auto trips = get(e, "round_trips")) {
    const double batches = get(e, "log_z_batches").value_or(0.0);
    const double need = std::max(rules.min_round_trips, std::isfinite(batches) ? batches : 0.0);
    const auto per_replica = get(e, "round_trips_min_replica");
    if (!(*trips >= need))
      out.push_back({"round_trips", fmt::format("{:g} round trips < {:g}{}", *trips, need,
                                                need > rules.min_round_trips
                                                    ? " (the batch-means batches)"
                                                    : "")});
    else if (per_replica && *per_replica < 1.0)
      out.push_back({"round_trips", "a replica made no round trip: it never left the mode it "
                                    "started the sampling in"});
  }
  if (auto d = weight_ess_doubt(e, rules)) out.push_back(std::move(*d));
  if (auto d = tail_doubt(e)) out.push_back(std::move(*d));
  if (auto d = direction_doubt(e, key, rules)) out.push_back(std::move(*d));
  const auto se = get(e, key + "_se");
  if (!se || !std::isfinite(*se) || !(*se > 0.0))
    out.push_back({"no_se", "no finite standard error"});
  // The run's mode check (modes/mode_occupancy.hpp): a mode found but never visited, or chains
  // that disagree on the modes' shares. Every chain shares the reference, so no per-chain SE and
  // no agreement of the chains' log Z can see a mode they all miss.
  if (get(e, "modes_untrusted").value_or(0.0) == 1.0)
    out.push_back({"modes", "the run's mode check failed (see its warning)"});
  if (get(e, std::string(kUntrusted) + "_" + kDisagree).value_or(0.0) == 1.0) {
    const double ratio = get(e, "log_z_chains_spread_ratio").value_or(kNaN);
    out.push_back({kDisagree, fmt::format("the run's chains scatter {:.2g} times their SEs", ratio)});
  }
  return out;
}

// "log_z 117.2 ± 0.21" ("± (no SE)" without a finite SE).
std::string estimate_with_se(const std::map<std::string, double>& e) {
  const std::string key = log_z_key(e);
  const auto se = get(e, key + "_se");
  return fmt::format("{} {:.6g} ± {}", key, get(e, key).value_or(kNaN),
                     se && std::isfinite(*se) ? fmt::format("{:.3g}", *se) : "(no SE)");
}

}  // namespace

std::string log_z_key(const std::map<std::string, double>& e) {
  if (e.count("log_z")) return "log_z";
  if (e.count("log_z_ratio")) return "log_z_ratio";
  return "";
}

std::vector<std::string> log_z_doubts(const std::map<std::string, double>& e,
                                      const LogZTrustRules& rules) {
  std::vector<std::string> out;
  for (const auto& d : doubts(e, rules)) out.push_back(d.reason);
  return out;
}

std::string describe_log_z_doubts(const std::map<std::string, double>& e,
                                  const LogZTrustRules& rules) {
  std::string out;
  for (const auto& d : doubts(e, rules)) {
    if (!out.empty()) out += "; ";
    out += d.reason + " (" + d.detail + ")";
  }
  return out;
}

std::vector<std::string> annotate_log_z_trust(std::map<std::string, double>& e,
                                              const LogZTrustRules& rules) {
  if (log_z_key(e).empty()) return {};
  const auto reasons = log_z_doubts(e, rules);
  for (const auto& r : reasons) e[std::string(kUntrusted) + "_" + r] = 1.0;
  e[kUntrusted] = reasons.empty() ? 0.0 : 1.0;
  return reasons;
}

bool log_z_untrusted(const std::map<std::string, double>& estimates) {
  return get(estimates, kUntrusted).value_or(0.0) == 1.0;
}

bool log_z_unchecked(const std::map<std::string, double>& estimates) {
  return get(estimates, kUnchecked).value_or(0.0) == 1.0;
}

bool log_z_trusted(const std::map<std::string, double>& estimates) {
  return get(estimates, kUntrusted) == 0.0 && get(estimates, kUnchecked) == 0.0;
}

void clear_log_z_trust(std::map<std::string, double>& estimates) {
  for (auto it = estimates.begin(); it != estimates.end();) {
    const std::string& k = it->first;
    const bool ours = k.rfind(kUntrusted, 0) == 0 || k.rfind(kUnchecked, 0) == 0 ||
                      k.rfind("log_z_chains_", 0) == 0 || k.rfind("pooled_", 0) == 0;
    it = ours ? estimates.erase(it) : std::next(it);
  }
}

std::string describe_untrusted_log_z(const std::map<std::string, double>& estimates) {
  return estimate_with_se(estimates) + " cannot be trusted: " + describe_log_z_doubts(estimates);
}

std::string describe_unchecked_log_z(const std::map<std::string, double>& estimates) {
  const double n = get(estimates, "log_z_chains_compared").value_or(0.0);
  return fmt::format("{} is unchecked: the run has {:g} chain{} with a log Z and a standard error, "
                     "and the check that its chains agree within their SEs needs at least 3 (a "
                     "single chain cannot show that it missed a mode or that its SE is too small; "
                     "run 3 or more chains)",
                     estimate_with_se(estimates), n, n == 1.0 ? "" : "s");
}

}  // namespace pemc::estimators
