#include "warmup/stuck_chains.hpp"

#include <algorithm>
#include <cmath>

namespace pemc::warmup {
namespace {

struct WindowRange {
  int id = 0;
  double step_size = 0.0;
  double min_log_density = 0.0;
  double max_log_density = 0.0;
};

bool stuck_behind(const WindowRange& c, const WindowRange& h) {
  return c.step_size < kStuckStepRatio * h.step_size && c.max_log_density < h.min_log_density;
}

}  // namespace

std::vector<ChainRestart> stuck_chain_restarts(const std::map<int, ChainRoundReport>& reports,
                                               int round) {
  // Chains with a finite step size and log densities only: anything else has no verdict.
  std::vector<WindowRange> ranges;
  for (const auto& [id, r] : reports) {
    if (!r.ok || !r.window || r.window->log_density.empty()) continue;
    if (!(std::isfinite(r.final_step_size) && r.final_step_size > 0.0)) continue;
    const auto& lp = r.window->log_density;
    if (!std::all_of(lp.begin(), lp.end(), [](double x) { return std::isfinite(x); })) continue;
    const auto [lo, hi] = std::minmax_element(lp.begin(), lp.end());
    ranges.push_back({id, r.final_step_size, *lo, *hi});
  }
  std::vector<const WindowRange*> free;  // chains stuck behind none
  for (const auto& c : ranges)
    if (std::none_of(ranges.begin(), ranges.end(),
                     [&](const WindowRange& h) { return stuck_behind(c, h); }))
      free.push_back(&c);
  // The k-th stuck chain takes the (k + round)-th of its donors (mod their number), so that
  // several stuck chains spread over the free ones.
  std::vector<ChainRestart> out;
  for (const auto& c : ranges) {
    std::vector<const WindowRange*> donors;
    for (const auto* h : free)
      if (stuck_behind(c, *h)) donors.push_back(h);
    if (donors.empty()) continue;
    const auto* d = donors[(out.size() + static_cast<std::size_t>(round)) % donors.size()];
    out.push_back({c.id, d->id, c.step_size, d->step_size, c.max_log_density, d->min_log_density});
  }
  return out;
}

}  // namespace pemc::warmup
