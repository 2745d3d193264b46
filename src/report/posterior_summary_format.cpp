#include "report/posterior_summary_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pemc::report {
namespace {

using J = nlohmann::ordered_json;

J number(double x) { return std::isfinite(x) ? J(x) : J(nullptr); }

// A table cell: "—" for unavailable or undefined numbers.
std::string cell(double x, const char* spec) {
  if (std::isnan(x)) return "—";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format(fmt::runtime(spec), x);
}

// "12 (1.2%)".
std::string count_share(std::int64_t n, std::int64_t of) {
  return fmt::format("{} ({:.1f}%)", n, of > 0 ? 100.0 * static_cast<double>(n) / static_cast<double>(of) : 0.0);
}

std::string header_line(const RunPosterior& r) {
  const std::string draws = r.min_draws == r.max_draws
                                ? std::to_string(r.min_draws)
                                : fmt::format("{}..{}", r.min_draws, r.max_draws);
  return fmt::format(
      "run {} ({} on {}): {} chains x {} draws after {} warmup; wall {:.2f} s (longest chain), "
      "CPU {:.2f} s (all chains)\n",
      r.run_id, r.sampler, r.target, r.n_chains, draws, r.warmup, r.wall_seconds, r.cpu_seconds);
}

// The HMC chains' table: only the columns the sampler records.
std::string chain_table(const RunPosterior& r) {
  if (!r.has_divergences && !r.has_tree_depth && !r.has_ebfmi) return {};
  int depth = 0;
  for (const auto& c : r.chains) depth = std::max(depth, c.configured_max_tree_depth);
  std::string out = fmt::format("  {:>5} {:>8} {:>7}", "chain", "draws", "accept");
  if (r.has_step_size) out += fmt::format(" {:>10}", "step size");
  if (r.has_divergences) out += fmt::format(" {:>16}", "divergent");
  if (r.has_tree_depth) out += fmt::format(" {:>16}", fmt::format("at depth {}", depth));
  if (r.has_ebfmi) out += fmt::format(" {:>7}", "E-BFMI");
  out += "\n";
  for (const auto& c : r.chains) {
    out += fmt::format("  {:>5} {:>8} {:>7.3f}", c.chain_id, c.n_draws, c.mean_accept_stat);
    if (r.has_step_size) out += fmt::format(" {:>10.4g}", c.step_size);
    if (r.has_divergences) out += fmt::format(" {:>16}", count_share(c.n_divergent, c.n_draws));
    if (r.has_tree_depth)
      out += fmt::format(" {:>16}", c.n_max_tree_depth ? count_share(*c.n_max_tree_depth, c.n_draws)
                                                       : std::string("—"));
    if (r.has_ebfmi) out += fmt::format(" {:>7}", cell(c.ebfmi, "{:.3f}"));
    out += "\n";
  }
  return out;
}

std::string quantity_table(const RunPosterior& r) {
  std::size_t width = 8;
  for (const auto& q : r.quantities) width = std::max(width, q.name.size());
  std::string out = fmt::format("  {:<{}} {:>10} {:>9} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>6}\n",
                                "", width, "mean", "MCSE", "sd", "5%", "50%", "95%", "ESS_bulk",
                                "ESS_tail", "R-hat");
  for (const auto& q : r.quantities)
    out += fmt::format("  {:<{}} {:>10} {:>9} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>6}\n",
                       q.name, width, cell(q.mean, "{:.4g}"), cell(q.mcse_mean, "{:.2g}"),
                       cell(q.sd, "{:.4g}"), cell(q.q5, "{:.4g}"), cell(q.q50, "{:.4g}"),
                       cell(q.q95, "{:.4g}"), cell(q.ess_bulk, "{:.0f}"), cell(q.ess_tail, "{:.0f}"),
                       cell(q.rhat, "{:.3f}"));
  return out;
}

}  // namespace

std::string summarize_to_json(const std::vector<FileSummary>& files,
                              const std::vector<RunPosterior>& posterior) {
  J j = summaries_json(files);
  j["posterior"] = J::array();
  for (const auto& r : posterior) {
    J o;
    o["run_id"] = r.run_id;
    o["sampler"] = r.sampler;
    o["target"] = r.target;
    o["n_chains"] = r.n_chains;
    o["min_draws"] = r.min_draws;
    o["max_draws"] = r.max_draws;
    o["warmup"] = r.warmup;
    o["wall_seconds"] = r.wall_seconds;
    o["cpu_seconds"] = r.cpu_seconds;
    o["weighted"] = r.weighted;
    if (!r.estimates_note.empty()) o["estimates_note"] = r.estimates_note;
    if (!r.lp_note.empty()) o["lp_note"] = r.lp_note;
    o["chains"] = J::array();
    for (const auto& c : r.chains) {
      J co;
      co["chain_id"] = c.chain_id;
      co["draws"] = c.n_draws;  // not "n_draws": scripts count the chains of "runs" by that key
      co["mean_accept_stat"] = number(c.mean_accept_stat);
      if (c.records_step_size) co["step_size"] = number(c.step_size);
      if (c.records_divergences) co["n_divergent"] = c.n_divergent;
      if (c.n_max_tree_depth) {
        co["n_max_tree_depth"] = *c.n_max_tree_depth;
        co["max_tree_depth"] = c.configured_max_tree_depth;
      }
      if (r.has_ebfmi) co["ebfmi"] = number(c.ebfmi);
      co["status"] = c.status;
      o["chains"].push_back(std::move(co));
    }
    o["quantities"] = J::array();
    for (const auto& q : r.quantities)
      o["quantities"].push_back({{"name", q.name},
                                 {"mean", number(q.mean)},
                                 {"mcse_mean", number(q.mcse_mean)},
                                 {"sd", number(q.sd)},
                                 {"q5", number(q.q5)},
                                 {"q50", number(q.q50)},
                                 {"q95", number(q.q95)},
                                 {"ess_bulk", number(q.ess_bulk)},
                                 {"ess_tail", number(q.ess_tail)},
                                 {"rhat", number(q.rhat)}});
    o["warnings"] = r.warnings;
    o["notes"] = r.notes;
    j["posterior"].push_back(std::move(o));
  }
  return j.dump(2) + "\n";
}

std::string posterior_to_csv(const std::vector<RunPosterior>& posterior) {
  // Full precision (17 significant digits round-trip a double); an empty cell where unavailable.
  const auto num = [](double x) { return std::isfinite(x) ? fmt::format("{:.17g}", x) : std::string(); };
  const auto quoted = [](const std::string& s) {
    if (s.find_first_of(",\"") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  std::string out = "run_id,name,mean,mcse_mean,sd,q5,q50,q95,ess_bulk,ess_tail,rhat\n";
  for (const auto& r : posterior)
    for (const auto& q : r.quantities)
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", quoted(r.run_id), quoted(q.name),
                         num(q.mean), num(q.mcse_mean), num(q.sd), num(q.q5), num(q.q50),
                         num(q.q95), num(q.ess_bulk), num(q.ess_tail), num(q.rhat));
  return out;
}

std::string posterior_to_table(const std::vector<RunPosterior>& posterior) {
  std::string out;
  for (const auto& r : posterior) {
    out += "\n" + header_line(r);
    out += chain_table(r);
    if (!r.estimates_note.empty()) out += "  estimates: " + r.estimates_note + "\n";
    out += quantity_table(r);
    if (!r.lp_note.empty()) out += "  note: " + r.lp_note + "\n";
    for (const auto& w : r.warnings) out += fmt::format("  WARNING: run {}, {}\n", r.run_id, w);
    for (const auto& n : r.notes) out += "  note: " + n + "\n";
  }
  return out;
}

}  // namespace pemc::report
