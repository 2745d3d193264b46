#include "runner/log_z_checks.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

#include "estimators/log_z_run_checks.hpp"
#include "estimators/log_z_trust.hpp"
#include "runner/chain_status.hpp"

namespace pemc::runner {
namespace {

std::map<std::string, double> to_map(const google::protobuf::Map<std::string, double>& m) {
  return {m.begin(), m.end()};
}

}  // namespace

void annotate_log_z_runs(v1::Footer& footer) {
  std::map<std::string, std::vector<int>> by_run;
  for (int i = 0; i < footer.chains_size(); ++i)
    if (status_of(footer.chains(i)) == ChainStatus::kOk) by_run[footer.chains(i).run_id()].push_back(i);
  for (const auto& [run, indices] : by_run) {
    std::vector<std::map<std::string, double>> maps;
    maps.reserve(indices.size());
    for (int i : indices) maps.push_back(to_map(footer.chains(i).estimates()));
    std::vector<estimators::RunChainLogZ> chains;
    for (std::size_t j = 0; j < indices.size(); ++j) {
      const auto& w = footer.chains(indices[j]).largest_log_weights();
      chains.push_back({&maps[j], {w.data(), static_cast<std::size_t>(w.size())}});
    }
    estimators::annotate_log_z_run(chains);
    for (std::size_t j = 0; j < indices.size(); ++j) {
      auto& out = *footer.mutable_chains(indices[j])->mutable_estimates();
      out.clear();
      for (const auto& [key, value] : maps[j]) out[key] = value;
    }
  }
}

std::vector<std::string> log_z_warnings(const v1::Footer& footer) {
  std::vector<std::string> out;
  std::set<std::string> untrusted_runs;
  for (const auto& c : footer.chains()) {
    if (status_of(c) != ChainStatus::kOk) continue;
    const auto e = to_map(c.estimates());
    std::string what;
    if (estimators::log_z_untrusted(e)) {
      what = estimators::describe_untrusted_log_z(e);
      untrusted_runs.insert(c.run_id());
    } else if (estimators::log_z_unchecked(e)) {
      what = estimators::describe_unchecked_log_z(e);
    } else {
      continue;
    }
    out.push_back(fmt::format("{} chain {} seed {}: {}", c.run_id(), c.chain_id(), c.seed(), what));
  }
  std::set<std::string> pooled_done;
  for (const auto& c : footer.chains()) {
    if (status_of(c) != ChainStatus::kOk || pooled_done.count(c.run_id())) continue;
    const auto e = to_map(c.estimates());
    const bool pooled_untrusted = e.count("pooled_log_z_untrusted") && e.at("pooled_log_z_untrusted") == 1.0;
    if (!e.count("pooled_log_z") || (!pooled_untrusted && !untrusted_runs.count(c.run_id())))
      continue;
    pooled_done.insert(c.run_id());
    out.push_back(fmt::format("{}: {}", c.run_id(), estimators::describe_pooled_log_z(e)));
  }
  return out;
}

}  // namespace pemc::runner
