#pragma once
// The log Z trust checks in `pemc-report diagnose` (estimators/log_z_trust.hpp,
// log_z_run_checks.hpp): each chain's log Z judged by the numbers its sampler wrote with it, and the
// run-level checks (AIS weights pooled over the chains, the chains' agreement within their SEs,
// "unchecked" with fewer than 3 chains) over every file diagnosed together (the footer's own checks
// saw one file's chains).
#include <optional>

#include "estimators/log_z_run_checks.hpp"
#include "report/diagnostics.hpp"

namespace pemc::report {

// Re-derives the trust keys of every "ok" chain of the run from its other estimates — files
// written before the keys existed get them too — and adds a note per untrusted or unchecked chain,
// one for disagreeing chains and one for an AIS run's pooled estimate. Returns the run-level
// checks, or nullopt when no chain has a log Z.
std::optional<estimators::LogZRunCheck> check_log_z_trust(RunDiagnostics& run);

}  // namespace pemc::report
