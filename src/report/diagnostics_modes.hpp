#pragma once
// The mode check in `pemc-report diagnose` (modes/mode_occupancy.hpp): for a run whose header
// records a mode search, every mode found with its Laplace share, the share of the run's draws
// in it (pooled over chains and per chain), its split R-hat, and the verdict — recomputed from the
// footer's per-chain occupancies, so that chains of one run spread over several files (a study's
// slices) are judged together.
#include <optional>
#include <string>
#include <vector>

#include "modes/mode_occupancy.hpp"
#include "pemc/v1/records.pb.h"

namespace pemc::report {

struct ModeDiagnostics {
  pemc::v1::ModeSearchResult search;     // the header's record of the search
  std::vector<double> laplace_share;     // per mode with a Laplace fit, in the search's order
  std::vector<int> chain_ids;            // the chains with an occupancy, in the check's order
  modes::ModeCheck check;
  std::vector<std::string> doubts;       // describe_mode_doubts(check)
};

// nullopt when the run had no search, or no chain finished with an occupancy.
std::optional<ModeDiagnostics> diagnose_modes(
    const std::optional<pemc::v1::ModeSearchResult>& search,
    const std::vector<std::pair<int, const pemc::v1::ModeOccupancy*>>& chains);

// The diagnose table's lines for it ("modes: 2 found (search complete); check: trusted" and one
// line per mode: Laplace share, pooled share, R-hat, shares per chain).
std::vector<std::string> mode_diagnostics_lines(const ModeDiagnostics& m, int max_modes = 16);

}  // namespace pemc::report
