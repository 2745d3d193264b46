#include "estimators/log_z_run_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>

#include "estimators/pareto_tail.hpp"

namespace pemc::estimators {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double get(const std::map<std::string, double>& e, const std::string& key,
           double fallback = kNaN) {
  const auto it = e.find(key);
  return it == e.end() ? fallback : it->second;
}

bool is_ais(const std::map<std::string, double>& e) { return e.count("n_runs") > 0; }

AisChainWeights ais_weights(const RunChainLogZ& c) {
  const auto& e = *c.estimates;
  return {get(e, "n_runs", 0.0), get(e, "log_z"), get(e, "ess", 0.0), c.largest_log_weights};
}

bool has(const std::vector<std::string>& reasons, const char* r) {
  return std::find(reasons.begin(), reasons.end(), r) != reasons.end();
}

// The pooled estimate's own verdict: its weights over all N runs, every chain's own weights (a
// rare heavy part of the distribution shows in a few chains, whatever the pooled fit says) and the
// chains' agreement.
std::vector<std::string> pooled_doubts(const std::map<std::string, double>& e,
                                       const LogZTrustRules& rules) {
  std::vector<std::string> out;
  const double n = get(e, "pooled_n_runs"), ess = get(e, "pooled_ess");
  const double need = std::max(rules.min_weight_ess, rules.min_weight_ess_fraction * n);
  if (!(ess >= need))
    out.push_back(fmt::format("weight_ess (ESS {:.3g} < {:.3g})", ess, need));
  else if (get(e, "log_z_chains_low_ess", 0.0) > 0.0)
    out.push_back(fmt::format("weight_ess ({:g} chain(s) dominated by a few of their runs)",
                              get(e, "log_z_chains_low_ess")));
  const double k = get(e, "pooled_log_weight_pareto_k"), limit = pareto_k_threshold(n);
  if (std::isfinite(k) && std::isfinite(limit) && k > limit)
    out.push_back(fmt::format("weight_tail (Pareto k-hat {:.2f} > {:.2f}, the limit for {:g} "
                              "runs)", k, limit, n));
  else if (get(e, "log_z_chains_heavy_tail", 0.0) > 0.0)
    out.push_back(fmt::format("weight_tail ({:g} chain(s) drew runs from a heavy tail that the "
                              "pooled fit does not resolve)", get(e, "log_z_chains_heavy_tail")));
  if (get(e, "log_z_untrusted_chains_disagree", 0.0) == 1.0)
    out.push_back(fmt::format("chains_disagree (the chains scatter {:.2g} times their SEs)",
                              get(e, "log_z_chains_spread_ratio")));
  return out;
}

// Each chain's verdict on its own numbers alone, taken before any run-level key is written.
using OwnDoubts = std::vector<std::vector<std::string>>;

bool tail_failed(const std::vector<std::string>& own) {
  return has(own, "weight_tail") || has(own, "tour_tail");
}

// How many chains failed the tail rule on their own independent draws (AIS runs, ST tours) and
// (AIS) the ESS rule: written into every chain that has such draws, so that each rule fires for
// all of them or none.
void write_own_failures(const std::vector<RunChainLogZ>& chains, const OwnDoubts& own) {
  int heavy = 0, low_ess = 0, with_draws = 0, ais = 0;
  auto has_draws = [](const std::map<std::string, double>& e) {
    return is_ais(e) || e.count("log_z_tours") > 0;
  };
  for (std::size_t i = 0; i < chains.size(); ++i) {
    const auto& e = *chains[i].estimates;
    if (!has_draws(e)) continue;
    ++with_draws;
    ais += is_ais(e);
    heavy += tail_failed(own[i]);
    low_ess += is_ais(e) && has(own[i], "weight_ess");
  }
  if (with_draws < 2) return;
  for (const auto& c : chains) {
    auto& e = *c.estimates;
    if (!has_draws(e)) continue;
    e["log_z_chains_heavy_tail"] = heavy;
    if (is_ais(e) && ais >= 2) e["log_z_chains_low_ess"] = low_ess;
  }
}

// Pools an AIS run's chains and writes the pooled_* keys into each. The chains that look
// heavy-tailed on their own (what a per-chain rule would drop) are left out of a second pool: what
// the estimate would be without them.
std::optional<PooledAisWeights> pool_ais_run(const std::vector<RunChainLogZ>& chains,
                                             const OwnDoubts& own) {
  std::vector<AisChainWeights> all, light;
  for (std::size_t i = 0; i < chains.size(); ++i) {
    if (!is_ais(*chains[i].estimates)) continue;
    all.push_back(ais_weights(chains[i]));
    if (!tail_failed(own[i])) light.push_back(all.back());
  }
  const auto p = pool_ais_weights(all);
  if (p.n_chains < 2) return std::nullopt;
  const auto without_heavy = pool_ais_weights(light);
  const bool some_heavy = light.size() < all.size();
  for (const auto& c : chains) {
    auto& e = *c.estimates;
    if (!is_ais(e)) continue;
    e["pooled_n_chains"] = p.n_chains;
    e["pooled_n_runs"] = p.n_runs;
    e["pooled_log_z"] = p.log_z;
    e["pooled_log_z_se"] = p.log_z_se;
    e["pooled_ess"] = p.ess;
    if (std::isfinite(p.pareto_k)) e["pooled_log_weight_pareto_k"] = p.pareto_k;
    if (some_heavy && without_heavy.n_chains > 0) {
      e["pooled_heavy_tail_chains"] = static_cast<double>(all.size() - light.size());
      e["pooled_log_z_without_heavy_tail_chains"] = without_heavy.log_z;
    }
  }
  return p;
}

}  // namespace

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
  a.disagree = a.n >= rules.min_chains_compared && a.p_value < rules.disagreement_p_value;
  return a;
}

LogZRunCheck annotate_log_z_run(const std::vector<RunChainLogZ>& chains,
                                const LogZTrustRules& rules) {
  LogZRunCheck out;
  std::vector<RunChainLogZ> with_log_z;
  for (const auto& c : chains) {
    if (log_z_key(*c.estimates).empty()) continue;
    clear_log_z_trust(*c.estimates);
    with_log_z.push_back(c);
  }
  out.n_with_log_z = static_cast<int>(with_log_z.size());
  if (with_log_z.empty()) return out;
  OwnDoubts own;
  for (const auto& c : with_log_z) own.push_back(log_z_doubts(*c.estimates, rules));
  out.pooled = pool_ais_run(with_log_z, own);
  write_own_failures(with_log_z, own);
  std::vector<double> values, ses;
  for (const auto& c : with_log_z) {
    annotate_log_z_trust(*c.estimates, rules);
    const std::string key = log_z_key(*c.estimates);
    values.push_back(get(*c.estimates, key));
    ses.push_back(get(*c.estimates, key + "_se"));
  }
  out.agreement = log_z_agreement(values, ses, rules);
  out.unchecked = out.agreement.n < rules.min_chains_compared;
  for (const auto& c : with_log_z) {
    auto& e = *c.estimates;
    e["log_z_chains_compared"] = out.agreement.n;
    e["log_z_unchecked"] = out.unchecked ? 1.0 : 0.0;
    if (out.agreement.n >= 2) e["log_z_chains_spread_ratio"] = out.agreement.spread_ratio;
    if (out.agreement.disagree) {
      e["log_z_untrusted_chains_disagree"] = 1.0;
      e["log_z_untrusted"] = 1.0;
    }
    if (out.pooled && is_ais(e)) e["pooled_log_z_untrusted"] = pooled_doubts(e, rules).empty() ? 0 : 1;
  }
  return out;
}

LogZRunCheck annotate_log_z_run(const std::vector<std::map<std::string, double>*>& chains,
                                const LogZTrustRules& rules) {
  std::vector<RunChainLogZ> c;
  for (auto* e : chains) c.push_back({e, {}});
  return annotate_log_z_run(c, rules);
}

std::string describe_pooled_log_z(const std::map<std::string, double>& e,
                                  const LogZTrustRules& rules) {
  if (!e.count("pooled_log_z")) return "";
  std::string out = fmt::format(
      "pooled over {:g} chains' {:g} runs: log_z {:.6g} ± {:.3g} (Pareto k-hat {}, ESS {:.3g})",
      get(e, "pooled_n_chains"), get(e, "pooled_n_runs"), get(e, "pooled_log_z"),
      get(e, "pooled_log_z_se"),
      e.count("pooled_log_weight_pareto_k")
          ? fmt::format("{:.2f}", get(e, "pooled_log_weight_pareto_k"))
          : std::string("undefined"),
      get(e, "pooled_ess"));
  if (e.count("pooled_log_z_without_heavy_tail_chains")) {
    const double pull = get(e, "pooled_log_z") - get(e, "pooled_log_z_without_heavy_tail_chains");
    out += fmt::format("; the {:g} chain(s) whose own weights' Pareto k-hat is above the limit for "
                       "their runs pull it by {:+.3g} ({:+.2g} SE): without them it would be "
                       "{:.6g}",
                       get(e, "pooled_heavy_tail_chains"), pull, pull / get(e, "pooled_log_z_se"),
                       get(e, "pooled_log_z_without_heavy_tail_chains"));
  }
  const auto doubts = pooled_doubts(e, rules);
  if (!doubts.empty()) {
    out += "; it cannot be trusted: ";
    for (std::size_t i = 0; i < doubts.size(); ++i) out += (i ? "; " : "") + doubts[i];
  }
  return out;
}

}  // namespace pemc::estimators
