#include "report/log_z_headline.hpp"

#include <fmt/format.h>

#include <cmath>

#include "estimators/log_z_trust.hpp"

namespace pemc::report {

std::string log_z_headline(const std::vector<const std::map<std::string, double>*>& chains,
                           const std::string& why) {
  int n = 0, untrusted = 0, unchecked = 0;
  double compared = NAN, spread = NAN;
  for (const auto* e : chains) {
    if (estimators::log_z_key(*e).empty()) continue;
    ++n;
    const bool u = estimators::log_z_untrusted(*e);
    untrusted += u;
    unchecked += !u && estimators::log_z_unchecked(*e);
    if (const auto it = e->find("log_z_chains_compared"); it != e->end()) compared = it->second;
    if (const auto it = e->find("log_z_chains_spread_ratio"); it != e->end()) spread = it->second;
  }
  if (n == 0) return "";
  std::string out = fmt::format("log Z: {} of {} chains cannot be trusted{}", untrusted, n,
                                untrusted > 0 ? why : "");
  const bool run_unchecked = std::isfinite(compared) && compared < 3;
  if (run_unchecked)
    out += fmt::format("; {} unchecked: {:g} chain{} with a log Z and an SE, and the check that the "
                       "chains agree within their SEs needs 3, so none is trusted",
                       unchecked, compared, compared == 1 ? "" : "s");
  else if (std::isfinite(spread))
    out += fmt::format("; the chains scatter {:.2f} times their SEs", spread);
  return out;
}

}  // namespace pemc::report
