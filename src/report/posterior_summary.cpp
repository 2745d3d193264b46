#include "report/posterior_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/error.hpp"
#include "report/quantity_selection.hpp"
#include "report/weighted_quantiles.hpp"

namespace pemc::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

QuantityEstimate from_diagnostics(const ParameterDiagnostics& p) {
  return {p.name, p.mean, p.mcse_mean, p.sd, p.q5, p.q50, p.q95, p.ess_bulk, p.ess_tail, p.rhat};
}

// A run's weighted mean and second moment over its chains, each chain's in proportion to its
// draws (summary.hpp), by quantity name.
struct WeightedMoments {
  std::map<std::string, double> mean, second_moment;
};

WeightedMoments pooled_moments(const std::vector<const ChainRunSummary*>& chains) {
  WeightedMoments out;
  double total = 0.0;
  for (const auto* c : chains) total += static_cast<double>(c->n_draws);
  if (total <= 0.0) return out;
  for (const auto* c : chains) {
    const double share = static_cast<double>(c->n_draws) / total;
    for (std::size_t i = 0; i < c->names.size() && static_cast<Eigen::Index>(i) < c->mean.size(); ++i) {
      out.mean[c->names[i]] += share * c->mean[static_cast<Eigen::Index>(i)];
      out.second_moment[c->names[i]] += share * c->second_moment[static_cast<Eigen::Index>(i)];
    }
  }
  return out;
}

// A run's weighted samples pooled over its chains: each chain's weights normalised to sum to its
// share of the run's draws (the rule of pooled_moments), by quantity name. Empty when some chain
// kept no samples or lacks a quantity.
struct PooledSamples {
  std::map<std::string, std::vector<double>> values;
  std::vector<double> weights;
  std::int64_t stride = 1;  // the largest thinning of a chain's samples
};

PooledSamples pooled_samples(const std::vector<const ChainRunSummary*>& chains) {
  PooledSamples out;
  double total = 0.0;
  for (const auto* c : chains) {
    if (c->sample_log_weights.empty() || c->sample_values.size() != c->names.size()) return {};
    total += static_cast<double>(c->n_draws);
  }
  for (const auto* c : chains) {
    const auto& lw = c->sample_log_weights;
    const double top = *std::max_element(lw.begin(), lw.end());
    if (!std::isfinite(top)) return {};  // every sample weightless
    double sum = 0.0;
    for (double l : lw) sum += std::exp(l - top);
    const double scale = static_cast<double>(c->n_draws) / total / sum;
    for (double l : lw) out.weights.push_back(std::exp(l - top) * scale);
    for (std::size_t i = 0; i < c->names.size(); ++i) {
      auto& v = out.values[c->names[i]];
      v.insert(v.end(), c->sample_values[i].begin(), c->sample_values[i].end());
    }
    out.stride = std::max(out.stride, c->sample_stride);
  }
  for (const auto& [name, v] : out.values)
    if (v.size() != out.weights.size()) return {};  // a quantity some chain does not have
  return out;
}

// Replaces the unweighted numbers of a weighted run's quantity by the weighted ones, or marks them
// unavailable (posterior_summary.hpp says which).
void weigh(QuantityEstimate& q, const WeightedMoments& w, const PooledSamples& samples,
           bool per_draw_means) {
  const auto m = w.mean.find(q.name);
  if (m == w.mean.end()) {
    q.mean = q.sd = kNaN;
  } else {
    q.mean = m->second;
    q.sd = std::sqrt(std::max(0.0, w.second_moment.at(q.name) - m->second * m->second));
  }
  if (!per_draw_means) q.mcse_mean = kNaN;
  q.q5 = q.q50 = q.q95 = kNaN;
  const auto v = samples.values.find(q.name);
  if (v == samples.values.end()) return;
  try {
    q.q5 = weighted_quantile(v->second, samples.weights, 0.05);
    q.q50 = weighted_quantile(v->second, samples.weights, 0.5);
    q.q95 = weighted_quantile(v->second, samples.weights, 0.95);
  } catch (const NumericalError&) {
    q.q5 = q.q50 = q.q95 = kNaN;  // a non-finite sample: undefined, as for unweighted draws
  }
}

std::string weighted_note(bool per_draw_means, bool quantiles) {
  const std::string q = quantiles ? "quantiles are weighted" : "weighted quantiles are not available";
  if (per_draw_means)
    return "weighted samples (pseudo-extended): mean, sd and " + q + " (weights normalised "
           "within each draw); MCSE, ESS and R-hat are those of the per-draw weighted means (whose "
           "average is the estimate)";
  return "weighted samples: mean, sd and " + q + " (each chain self-normalised, pooled over the "
         "chains in proportion to their draws); ESS and R-hat are of the unweighted states (how "
         "well the sampler mixes, not the precision of the weighted estimates); MCSE is not "
         "available";
}

RunPosterior posterior_of(const RunDiagnostics& rd, const std::vector<const ChainRunSummary*>& chains,
                          const std::vector<std::string>& vars) {
  RunPosterior r;
  r.run_id = rd.run_id;
  r.sampler = rd.sampler;
  r.target = rd.target;
  r.n_chains = rd.n_chains;
  r.warmup = rd.warmup;
  r.warnings = rd.warnings;
  // summarize prints the model's messages beside the chain rows (summary.hpp): not again here.
  for (const auto& n : rd.notes)
    if (n.find(": the model's messages: ") == std::string::npos) r.notes.push_back(n);
  r.lp_note = rd.lp_note;
  r.min_draws = std::numeric_limits<std::int64_t>::max();
  for (const auto& c : rd.chains) {
    r.min_draws = std::min(r.min_draws, c.n_draws);
    r.max_draws = std::max(r.max_draws, c.n_draws);
    r.weighted = r.weighted || c.weighted;
    r.has_divergences = r.has_divergences || c.records_divergences;
    r.has_tree_depth = r.has_tree_depth || c.n_max_tree_depth.has_value();
    r.has_ebfmi = r.has_ebfmi || !std::isnan(c.ebfmi);
    r.has_step_size = r.has_step_size || c.records_step_size;
    auto& copy = r.chains.emplace_back(c);
    copy.parameters.clear();
  }
  if (rd.chains.empty()) r.min_draws = 0;
  for (const auto* c : chains) {
    r.wall_seconds = std::max(r.wall_seconds, c->wall_seconds);
    r.cpu_seconds += c->cpu_seconds;
  }

  // The quantities in their order, lp__ first: what --vars selects from.
  std::vector<QuantityEstimate> all;
  if (rd.lp && !r.weighted) all.push_back(from_diagnostics(*rd.lp));
  if (rd.lp && r.weighted) {
    r.lp_note = "no lp__: the draws are weighted and summarize computes no weighted lp__";
  }
  for (const auto& p : rd.parameters)
    if (p.name != "potential") all.push_back(from_diagnostics(p));
  if (r.weighted) {
    const bool per_draw_means = rd.quantity.find("pseudo_sample") != std::string::npos;
    const auto moments = pooled_moments(chains);
    const auto samples = pooled_samples(chains);
    for (auto& q : all) weigh(q, moments, samples, per_draw_means);
    r.estimates_note = weighted_note(per_draw_means, !samples.weights.empty());
    if (samples.stride > 1)
      r.notes.push_back(fmt::format(
          "weighted quantiles from the samples of one draw in {} (at most {} values kept per chain)",
          samples.stride, WeightedSampleStore::kMaxValues));
  }
  if (vars.empty()) {
    r.quantities = std::move(all);
    return r;
  }
  const std::string context = fmt::format("run '{}': ", rd.run_id);
  if (std::find(vars.begin(), vars.end(), "lp__") != vars.end() &&
      (all.empty() || all.front().name != "lp__"))
    throw ConfigError(context + "--vars lp__: " + r.lp_note);
  std::vector<std::string> names;
  for (const auto& q : all) names.push_back(q.name);
  for (std::size_t i : select_quantities(names, vars, context)) r.quantities.push_back(all[i]);
  return r;
}

}  // namespace

std::vector<RunPosterior> posterior_summaries(const DiagnosticsReport& diagnostics,
                                              const std::vector<FileSummary>& summaries,
                                              const std::vector<std::string>& vars) {
  std::map<std::string, std::vector<const ChainRunSummary*>> by_run;
  for (const auto& f : summaries)
    for (const auto& c : f.runs) by_run[c.run_id].push_back(&c);
  std::vector<RunPosterior> out;
  for (const auto& rd : diagnostics.runs) out.push_back(posterior_of(rd, by_run[rd.run_id], vars));
  return out;
}

}  // namespace pemc::report
