#include "estimators/sampler_warnings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pemc::estimators {
namespace {

double percent(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// "chains 1, 3" / "chain 2".
std::string chain_list(const std::vector<int>& ids) {
  std::string s = ids.size() == 1 ? "chain " : "chains ";
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s;
}

std::int64_t total_draws(const std::vector<ChainHealth>& chains) {
  std::int64_t n = 0;
  for (const auto& c : chains) n += c.n_draws;
  return n;
}

// The sum of a per-chain count over the chains that have some, and which chains those are.
struct Counted {
  std::int64_t n = 0;
  std::vector<int> ids;
};
Counted count_draws(const std::vector<ChainHealth>& chains,
                    std::optional<std::int64_t> ChainHealth::*count) {
  Counted out;
  for (const auto& c : chains)
    if ((c.*count).value_or(0) > 0) {
      out.n += *(c.*count);
      out.ids.push_back(c.chain_id);
    }
  return out;
}

std::optional<std::string> divergence_line(const std::vector<ChainHealth>& chains) {
  const auto [n, ids] = count_draws(chains, &ChainHealth::n_divergent);
  if (n == 0) return std::nullopt;
  const std::int64_t all = total_draws(chains);
  return fmt::format(
      "divergences: {} of {} post-warmup draws ({:.1f}%) are divergent ({}): the sampler could "
      "not follow the posterior's curvature there, so the estimates may be biased; try a higher "
      "adaptation target_accept (e.g. 0.95), or reparameterise (e.g. non-centred hierarchical "
      "parameters)",
      n, all, percent(n, all), chain_list(ids));
}

std::optional<std::string> tree_depth_line(const std::vector<ChainHealth>& chains) {
  const auto [n, ids] = count_draws(chains, &ChainHealth::n_max_tree_depth);
  if (n == 0) return std::nullopt;
  int depth = 0;
  for (const auto& c : chains) depth = std::max(depth, c.max_tree_depth);
  const std::int64_t all = total_draws(chains);
  return fmt::format(
      "tree depth: {} of {} post-warmup draws ({:.1f}%) hit the maximum tree depth {} ({}): NUTS "
      "cut those trajectories short, which costs efficiency (not validity); try a larger "
      "max_tree_depth, or reparameterise so that the posterior is less elongated",
      n, all, percent(n, all), depth, chain_list(ids));
}

std::optional<std::string> ebfmi_line(const std::vector<ChainHealth>& chains) {
  std::string low;
  int n_low = 0, n_known = 0;
  for (const auto& c : chains) {
    if (std::isnan(c.ebfmi)) continue;
    ++n_known;
    if (c.ebfmi < kEbfmiMin) {
      low += fmt::format("{}chain {}: {:.3f}", n_low ? ", " : "", c.chain_id, c.ebfmi);
      ++n_low;
    }
  }
  if (n_low == 0) return std::nullopt;
  return fmt::format(
      "E-BFMI: {} of {} chains below {} ({}): the momentum resampling moves the energy too little "
      "to explore the posterior (often heavy tails); try reparameterising, or a dense metric",
      n_low, n_known, kEbfmiMin, low);
}

std::optional<std::string> rhat_line(const std::vector<QuantityHealth>& qs) {
  const QuantityHealth* worst = nullptr;
  int n = 0;
  for (const auto& q : qs)
    if (q.rhat > kRhatMax) {  // NaN compares false: undefined R-hats are not judged here
      ++n;
      if (!worst || q.rhat > worst->rhat) worst = &q;
    }
  if (!worst) return std::nullopt;
  return fmt::format(
      "R-hat: {} of {} quantities above {} (largest {:.3f}, {}): the chains disagree, so they "
      "have not mixed; run longer (more warmup and iterations), and check for several modes "
      "(pemc-report diagnose, trace plots)",
      n, qs.size(), kRhatMax, worst->rhat, worst->name);
}

std::optional<std::string> ess_line(const std::vector<QuantityHealth>& qs, std::size_t n_chains) {
  const double need = kEssBulkPerChainMin * static_cast<double>(n_chains);
  const QuantityHealth* worst = nullptr;
  int n = 0;
  for (const auto& q : qs)
    if (q.ess_bulk < need) {  // NaN compares false
      ++n;
      if (!worst || q.ess_bulk < worst->ess_bulk) worst = &q;
    }
  if (!worst) return std::nullopt;
  return fmt::format(
      "bulk ESS: {} of {} quantities below {:.0f} ({:.0f} per chain; smallest {:.0f}, {}): their "
      "means, quantiles and R-hat are unreliable; run more iterations, or reparameterise",
      n, qs.size(), need, kEssBulkPerChainMin, worst->ess_bulk, worst->name);
}

}  // namespace

std::vector<std::string> chain_warning_lines(const std::vector<ChainHealth>& chains) {
  struct Kind {
    std::string name;
    int count = 0;
    int first_chain = 0;
    std::string first_text;
    std::size_t last_chain = 0;  // position in `chains` of the last chain counted
  };
  std::vector<Kind> kinds;
  for (std::size_t i = 0; i < chains.size(); ++i) {
    const auto& c = chains[i];
    for (const auto& w : c.warnings) {
      const std::string name = w.substr(0, w.find(':'));
      auto it = std::find_if(kinds.begin(), kinds.end(), [&](const Kind& k) { return k.name == name; });
      if (it == kinds.end()) {
        kinds.push_back({name, 1, c.chain_id, w, i});
      } else if (it->last_chain != i) {  // a chain with several warnings of a kind counts once
        ++it->count;
        it->last_chain = i;
      }
    }
  }
  std::vector<std::string> out;
  for (const auto& k : kinds)
    out.push_back(fmt::format("{} of {} chains: {} (the numbers are chain {}'s)", k.count,
                              chains.size(), k.first_text, k.first_chain));
  return out;
}

std::vector<std::string> sampler_warnings(const RunHealth& run) {
  std::vector<std::string> out;
  for (auto line : {divergence_line(run.chains), tree_depth_line(run.chains), ebfmi_line(run.chains),
                    rhat_line(run.quantities), ess_line(run.quantities, run.chains.size())})
    if (line) out.push_back(std::move(*line));
  for (auto& line : chain_warning_lines(run.chains)) out.push_back(std::move(line));
  return out;
}

}  // namespace pemc::estimators
