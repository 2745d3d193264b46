#include "runner/log_z_checks.hpp"

#include <fmt/format.h>

#include <map>

#include "estimators/log_z_trust.hpp"
#include "runner/chain_status.hpp"

namespace pemc::runner {
namespace {

std::map<std::string, double> to_map(const google::protobuf::Map<std::string, double>& m) {
  return {m.begin(), m.end()};
}

}  // namespace

void annotate_log_z_agreement(v1::Footer& footer) {
  std::map<std::string, std::vector<int>> by_run;
  for (int i = 0; i < footer.chains_size(); ++i)
    if (status_of(footer.chains(i)) == ChainStatus::kOk) by_run[footer.chains(i).run_id()].push_back(i);
  for (const auto& [run, indices] : by_run) {
    std::vector<std::map<std::string, double>> maps;
    maps.reserve(indices.size());
    for (int i : indices) maps.push_back(to_map(footer.chains(i).estimates()));
    std::vector<std::map<std::string, double>*> ptrs;
    for (auto& m : maps) ptrs.push_back(&m);
    estimators::annotate_log_z_agreement(ptrs);
    for (std::size_t j = 0; j < indices.size(); ++j) {
      auto& out = *footer.mutable_chains(indices[j])->mutable_estimates();
      for (const auto& [key, value] : maps[j]) out[key] = value;
    }
  }
}

std::vector<std::string> log_z_warnings(const v1::Footer& footer) {
  std::vector<std::string> out;
  for (const auto& c : footer.chains()) {
    if (status_of(c) != ChainStatus::kOk) continue;
    const auto e = to_map(c.estimates());
    if (!estimators::log_z_untrusted(e)) continue;
    out.push_back(fmt::format("{} chain {} seed {}: {}", c.run_id(), c.chain_id(), c.seed(),
                              estimators::describe_untrusted_log_z(e)));
  }
  return out;
}

}  // namespace pemc::runner
