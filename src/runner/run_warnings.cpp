#include "runner/run_warnings.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "config/sampler_columns.hpp"
#include "runner/chain_status.hpp"

namespace pemc::runner {

estimators::RunHealth run_health(const std::vector<const v1::ChainSummary*>& chains,
                                 const v1::RunConfig& run) {
  const bool divergences = config::records_stat(run.sampler(), config::DrawStat::kDivergent);
  const int max_depth = config::configured_max_tree_depth(run.sampler()).value_or(0);
  estimators::RunHealth h;
  for (const auto* c : chains) {
    if (status_of(*c) != ChainStatus::kOk) continue;
    estimators::ChainHealth ch;
    ch.chain_id = c->chain_id();
    ch.n_draws = run.iterations();
    if (divergences) ch.n_divergent = c->n_divergent();
    if (c->has_n_max_tree_depth()) ch.n_max_tree_depth = c->n_max_tree_depth();
    ch.max_tree_depth = max_depth;
    if (c->has_e_bfmi()) ch.ebfmi = c->e_bfmi();
    for (const auto& w : c->warnings())
      if (w.rfind("mode check:", 0) != 0) ch.warnings.push_back(w);
    h.chains.push_back(std::move(ch));
  }
  return h;
}

v1::DrawCheck draw_check_record(const report::RunDrawCheck& check) {
  v1::DrawCheck d;
  d.set_run_id(check.run_id);
  d.set_checked(check.checked);
  if (!check.checked) {
    d.set_unchecked_reason(check.unchecked_reason);
    return d;
  }
  d.set_n_chains(check.n_chains);
  d.set_n_draws_used(check.n_draws_used);
  d.set_thinned_by(check.thinned_by);
  // As the reports' headline: undefined values are skipped, an infinite R-hat is the largest.
  const estimators::QuantityHealth* worst_rhat = nullptr;
  const estimators::QuantityHealth* worst_ess = nullptr;
  for (const auto& q : check.quantities) {
    if (!std::isnan(q.rhat) && (!worst_rhat || q.rhat > worst_rhat->rhat)) worst_rhat = &q;
    if (!std::isnan(q.ess_bulk) && (!worst_ess || q.ess_bulk < worst_ess->ess_bulk)) worst_ess = &q;
  }
  if (worst_rhat) {
    d.set_max_rhat(worst_rhat->rhat);
    d.set_max_rhat_quantity(worst_rhat->name);
  }
  if (worst_ess) {
    d.set_min_ess_bulk(worst_ess->ess_bulk);
    d.set_min_ess_bulk_quantity(worst_ess->name);
  }
  return d;
}

namespace {

// A run's lines: sampler_warnings over its chains and, where the draws were checked, their R-hat
// and bulk ESS; where not, the unchecked line in their place (before the chains' own warnings).
std::vector<std::string> run_lines(estimators::RunHealth health, const report::RunDrawCheck* check,
                                   const std::filesystem::path& file) {
  if (check && check->checked) health.quantities = check->quantities;
  auto lines = estimators::sampler_warnings(health);
  if (check && !check->checked) {
    const auto n_chain_lines = estimators::chain_warning_lines(health.chains).size();
    lines.insert(lines.end() - static_cast<std::ptrdiff_t>(n_chain_lines),
                 report::unchecked_warning(*check, file));
  }
  return lines;
}

}  // namespace

void annotate_run_warnings(v1::Footer& footer, const std::vector<v1::RunConfig>& runs, bool study,
                           const DrawVerdicts* draws) {
  std::map<std::string, std::vector<const v1::ChainSummary*>> by_run;
  std::vector<std::string> unknown;
  for (const auto& c : footer.chains()) {
    const bool known = std::any_of(runs.begin(), runs.end(),
                                   [&](const v1::RunConfig& r) { return r.name() == c.run_id(); });
    if (!known)
      unknown.push_back("chain " + std::to_string(c.chain_id()) + " belongs to run '" +
                        c.run_id() + "', which the plan does not have: its summary is not judged");
    else
      by_run[c.run_id()].push_back(&c);
  }
  footer.clear_warnings();
  footer.clear_draw_checks();
  for (const auto& line : unknown) footer.add_warnings(line);
  for (const auto& run : runs) {
    const auto it = by_run.find(run.name());
    if (it == by_run.end()) continue;
    const report::RunDrawCheck* check = nullptr;
    report::RunDrawCheck not_asked;  // a run the check was not asked about: never passed over
    if (draws) {
      const auto c = std::find_if(draws->runs.begin(), draws->runs.end(),
                                  [&](const report::RunDrawCheck& d) { return d.run_id == run.name(); });
      if (c != draws->runs.end()) {
        check = &*c;
      } else {
        not_asked.run_id = run.name();
        not_asked.unchecked_reason = "the run's end did not read its draws";
        check = &not_asked;
      }
      *footer.add_draw_checks() = draw_check_record(*check);
    }
    for (const auto& line : run_lines(run_health(it->second, run), check,
                                      draws ? draws->file : std::filesystem::path()))
      footer.add_warnings(study ? run.name() + ": " + line : line);
  }
}

}  // namespace pemc::runner
