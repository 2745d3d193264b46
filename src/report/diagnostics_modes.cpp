#include "report/diagnostics_modes.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/numerics.hpp"

namespace pemc::report {

std::optional<ModeDiagnostics> diagnose_modes(
    const std::optional<v1::ModeSearchResult>& search,
    const std::vector<std::pair<int, const v1::ModeOccupancy*>>& chains) {
  if (!search || chains.empty()) return std::nullopt;
  ModeDiagnostics m;
  m.search = *search;
  std::vector<double> log_mass;
  for (const auto& mode : search->modes()) log_mass.push_back(mode.log_mass());
  if (!log_mass.empty()) {
    const double total = log_sum_exp(log_mass);
    for (double l : log_mass) m.laplace_share.push_back(std::exp(l - total));
  }
  std::vector<const v1::ModeOccupancy*> occupancies;
  for (const auto& [id, occ] : chains) {
    if (occ->first_half_size() != static_cast<int>(m.laplace_share.size()) + 1) return std::nullopt;
    m.chain_ids.push_back(id);
    occupancies.push_back(occ);
  }
  m.check = modes::check_mode_occupancy(occupancies, m.laplace_share);
  m.doubts = modes::describe_mode_doubts(m.check);
  return m;
}

std::vector<std::string> mode_diagnostics_lines(const ModeDiagnostics& m, int max_modes) {
  std::vector<std::string> out;
  const auto& s = m.search;
  out.push_back(fmt::format(
      "modes: {} found by the search ({} starts, {}); check over {} chain{}: {}", s.modes_size(),
      s.n_starts(),
      s.complete() ? "complete"
                   : fmt::format("stopped at its budget, chance of an unseen mode {:.2f}",
                                 s.unseen_probability()),
      m.chain_ids.size(), m.chain_ids.size() == 1 ? "" : "s",
      m.check.untrusted() ? "UNTRUSTED" : "trusted"));
  out.push_back(fmt::format("  {:<8} {:>10} {:>10} {:>8}  share per chain ({})", "mode",
                            "Laplace", "draws", "R-hat",
                            fmt::format("chains {}{}", m.chain_ids.empty() ? 0 : m.chain_ids[0],
                                        m.chain_ids.size() > 1 ? ", ..." : "")));
  const int k_modes = m.check.n_modes;
  for (int k = 0; k <= k_modes && k < max_modes; ++k) {
    const bool outside = k == k_modes;
    std::string per_chain;
    for (std::size_t c = 0; c < m.check.chain_share.size() && c < 8; ++c)
      per_chain += fmt::format("{}{:.3f}", c ? " " : "", m.check.chain_share[c][static_cast<std::size_t>(k)]);
    out.push_back(fmt::format(
        "  {:<8} {:>10} {:>10.4f} {:>8.3f}  {}", outside ? "outside" : fmt::format("#{}", k + 1),
        outside ? std::string("-") : fmt::format("{:.4f}", m.laplace_share[static_cast<std::size_t>(k)]),
        m.check.pooled_share[static_cast<std::size_t>(k)], m.check.rhat[static_cast<std::size_t>(k)],
        per_chain));
  }
  if (k_modes + 1 > max_modes)
    out.push_back(fmt::format("  ... {} more modes (see --format json)", k_modes + 1 - max_modes));
  for (const auto& d : m.doubts) out.push_back("  " + d);
  return out;
}

}  // namespace pemc::report
