#include "report/diagnostics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <span>

#include "core/error.hpp"
#include "estimators/ess.hpp"
#include "estimators/rhat.hpp"
#include "estimators/sampler_warnings.hpp"
#include "config/sampler_columns.hpp"
#include "report/diagnostics_log_z.hpp"
#include "report/log_z_headline.hpp"
#include "report/quantities.hpp"
#include "report/quantity_selection.hpp"

namespace pemc::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using Spans = std::vector<std::span<const double>>;

// The draws of parameter p (coordinate p, or the potential for p == K) of one chain, the first n.
std::span<const double> series(const ChainTrace& c, std::size_t p, std::size_t n) {
  const auto& v = p < c.coords.size() ? c.coords[p] : c.potential;
  return std::span<const double>(v.data(), std::min(n, v.size()));
}

std::size_t kept(const ChainTrace& c) {
  return c.coords.empty() ? c.potential.size() : c.coords.front().size();
}

// Mean, sd, R-hat and ESS of one parameter over the given chains (diagnose_quantity without the
// MCSE and quantiles: a chain's own entries). Without with_tail the tail ESS is NaN (not computed).
ParameterDiagnostics rank_diagnosed(const std::string& name, const Spans& chains,
                                    std::vector<std::string>* notes, bool with_tail = true) {
  ParameterDiagnostics p;
  p.name = name;
  double n = 0, sum = 0, sum2 = 0;
  for (const auto& c : chains)
    for (double x : c) {
      n += 1;
      sum += x;
      sum2 += x * x;
    }
  p.mean = n > 0 ? sum / n : kNaN;
  p.sd = n > 1 ? std::sqrt(std::max(0.0, (sum2 - sum * sum / n) / (n - 1))) : kNaN;
  try {
    if (with_tail) {
      const auto r = estimators::rank_diagnostics(chains);
      p.rhat = r.rhat.rhat;
      p.rhat_bulk = r.rhat.rhat_bulk;
      p.rhat_folded = r.rhat.rhat_folded;
      p.ess_bulk = r.bulk.ess;
      p.ess_tail = r.tail.ess;
    } else {
      const auto r = estimators::rhat_and_bulk_ess(chains);
      p.rhat = r.rhat.rhat;
      p.rhat_bulk = r.rhat.rhat_bulk;
      p.rhat_folded = r.rhat.rhat_folded;
      p.ess_bulk = r.bulk.ess;
      p.ess_tail = kNaN;
    }
  } catch (const NumericalError& e) {
    p.rhat = p.rhat_bulk = p.rhat_folded = p.ess_bulk = p.ess_tail = kNaN;
    if (notes) notes->push_back(name + ": diagnostics undefined (" + e.what() + ")");
    return p;
  }
  if (notes && std::isnan(p.rhat)) {
    bool constant = true, first = true;
    double value = 0.0;
    for (const auto& c : chains)
      for (double x : c) {
        if (first) value = x;
        first = false;
        constant = constant && x == value;
      }
    constant = constant && !first && n >= 4;
    notes->push_back(name + ": R-hat undefined (" +
                     (constant ? std::string("every draw has the same value")
                               : std::string("fewer than 4 draws per chain")) + ")");
  }
  if (notes && std::isinf(p.rhat))
    notes->push_back(name + ": R-hat infinite (chains constant at different values)");
  return p;
}

// max ignoring NaN, but +inf wins; NaN when every value is NaN.
double max_defined(const std::vector<double>& v) {
  double m = kNaN;
  for (double x : v) m = std::fmax(m, x);
  return m;
}
double min_defined(const std::vector<double>& v) {
  double m = kNaN;
  for (double x : v) m = std::fmin(m, x);
  return m;
}

nlohmann::ordered_json number(double x) {
  return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr);
}

std::string fmt_num(double x, const char* spec = "{:.4g}") {
  if (std::isnan(x)) return "—";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format(fmt::runtime(spec), x);
}

}  // namespace

ParameterDiagnostics diagnose_quantity(const std::string& name, const Spans& chains,
                                       std::vector<std::string>* notes) {
  ParameterDiagnostics p = rank_diagnosed(name, chains, notes);
  // Non-finite draws (a NaN or infinite mean): the MCSE and quantiles are undefined too.
  if (!std::isfinite(p.mean)) {
    p.sd = p.mcse_mean = p.q5 = p.q50 = p.q95 = kNaN;
    return p;
  }
  p.mcse_mean = estimators::mcse_mean(chains);
  estimators::Chains pooled;
  for (const auto& c : chains) pooled.emplace_back(c.begin(), c.end());
  p.q5 = estimators::pooled_quantile(pooled, 0.05);
  p.q50 = estimators::pooled_quantile(pooled, 0.5);
  p.q95 = estimators::pooled_quantile(pooled, 0.95);
  return p;
}

namespace {

// diagnose_quantity, or in the R-hat and bulk ESS scope only those (and the mean and sd).
ParameterDiagnostics diagnose_in_scope(const std::string& name, const Spans& chains,
                                       std::vector<std::string>* notes, DiagnosisScope scope) {
  if (scope == DiagnosisScope::kFull) return diagnose_quantity(name, chains, notes);
  ParameterDiagnostics p = rank_diagnosed(name, chains, notes, /*with_tail=*/false);
  p.mcse_mean = p.q5 = p.q50 = p.q95 = kNaN;
  return p;
}

struct RunMember {
  const FileTraces* file;
  const ChainTrace* chain;
};

// What a run's chains have in common: the quantities every chain holds, the draws every chain kept.
struct RunShape {
  std::size_t k = std::numeric_limits<std::size_t>::max();  // state or output coordinates
  std::size_t n_used = std::numeric_limits<std::size_t>::max();
  std::size_t n_max = 0;
  bool with_potential = false, pseudo = false;
  std::int64_t stride_min = std::numeric_limits<std::int64_t>::max();
};

// Surveys the chains (adding the run's divergences, largest thinning and duplicate-chain notes to
// rd) and notes what the run-level diagnostics had to give up.
RunShape survey_chains(const std::vector<RunMember>& members, const TraceOptions& options,
                       RunDiagnostics& rd) {
  RunShape sh;
  sh.with_potential = options.with_potential;
  std::set<std::pair<std::uint64_t, int>> identities;
  for (const auto& m : members) {
    sh.k = std::min(sh.k, m.chain->coords.size());
    sh.n_used = std::min(sh.n_used, kept(*m.chain));
    sh.n_max = std::max(sh.n_max, kept(*m.chain));
    sh.with_potential = sh.with_potential && !m.chain->potential.empty();
    sh.pseudo = sh.pseudo || m.chain->pseudo_samples;
    sh.stride_min = std::min(sh.stride_min, m.chain->stride);
    rd.thinned_by = std::max(rd.thinned_by, m.chain->stride);
    rd.n_divergent += m.chain->n_divergent;
    if (!identities.insert({m.chain->seed, m.chain->chain_id}).second)
      rd.notes.push_back(fmt::format(
          "chain {} (seed {}) appears in more than one file: identical chains make R-hat and "
          "ESS look better than they are",
          m.chain->chain_id, m.chain->seed));
  }
  const bool outputs = members.front().chain->named_outputs;
  rd.quantity = std::string(outputs ? "outputs" : "state");
  if (sh.pseudo)
    rd.quantity = outputs ? "outputs_pseudo_sample_weighted_mean" : "pseudo_sample_weighted_mean";
  rd.n_draws_used = static_cast<std::int64_t>(sh.n_used);
  if (rd.thinned_by > 1)
    rd.notes.push_back(fmt::format(
        "draws thinned by up to {} to keep at most {} per chain in memory: ESS is that of the "
        "thinned draws (a lower bound for the full chain when it is positively correlated)",
        rd.thinned_by, options.max_draws_per_chain));
  if (sh.stride_min != rd.thinned_by)
    rd.notes.push_back("chains were thinned by different strides (different lengths); the "
                       "run-level R-hat and ESS mix them");
  if (sh.n_max != sh.n_used)
    rd.notes.push_back(fmt::format("chains have different lengths: run-level diagnostics use the "
                                   "first {} kept draws of each",
                                   sh.n_used));
  return sh;
}

// The quantity at position p of the diagnosed names: a coordinate, or (past k) the potential.
std::size_t quantity_index(std::size_t p, std::size_t k) {
  return p < k ? p : std::numeric_limits<std::size_t>::max();
}

ChainDiagnostics diagnose_chain(const ChainTrace& c, const RunMeta& meta,
                                const std::vector<std::string>& names, std::size_t k,
                                std::vector<std::string>& run_notes, DiagnosisScope scope) {
  ChainDiagnostics cd;
  cd.file = c.file;
  cd.chain_id = c.chain_id;
  cd.seed = c.seed;
  cd.n_draws = c.n_draws;
  cd.n_draws_used = static_cast<std::int64_t>(kept(c));
  cd.thinned_by = c.stride;
  cd.status = c.status;
  const double n = static_cast<double>(std::max<std::int64_t>(c.n_draws, 1));
  cd.mean_accept_stat = c.sum_accept / n;
  cd.n_divergent = c.n_divergent;
  cd.mean_tree_depth = c.sum_tree_depth / n;
  cd.max_tree_depth = c.max_tree_depth;
  cd.mean_n_leapfrog = c.sum_leapfrog / n;
  cd.step_size = c.last_step_size;
  if (meta.max_tree_depth) {
    cd.n_max_tree_depth = c.n_max_tree_depth;
    cd.configured_max_tree_depth = *meta.max_tree_depth;
  }
  const auto& sampler = meta.config.sampler();
  cd.ebfmi = config::records_model_energy(sampler) && c.energy_finite ? c.energy.value() : kNaN;
  cd.records_divergences = config::records_stat(sampler, config::DrawStat::kDivergent);
  cd.records_step_size = config::records_stat(sampler, config::DrawStat::kStepSize);
  cd.weighted = c.weighted;
  cd.kish_ess = c.moments.kish_ess();
  cd.n_gradient_evals = c.n_gradient_evals;
  cd.wall_seconds = c.wall_seconds;
  cd.estimates = c.estimates;
  cd.warnings = c.warnings;
  cd.model_messages = c.model_messages;
  cd.largest_log_weights = c.largest_log_weights;
  for (std::size_t p = 0; scope == DiagnosisScope::kFull && p < names.size(); ++p)
    cd.parameters.push_back(rank_diagnosed(
        names[p], Spans{series(c, quantity_index(p, k), kept(c))}, nullptr));
  if (c.status != "ok")
    run_notes.push_back(fmt::format("chain {} ({}): status {}", c.chain_id, c.file, c.status));
  if (!c.model_messages.empty())
    run_notes.push_back(fmt::format("chain {}: the model's messages: {}", c.chain_id,
                                    c.model_messages));
  if (c.weighted && cd.kish_ess < 0.01 * static_cast<double>(c.moments.count()))
    run_notes.push_back(fmt::format(
        "chain {}: Kish ESS {:.4g} of {} weighted samples — the weighted estimates rest on "
        "very few draws",
        c.chain_id, cd.kish_ess, c.moments.count()));
  return cd;
}

// lp__ = -potential (minus a Stan model's lp offset: Stan's lp__) where the draws' potential is the
// model's (config/sampler_columns.hpp), or why not.
void diagnose_lp(const std::vector<RunMember>& members, const RunMeta& meta, const RunShape& sh,
                 RunDiagnostics& rd, DiagnosisScope scope) {
  if (config::sampler_columns(meta.config.sampler()).lp != config::LpSource::kDrawPotential) {
    rd.lp_note = fmt::format(
        "no lp__: the {} draws record the sampler's extended density, and the model's log "
        "density at each sample needs its target evaluated there (pemc-report export --format "
        "cmdstan --config CONFIG writes it)",
        meta.sampler);
    return;
  }
  if (!sh.with_potential) {
    rd.lp_note = "no lp__: the potential was not read (--no-potential)";
    return;
  }
  std::vector<std::vector<double>> negated;
  for (const auto& m : members) {
    const auto pot = series(*m.chain, std::numeric_limits<std::size_t>::max(), sh.n_used);
    auto& lp = negated.emplace_back(pot.size());
    std::transform(pot.begin(), pot.end(), lp.begin(),
                   [&meta](double u) { return lp_of_potential(meta, u); });
  }
  rd.lp = diagnose_in_scope("lp__", Spans(negated.begin(), negated.end()), &rd.notes, scope);
  if (const auto note = lp_offset_note(meta, rd.run_id); !note.empty()) rd.notes.push_back(note);
}

// What estimators/sampler_warnings.hpp judges: every chain, and judged_quantities.
estimators::RunHealth run_health(const RunDiagnostics& rd) {
  estimators::RunHealth h;
  for (const auto& c : rd.chains) {
    estimators::ChainHealth ch;
    ch.chain_id = c.chain_id;
    ch.n_draws = c.n_draws;
    if (c.records_divergences) ch.n_divergent = c.n_divergent;
    ch.n_max_tree_depth = c.n_max_tree_depth;
    ch.max_tree_depth = c.configured_max_tree_depth;
    ch.ebfmi = c.ebfmi;
    ch.warnings = c.warnings;
    h.chains.push_back(std::move(ch));
  }
  h.quantities = judged_quantities(rd);
  return h;
}

RunDiagnostics diagnose_run(const std::string& run_id, const std::vector<RunMember>& members,
                            const TraceOptions& options, DiagnosisScope scope) {
  RunDiagnostics rd;
  rd.run_id = run_id;
  const RunMeta meta = run_meta(members.front().file->header, run_id);
  rd.sampler = meta.sampler;
  rd.target = meta.target;
  rd.n_chains = static_cast<int>(members.size());
  const RunShape sh = survey_chains(members, options, rd);

  // Where the file says which named outputs are generated quantities (only the first sh.k
  // quantities are diagnosed).
  if (meta.n_parameter_outputs && !meta.output_names.empty())
    rd.n_model_parameters =
        std::min(sh.k, static_cast<std::size_t>(std::max(*meta.n_parameter_outputs, 0)));
  std::vector<std::string> names;
  const auto& first_names = members.front().chain->names;
  for (std::size_t i = 0; i < sh.k; ++i)
    names.push_back(i < first_names.size() ? first_names[i] : coordinate_name(static_cast<int>(i)));
  if (sh.with_potential) names.push_back("potential");
  for (std::size_t p = 0; p < names.size(); ++p) {
    Spans spans;
    for (const auto& m : members) spans.push_back(series(*m.chain, quantity_index(p, sh.k), sh.n_used));
    rd.parameters.push_back(diagnose_in_scope(names[p], spans, &rd.notes, scope));
  }
  std::vector<double> rhats, bulk, tail;
  for (const auto& p : rd.parameters) {
    rhats.push_back(p.rhat);
    bulk.push_back(p.ess_bulk);
    tail.push_back(p.ess_tail);
  }
  rd.max_rhat = max_defined(rhats);
  rd.min_ess_bulk = min_defined(bulk);
  rd.min_ess_tail = min_defined(tail);

  rd.warmup = meta.config.warmup();
  diagnose_lp(members, meta, sh, rd, scope);
  for (const auto& m : members)
    rd.chains.push_back(diagnose_chain(*m.chain, meta, names, sh.k, rd.notes, scope));
  std::sort(rd.chains.begin(), rd.chains.end(), [](const auto& a, const auto& b) {
    return std::tie(a.chain_id, a.file) < std::tie(b.chain_id, b.file);
  });
  rd.warnings = estimators::sampler_warnings(run_health(rd));
  rd.log_z_check = check_log_z_trust(rd);
  std::vector<std::pair<int, const v1::ModeOccupancy*>> occupancies;
  for (const auto& m : members)
    if (m.chain->mode_occupancy && m.chain->status == "ok")
      occupancies.emplace_back(m.chain->chain_id, &*m.chain->mode_occupancy);
  std::sort(occupancies.begin(), occupancies.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  rd.modes = diagnose_modes(meta.mode_search, occupancies);
  return rd;
}

}  // namespace

namespace {

nlohmann::ordered_json modes_json(const ModeDiagnostics& m) {
  using J = nlohmann::ordered_json;
  J o;
  o["n_found"] = m.search.modes_size();
  o["n_starts"] = m.search.n_starts();
  o["complete"] = m.search.complete();
  o["unseen_probability"] = number(m.search.unseen_probability());
  o["untrusted"] = m.check.untrusted();
  o["max_rhat"] = number(m.check.max_rhat);
  o["chain_ids"] = m.chain_ids;
  o["modes"] = J::array();
  for (int k = 0; k <= m.check.n_modes; ++k) {
    J e;
    const bool outside = k == m.check.n_modes;
    e["index"] = outside ? J("outside") : J(k + 1);
    if (!outside) {
      const auto& mode = m.search.modes(k);
      e["log_density"] = number(mode.log_density());
      e["log_mass"] = number(mode.log_mass());
      e["laplace_share"] = number(m.laplace_share[static_cast<std::size_t>(k)]);
      e["outputs"] = std::vector<double>(mode.outputs().begin(), mode.outputs().end());
    }
    e["share"] = number(m.check.pooled_share[static_cast<std::size_t>(k)]);
    e["rhat"] = number(m.check.rhat[static_cast<std::size_t>(k)]);
    std::vector<double> shares;
    for (const auto& c : m.check.chain_share) shares.push_back(c[static_cast<std::size_t>(k)]);
    e["chain_shares"] = shares;
    o["modes"].push_back(std::move(e));
  }
  o["doubts"] = m.doubts;
  return o;
}

}  // namespace

std::vector<RunDiagnostics> diagnose_traces(const std::vector<FileTraces>& files,
                                            const TraceOptions& options, DiagnosisScope scope) {
  std::map<std::string, std::vector<RunMember>> by_run;
  for (const auto& f : files)
    for (const auto& c : f.chains) by_run[c.run_id].push_back({&f, &c});
  std::vector<RunDiagnostics> out;
  for (const auto& [run_id, members] : by_run)
    out.push_back(diagnose_run(run_id, members, options, scope));
  return out;
}

std::vector<estimators::QuantityHealth> judged_quantities(const RunDiagnostics& rd) {
  std::vector<estimators::QuantityHealth> out;
  if (rd.lp) out.push_back({rd.lp->name, rd.lp->rhat, rd.lp->ess_bulk});
  for (const auto& p : rd.parameters)
    if (p.name != "potential") out.push_back({p.name, p.rhat, p.ess_bulk});
  return out;
}

DiagnosticsReport diagnose_files(const std::vector<std::filesystem::path>& paths,
                                 const TraceOptions& options) {
  std::vector<FileTraces> traces;
  DiagnosticsReport report;
  for (const auto& p : paths) {
    traces.push_back(read_traces(p, options));
    const auto& t = traces.back();
    report.files.push_back({t.path, t.n_records, t.has_footer && !t.problem, t.problem});
  }
  report.runs = diagnose_traces(traces, options);
  return report;
}

std::string diagnostics_to_json(const DiagnosticsReport& report) {
  using J = nlohmann::ordered_json;
  auto params = [](const std::vector<ParameterDiagnostics>& ps, bool full) {
    J a = J::array();
    for (const auto& p : ps) {
      J o;
      o["name"] = p.name;
      if (full) {
        o["mean"] = number(p.mean);
        o["mcse_mean"] = number(p.mcse_mean);
        o["sd"] = number(p.sd);
        o["q5"] = number(p.q5);
        o["q50"] = number(p.q50);
        o["q95"] = number(p.q95);
      }
      o["rhat"] = number(p.rhat);
      if (full) {
        o["rhat_bulk"] = number(p.rhat_bulk);
        o["rhat_folded"] = number(p.rhat_folded);
      }
      o["ess_bulk"] = number(p.ess_bulk);
      o["ess_tail"] = number(p.ess_tail);
      a.push_back(std::move(o));
    }
    return a;
  };
  J j;
  j["runs"] = J::array();
  for (const auto& r : report.runs) {
    J o;
    o["run_id"] = r.run_id;
    o["sampler"] = r.sampler;
    o["target"] = r.target;
    o["quantity"] = r.quantity;
    o["n_chains"] = r.n_chains;
    o["n_draws_used"] = r.n_draws_used;
    o["thinned_by"] = r.thinned_by;
    o["max_rhat"] = number(r.max_rhat);
    o["min_ess_bulk"] = number(r.min_ess_bulk);
    o["min_ess_tail"] = number(r.min_ess_tail);
    o["n_divergent"] = r.n_divergent;
    o["warmup"] = r.warmup;
    o["parameters"] = params(r.parameters, true);
    if (r.n_model_parameters) o["n_model_parameters"] = *r.n_model_parameters;
    if (r.lp) o["lp"] = params({*r.lp}, true).front();
    if (!r.lp_note.empty()) o["lp_note"] = r.lp_note;
    o["chains"] = J::array();
    for (const auto& c : r.chains) {
      J co;
      co["file"] = c.file;
      co["chain_id"] = c.chain_id;
      co["seed"] = c.seed;
      co["n_draws"] = c.n_draws;
      co["n_draws_used"] = c.n_draws_used;
      co["thinned_by"] = c.thinned_by;
      co["status"] = c.status;
      co["mean_accept_stat"] = number(c.mean_accept_stat);
      co["n_divergent"] = c.n_divergent;
      co["mean_tree_depth"] = number(c.mean_tree_depth);
      co["max_tree_depth"] = c.max_tree_depth;
      co["mean_n_leapfrog"] = number(c.mean_n_leapfrog);
      co["step_size"] = number(c.step_size);
      if (c.n_max_tree_depth) {
        co["n_max_tree_depth"] = *c.n_max_tree_depth;
        co["configured_max_tree_depth"] = c.configured_max_tree_depth;
      }
      co["ebfmi"] = number(c.ebfmi);
      co["weighted"] = c.weighted;
      co["kish_ess"] = number(c.kish_ess);
      co["n_gradient_evals"] = c.n_gradient_evals;
      co["wall_seconds"] = number(c.wall_seconds);
      co["estimates"] = J::object();
      for (const auto& [name, value] : c.estimates) co["estimates"][name] = number(value);
      co["warnings"] = c.warnings;
      co["model_messages"] = c.model_messages;
      co["parameters"] = params(c.parameters, false);
      o["chains"].push_back(std::move(co));
    }
    o["warnings"] = r.warnings;
    if (r.log_z_check) {
      const auto& a = r.log_z_check->agreement;
      int untrusted = 0, trusted = 0;
      for (const auto& c : r.chains) {
        untrusted += estimators::log_z_untrusted(c.estimates);
        trusted += estimators::log_z_trusted(c.estimates);
      }
      o["log_z_trust"] = {{"n_untrusted", untrusted},
                          {"n_unchecked", r.log_z_check->n_with_log_z - untrusted - trusted},
                          {"unchecked", r.log_z_check->unchecked},
                          {"n_chains_compared", a.n},
                          {"spread_ratio", number(a.spread_ratio)},
                          {"chi2", number(a.chi2)},
                          {"p_value", number(a.p_value)},
                          {"chains_disagree", a.disagree}};
    }
    if (r.modes) o["modes"] = modes_json(*r.modes);
    o["notes"] = r.notes;
    j["runs"].push_back(std::move(o));
  }
  j["files"] = J::array();
  for (const auto& f : report.files) {
    J o;
    o["path"] = f.path.string();
    o["n_records"] = f.n_records;
    o["complete"] = f.complete;
    if (f.problem)
      o["problem"] = {{"offset", f.problem->offset},
                      {"record_index", f.problem->record_index},
                      {"message", f.problem->message}};
    j["files"].push_back(std::move(o));
  }
  return j.dump(2) + "\n";
}

std::vector<std::size_t> worst_first(const std::vector<ParameterDiagnostics>& ps,
                                     const std::vector<int>& group) {
  // Sort key: an undefined or infinite R-hat is the worst news, then the largest R-hat, then the
  // smallest bulk ESS (undefined last among equals), then name order.
  const auto badness = [](const ParameterDiagnostics& p) {
    return std::isfinite(p.rhat) ? p.rhat : std::numeric_limits<double>::infinity();
  };
  const auto ess = [](const ParameterDiagnostics& p) {
    return std::isnan(p.ess_bulk) ? std::numeric_limits<double>::infinity() : p.ess_bulk;
  };
  std::vector<std::size_t> order(ps.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto group_of = [&group](std::size_t i) { return i < group.size() ? group[i] : 0; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (group_of(a) != group_of(b)) return group_of(a) < group_of(b);
    const double ra = badness(ps[a]), rb = badness(ps[b]);
    if (ra != rb) return ra > rb;
    return ess(ps[a]) < ess(ps[b]);
  });
  return order;
}

std::string diagnostics_to_table(const DiagnosticsReport& report, int show,
                                 const std::vector<std::string>& vars) {
  std::string out;
  for (const auto& r : report.runs) {
    out += fmt::format("run {} ({} on {}): {} chains x {} draws{}; quantity: {}\n", r.run_id,
                       r.sampler, r.target, r.n_chains, r.n_draws_used,
                       r.thinned_by > 1 ? fmt::format(" (thinned by {})", r.thinned_by) : "",
                       r.quantity);
    out += fmt::format("  over all {} parameters: max R-hat {}, min bulk ESS {}, min tail ESS {}\n",
                       r.parameters.size(), fmt_num(r.max_rhat, "{:.3f}"),
                       fmt_num(r.min_ess_bulk, "{:.0f}"), fmt_num(r.min_ess_tail, "{:.0f}"));
    out += fmt::format("  {:<12} {:>11} {:>11} {:>8} {:>9} {:>9}\n", "parameter", "mean", "sd",
                       "R-hat", "bulk ESS", "tail ESS");
    // lp__ stands for the potential where it is the model's (-potential), and comes first.
    std::vector<ParameterDiagnostics> listed;
    if (r.lp) listed.push_back(*r.lp);
    for (const auto& p : r.parameters)
      if (!(r.lp && p.name == "potential")) listed.push_back(p);
    // A Stan model's generated quantities (group 1) come after everything else (group 0).
    std::set<std::string> generated;
    if (r.n_model_parameters)
      for (std::size_t i = *r.n_model_parameters; i < r.parameters.size(); ++i)
        if (r.parameters[i].name != "potential") generated.insert(r.parameters[i].name);
    const auto groups = [&generated](const std::vector<ParameterDiagnostics>& ps) {
      std::vector<int> g;
      for (const auto& p : ps) g.push_back(generated.count(p.name) > 0 ? 1 : 0);
      return g;
    };
    std::vector<std::size_t> order;
    std::size_t shown = 0;
    const std::size_t pinned = vars.empty() && r.lp ? 1 : 0;
    if (vars.empty()) {
      const std::vector<ParameterDiagnostics> ranked(listed.begin() + pinned, listed.end());
      order = worst_first(ranked, groups(ranked));
      for (auto& i : order) i += pinned;
      if (pinned) order.insert(order.begin(), 0);
      shown = std::min(order.size(), static_cast<std::size_t>(std::max(show, 1)) + pinned);
    } else {
      std::vector<std::string> names;
      for (const auto& p : listed) names.push_back(p.name);
      const auto chosen = select_quantities(names, vars, fmt::format("run '{}': ", r.run_id));
      std::vector<ParameterDiagnostics> picked;
      for (std::size_t i : chosen) picked.push_back(listed[i]);
      for (std::size_t i : worst_first(picked, groups(picked))) order.push_back(chosen[i]);
      shown = order.size();
    }
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& p = listed[order[i]];
      out += fmt::format("  {:<12} {:>11} {:>11} {:>8} {:>9} {:>9}{}\n", p.name, fmt_num(p.mean),
                         fmt_num(p.sd), fmt_num(p.rhat, "{:.3f}"), fmt_num(p.ess_bulk, "{:.0f}"),
                         fmt_num(p.ess_tail, "{:.0f}"),
                         std::isfinite(p.rhat) && p.rhat > 1.01 ? "  <- R-hat > 1.01" : "");
    }
    if (shown < order.size())
      out += fmt::format("  ... and {} more (the worst {} shown, by R-hat then bulk ESS{}; max "
                         "R-hat and min ESS above cover all {}; --coords N shows more, --vars "
                         "NAMES picks quantities, --format json lists all)\n",
                         order.size() - shown, shown - pinned,
                         generated.empty() ? "" : ", parameters before generated quantities",
                         r.parameters.size());
    out += fmt::format("  {:>5} {:>10} {:>8} {:>7} {:>5} {:>9} {:>8} {:>9} {:>9} {:>12} {:>8}  {}\n",
                       "chain", "seed", "draws", "accept", "div", "depth", "leapfrog", "step",
                       "kish ESS", "grad evals", "wall s", "status / estimates");
    for (const auto& c : r.chains) {
      std::string est;
      for (const auto& [name, value] : c.estimates)
        est += fmt::format(" {}={}", name, fmt_num(value));
      out += fmt::format(
          "  {:>5} {:>10} {:>8} {:>7.3f} {:>5} {:>9} {:>8.1f} {:>9.3g} {:>9.4g} {:>12} {:>8.2f}  "
          "{}{}\n",
          c.chain_id, c.seed, c.n_draws, c.mean_accept_stat, c.n_divergent,
          fmt::format("{:.1f}/{}", c.mean_tree_depth, c.max_tree_depth), c.mean_n_leapfrog,
          c.step_size, c.kish_ess, c.n_gradient_evals, c.wall_seconds, c.status, est);
    }
    for (const auto& w : r.warnings) out += "  WARNING: " + w + "\n";
    if (r.log_z_check) {
      std::vector<const std::map<std::string, double>*> estimates;
      for (const auto& c : r.chains) estimates.push_back(&c.estimates);
      out += "  " + log_z_headline(estimates, " (notes say why)") + "\n";
    }
    if (r.modes)
      for (const auto& line : mode_diagnostics_lines(*r.modes)) out += "  " + line + "\n";
    for (const auto& n : r.notes) out += "  note: " + n + "\n";
    out += "\n";
  }
  for (const auto& f : report.files)
    if (f.problem)
      out += fmt::format("{}: DAMAGED at byte {}: {} (diagnosed the {} records before it)\n",
                         f.path.string(), f.problem->offset, f.problem->message, f.n_records);
  return out;
}

}  // namespace pemc::report
