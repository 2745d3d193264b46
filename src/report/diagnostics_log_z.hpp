#pragma once
// The log Z trust checks in `pemc-report diagnose` (estimators/log_z_trust.hpp): each chain's log Z
// judged by the numbers its sampler wrote with it, and the run's chains checked for agreement within
// their SEs over every file diagnosed together (the footer's own check saw one file's chains).
#include <optional>

#include "estimators/log_z_trust.hpp"
#include "report/diagnostics.hpp"

namespace pemc::report {

// Re-derives the trust keys of every "ok" chain of the run (log_z_untrusted, its reasons,
// log_z_chains_spread_ratio) from its other estimates — files written before the keys existed get
// them too — and adds a note per untrusted chain and one for disagreeing chains. Returns the
// agreement over the run's chains, or nullopt when no chain has a log Z.
std::optional<estimators::LogZAgreement> check_log_z_trust(RunDiagnostics& run);

}  // namespace pemc::report
