#include "estimators/log_z_trust.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>
#include <optional>

#include "estimators/pareto_tail.hpp"

namespace pemc::estimators {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const char* kUntrusted = "log_z_untrusted";
constexpr const char* kDisagree = "chains_disagree";

std::optional<double> get(const std::map<std::string, double>& e, const std::string& key) {
  const auto it = e.find(key);
  if (it == e.end()) return std::nullopt;
  return it->second;
}

struct Doubt {
  std::string reason;
  std::string detail;
};

std::vector<Doubt> doubts(const std::map<std::string, double>& e, const LogZTrustRules& rules) {
  std::vector<Doubt> out;
  const std::string key = log_z_key(e);
  if (key.empty()) return out;
  // PT and ST: index round trips against the batch-means batches.
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
  // AIS (ess over n_runs) and CT (ess_w1 over rb_draws).
  std::optional<double> ess, draws;
  if (const auto n = get(e, "n_runs")) {
    ess = get(e, "ess");
    draws = n;
  } else if (const auto w1 = get(e, "ess_w1")) {
    ess = w1;
    draws = get(e, "rb_draws");
  }
  if (ess && draws) {
    const double need = std::max(rules.min_weight_ess, rules.min_weight_ess_fraction * *draws);
    if (!(*ess >= need))
      out.push_back({"weight_ess", fmt::format("weight ESS {:.3g} of {:g} draws < {:.3g}", *ess,
                                               *draws, need)});
  }
  // The tail of the terms whose mean the estimate takes: AIS's run weights (over n_runs), PT's
  // stepping-stone terms (the worst channel, over its rounds).
  std::optional<double> k, n_terms;
  if (const auto ka = get(e, "log_weight_pareto_k")) {
    k = ka;
    n_terms = draws;
  } else if (const auto kp = get(e, "log_z_pareto_k")) {
    k = kp;
    n_terms = get(e, "rounds");
  }
  if (k && std::isfinite(*k) && n_terms) {
    const double limit = pareto_k_threshold(*n_terms);
    if (std::isfinite(limit) && *k > limit)
      out.push_back({"weight_tail", fmt::format("Pareto k-hat of the weights {:.2f} > {:.2f}", *k,
                                                limit)});
  }
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

LogZAgreement log_z_agreement(const std::vector<double>& log_z, const std::vector<double>& se,
                              const LogZTrustRules& rules) {
  LogZAgreement a;
  a.spread_ratio = kNaN;
  double sum_w = 0.0, sum_wl = 0.0;
  const std::size_t n = std::min(log_z.size(), se.size());
  auto usable = [&](std::size_t i) {
    return std::isfinite(log_z[i]) && std::isfinite(se[i]) && se[i] > 0.0;
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (!usable(i)) continue;
    const double w = 1.0 / (se[i] * se[i]);
    sum_w += w;
    sum_wl += w * log_z[i];
    ++a.n;
  }
  if (a.n == 0) return a;
  a.weighted_mean = sum_wl / sum_w;
  if (a.n < 2) return a;
  for (std::size_t i = 0; i < n; ++i) {
    if (!usable(i)) continue;
    const double z = (log_z[i] - a.weighted_mean) / se[i];
    a.chi2 += z * z;
  }
  const double dof = a.n - 1;
  a.p_value = boost::math::gamma_q(0.5 * dof, 0.5 * a.chi2);
  a.spread_ratio = std::sqrt(a.chi2 / dof);
  a.disagree = a.n >= 3 && a.p_value < rules.disagreement_p_value;
  return a;
}

LogZAgreement annotate_log_z_agreement(const std::vector<std::map<std::string, double>*>& chains,
                                       const LogZTrustRules& rules) {
  std::vector<double> values, ses;
  std::vector<std::map<std::string, double>*> with_log_z;
  for (auto* e : chains) {
    const std::string key = log_z_key(*e);
    if (key.empty()) continue;
    with_log_z.push_back(e);
    values.push_back(e->at(key));
    ses.push_back(get(*e, key + "_se").value_or(kNaN));
  }
  const auto a = log_z_agreement(values, ses, rules);
  if (a.n < 2) return a;
  for (auto* e : with_log_z) {
    (*e)["log_z_chains_spread_ratio"] = a.spread_ratio;
    if (a.disagree) {
      (*e)[std::string(kUntrusted) + "_" + kDisagree] = 1.0;
      (*e)[kUntrusted] = 1.0;
    }
  }
  return a;
}

bool log_z_untrusted(const std::map<std::string, double>& estimates) {
  const auto it = estimates.find("log_z_untrusted");
  return it != estimates.end() && it->second == 1.0;
}

std::string describe_untrusted_log_z(const std::map<std::string, double>& estimates) {
  const std::string key = log_z_key(estimates);
  const auto value = estimates.find(key);
  const auto se = estimates.find(key + "_se");
  return fmt::format("{} {:.6g} ± {} cannot be trusted: {}", key,
                     value != estimates.end() ? value->second : kNaN,
                     se != estimates.end() && std::isfinite(se->second)
                         ? fmt::format("{:.3g}", se->second)
                         : std::string("(no SE)"),
                     describe_log_z_doubts(estimates));
}

}  // namespace pemc::estimators
