#include "report/diagnostics_log_z.hpp"

#include <fmt/format.h>

#include <vector>

namespace pemc::report {

std::optional<estimators::LogZRunCheck> check_log_z_trust(RunDiagnostics& run) {
  std::vector<estimators::RunChainLogZ> chains;
  for (auto& c : run.chains)
    if (c.status == "ok" && !estimators::log_z_key(c.estimates).empty())
      chains.push_back({&c.estimates, c.largest_log_weights});
  if (chains.empty()) return std::nullopt;
  const auto check = estimators::annotate_log_z_run(chains);
  const auto& a = check.agreement;
  if (a.disagree)
    run.notes.push_back(fmt::format(
        "log Z: the {} chains scatter {:.2g} times their standard errors (chi-square {:.1f} on {} "
        "degrees of freedom, p = {:.2g}): the SEs understate the error, or the chains sample "
        "different parts of the target",
        a.n, a.spread_ratio, a.chi2, a.n - 1, a.p_value));
  for (const auto& c : run.chains) {
    if (estimators::log_z_untrusted(c.estimates))
      run.notes.push_back(fmt::format("chain {}: {}", c.chain_id,
                                      estimators::describe_untrusted_log_z(c.estimates)));
    else if (estimators::log_z_unchecked(c.estimates))
      run.notes.push_back(fmt::format("chain {}: {}", c.chain_id,
                                      estimators::describe_unchecked_log_z(c.estimates)));
  }
  if (check.pooled)
    for (const auto& c : run.chains)
      if (c.estimates.count("pooled_log_z")) {
        run.notes.push_back("log Z " + estimators::describe_pooled_log_z(c.estimates));
        break;
      }
  return check;
}

}  // namespace pemc::report
