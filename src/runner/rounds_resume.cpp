#include "runner/rounds_resume.hpp"

#include <algorithm>

#include "config/multi_round.hpp"
#include "core/error.hpp"

namespace pemc::runner {
namespace {

bool has(const std::vector<int>& ascending, int id) {
  return std::binary_search(ascending.begin(), ascending.end(), id);
}

// The restarting round's chains of run `run_id`, or nullptr.
const extended::MultiRoundRun::ResumePoint* restarting(const std::string& run_id,
                                                       const RoundsResume& resume,
                                                       const std::vector<v1::RunConfig>& runs) {
  for (const auto& [r, point] : resume)
    if (point.restarts && runs[static_cast<std::size_t>(r)].name() == run_id) return &point;
  return nullptr;
}

}  // namespace

RoundsResume rounds_resume(const std::vector<v1::RunConfig>& runs,
                           const std::vector<config::Task>& tasks, const v1::Checkpoint& checkpoint,
                           const std::string& checkpoint_name) {
  std::map<int, const v1::RoundsState*> states;
  for (const auto& s : checkpoint.rounds()) {
    if (s.run_index() < 0 || s.run_index() >= static_cast<int>(runs.size()) ||
        runs[static_cast<std::size_t>(s.run_index())].name() != s.run_id())
      throw DataError(checkpoint_name + ": holds the rounds of run " +
                      std::to_string(s.run_index()) + " '" + s.run_id() +
                      "', which is not that run of this config");
    if (!states.emplace(s.run_index(), &s).second)
      throw DataError(checkpoint_name + ": holds the rounds of run '" + s.run_id() + "' twice");
  }
  RoundsResume resume;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const int run_index = static_cast<int>(r);
    auto rounds = config::make_multi_round_run(runs[r], run_index);
    if (!rounds) {
      if (states.count(run_index))
        throw DataError(checkpoint_name + ": holds rounds for run '" + runs[r].name() +
                        "', which has none");
      continue;
    }
    if (!rounds->can_checkpoint())  // refused with the config's words before (run_plan.cpp)
      throw DataError(checkpoint_name + ": run '" + runs[r].name() + "' cannot be resumed");
    const auto it = states.find(run_index);
    if (it == states.end())
      throw ConfigError(checkpoint_name + ": holds no pooling state for run '" + runs[r].name() +
                        "' (" + rounds->describe() +
                        "): written by another pemc-dist; start over with --overwrite");
    std::vector<int> ids;
    for (const auto& t : tasks)
      if (t.run_index == run_index) ids.push_back(t.id);
    rounds->set_chains(std::move(ids));
    try {
      resume[run_index] = rounds->restore(it->second->state());
    } catch (const DataError& e) {
      throw DataError(checkpoint_name + ": run '" + runs[r].name() + "': " + e.what());
    }
  }
  return resume;
}

void drop_restarted_rounds(v1::Checkpoint& checkpoint, const RoundsResume& resume,
                           const std::vector<v1::RunConfig>& runs) {
  auto voided = [&](const std::string& run_id, int chain_id) {
    const auto* point = restarting(run_id, resume, runs);
    return point && has(point->chains, chain_id);
  };
  auto& done = *checkpoint.mutable_completed();
  done.erase(std::remove_if(done.begin(), done.end(),
                            [&](const v1::ChainSummary& s) {
                              return voided(s.run_id(), s.chain_id());
                            }),
             done.end());
  auto& running = *checkpoint.mutable_in_progress();
  running.erase(std::remove_if(running.begin(), running.end(),
                               [&](const v1::ChainCheckpoint& c) {
                                 return voided(c.run_id(), c.chain_id());
                               }),
                running.end());
}

bool written_in_restarted_round(const v1::Record& record, const RoundsResume& resume,
                                const std::vector<v1::RunConfig>& runs) {
  if (!record.has_draw()) return false;
  const auto& d = record.draw();
  if (!d.warmup()) return false;
  const auto* point = restarting(d.run_id(), resume, runs);
  return point && has(point->chains, d.chain_id()) && d.iteration() >= point->warmup_before;
}

}  // namespace pemc::runner
