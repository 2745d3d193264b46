#pragma once
// One line on a run's log Z, from its chains' trust keys (estimators/log_z_trust.hpp,
// log_z_run_checks.hpp), for `pemc-report diagnose` and `summarize`:
//   "log Z: k of n chains cannot be trusted (notes say why); the chains scatter r times their SEs"
// or, when the run had too few chains to compare them,
//   "log Z: k of n chains cannot be trusted; m unchecked: 1 chain with a log Z and an SE, and the
//    check that the chains agree within their SEs needs 3, so none is trusted".
#include <map>
#include <string>
#include <vector>

namespace pemc::report {

// Empty when no chain has a log Z. `why` follows the untrusted count when some are untrusted
// (e.g. " (notes say why)").
std::string log_z_headline(const std::vector<const std::map<std::string, double>*>& chains,
                           const std::string& why = "");

}  // namespace pemc::report
