#include "report/diagnostics_log_z.hpp"

#include <fmt/format.h>

#include <iterator>
#include <vector>

namespace pemc::report {

std::optional<estimators::LogZAgreement> check_log_z_trust(RunDiagnostics& run) {
  std::vector<std::map<std::string, double>*> chains;
  for (auto& c : run.chains) {
    if (c.status != "ok" || estimators::log_z_key(c.estimates).empty()) continue;
    // Judged afresh: the footer's run-level flag covered only the chains of its own file.
    for (auto it = c.estimates.begin(); it != c.estimates.end();)
      it = it->first.rfind("log_z_untrusted", 0) == 0 || it->first == "log_z_chains_spread_ratio"
               ? c.estimates.erase(it)
               : std::next(it);
    estimators::annotate_log_z_trust(c.estimates);
    chains.push_back(&c.estimates);
  }
  if (chains.empty()) return std::nullopt;
  const auto agreement = estimators::annotate_log_z_agreement(chains);
  if (agreement.disagree)
    run.notes.push_back(fmt::format(
        "log Z: the {} chains scatter {:.2g} times their standard errors (chi-square {:.1f} on {} "
        "degrees of freedom, p = {:.2g}): the SEs understate the error, or the chains sample "
        "different parts of the target",
        agreement.n, agreement.spread_ratio, agreement.chi2, agreement.n - 1, agreement.p_value));
  for (const auto& c : run.chains)
    if (estimators::log_z_untrusted(c.estimates))
      run.notes.push_back(fmt::format("chain {}: {}", c.chain_id,
                                      estimators::describe_untrusted_log_z(c.estimates)));
  return agreement;
}

}  // namespace pemc::report
