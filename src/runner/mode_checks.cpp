#include "runner/mode_checks.hpp"

#include <fmt/format.h>

#include <set>

#include "modes/mode_occupancy.hpp"
#include "runner/chain_status.hpp"

namespace pemc::runner {
namespace {

void write_verdict(v1::ChainSummary& c, const modes::ModeCheck& check,
                   const std::vector<std::string>& doubts) {
  auto& e = *c.mutable_estimates();
  e["modes_found"] = check.n_modes;
  e["modes_untrusted"] = check.untrusted() ? 1.0 : 0.0;
  e["mode_share_rhat_max"] = check.max_rhat;
  e["mode_share_outside"] = check.pooled_share.back();
  for (const auto& d : doubts) c.add_warnings(d);
}

}  // namespace

void annotate_mode_checks(v1::Footer& footer, const ModeSharesByRun& shares) {
  std::map<std::string, std::vector<int>> by_run;
  for (int i = 0; i < footer.chains_size(); ++i) {
    const auto& c = footer.chains(i);
    if (status_of(c) == ChainStatus::kOk && c.has_mode_occupancy() && shares.count(c.run_id()))
      by_run[c.run_id()].push_back(i);
  }
  for (const auto& [run, indices] : by_run) {
    std::vector<const v1::ModeOccupancy*> occupancies;
    for (int i : indices) occupancies.push_back(&footer.chains(i).mode_occupancy());
    const auto check = modes::check_mode_occupancy(occupancies, shares.at(run));
    const auto doubts = modes::describe_mode_doubts(check);
    for (int i : indices) write_verdict(*footer.mutable_chains(i), check, doubts);
  }
}

std::vector<std::string> mode_check_warnings(const v1::Footer& footer) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& c : footer.chains()) {
    const auto it = c.estimates().find("modes_untrusted");
    if (it == c.estimates().end() || it->second != 1.0 || !seen.insert(c.run_id()).second)
      continue;
    for (const auto& w : c.warnings())
      if (w.rfind("mode check:", 0) == 0)
        out.push_back(fmt::format("run {}: {}", c.run_id().empty() ? "(unnamed)" : c.run_id(), w));
  }
  return out;
}

}  // namespace pemc::runner
