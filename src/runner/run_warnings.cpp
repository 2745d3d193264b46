#include "runner/run_warnings.hpp"

#include <algorithm>
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

void annotate_run_warnings(v1::Footer& footer, const std::vector<v1::RunConfig>& runs, bool study) {
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
  for (const auto& line : unknown) footer.add_warnings(line);
  for (const auto& run : runs) {
    const auto it = by_run.find(run.name());
    if (it == by_run.end()) continue;
    for (const auto& line : estimators::sampler_warnings(run_health(it->second, run)))
      footer.add_warnings(study ? run.name() + ": " + line : line);
  }
}

}  // namespace pemc::runner
