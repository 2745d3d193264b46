#include "runner/mode_search_step.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/serialization/vector.hpp>
#include <spdlog/spdlog.h>

#include <map>
#include <string>

#include "config/modes.hpp"
#include "modes/mode_search.hpp"

namespace pemc::runner {
namespace {

namespace mpi = boost::mpi;

// A start's result as doubles: index, outcome, potential, gradient evaluations, then x (d entries,
// NaN when the start was not finite).
constexpr int kHeader = 4;

std::vector<double> pack(const std::vector<modes::StartResult>& results, int dim) {
  std::vector<double> out;
  out.reserve(results.size() * static_cast<std::size_t>(kHeader + dim));
  for (const auto& r : results) {
    out.push_back(r.index);
    out.push_back(static_cast<double>(r.outcome));
    out.push_back(r.potential);
    out.push_back(static_cast<double>(r.n_gradient_evals));
    for (int i = 0; i < dim; ++i)
      out.push_back(r.x.size() == dim ? r.x[i] : std::numeric_limits<double>::quiet_NaN());
  }
  return out;
}

std::vector<modes::StartResult> unpack(const std::vector<std::vector<double>>& parts, int dim) {
  std::vector<modes::StartResult> out;
  const auto per = static_cast<std::size_t>(kHeader + dim);
  for (const auto& part : parts)
    for (std::size_t at = 0; at + per <= part.size(); at += per) {
      modes::StartResult r;
      r.index = static_cast<int>(part[at]);
      r.outcome = static_cast<modes::StartResult::Outcome>(static_cast<int>(part[at + 1]));
      r.potential = part[at + 2];
      r.n_gradient_evals = static_cast<std::int64_t>(part[at + 3]);
      if (r.outcome != modes::StartResult::Outcome::kNonFinite)
        r.x = Eigen::Map<const Vector>(part.data() + at + kHeader, dim);
      out.push_back(std::move(r));
    }
  return out;
}

// Starts first .. first + count - 1, start i on rank i mod size; every rank gets every result.
modes::BatchRunner mpi_batches(const targets::Target& target, const modes::ModeSearchSettings& s,
                               mpi::communicator& world) {
  return [&target, s, &world](int first, int count) {
    std::vector<modes::StartResult> mine;
    for (int i = first; i < first + count; ++i)
      if (i % world.size() == world.rank()) mine.push_back(modes::run_start(target, s, i));
    std::vector<std::vector<double>> parts;
    mpi::all_gather(world, pack(mine, target.dim()), parts);
    return unpack(parts, target.dim());
  };
}

// Runs with the same target, search settings and seed find the same modes.
std::string search_key(const v1::RunConfig& run, const modes::ModeSearchSettings& s) {
  return run.target().SerializeAsString() + "|" + run.modes().SerializeAsString() + "|" +
         std::to_string(s.seed);
}

void log_search(const v1::RunConfig& run, const targets::Target& target,
                const modes::ModeSet& set, bool study) {
  const std::string who = study ? "run '" + run.name() + "': " : std::string();
  const auto at = [&target](const Vector& x) { return outputs_at(target, x); };
  spdlog::info("{}mode search: {}", who, modes::describe(set, target.output_names(), at));
  if (!set.complete)
    spdlog::warn("{}the mode search stopped at its budget of {} starts with a {:.0f} % chance "
                 "that another start finds a mode not seen yet: modes it missed are covered "
                 "only by the sampler's own moves, and the mode check cannot see them (raise "
                 "modes.max_starts)",
                 who, set.n_starts, 100.0 * set.unseen_probability);
  if (set.modes.empty())
    spdlog::warn("{}the mode search found no mode ({} starts: {} at degenerate optima whose Hessian "
                 "is not positive definite, {} did not converge, {} not finite): references and "
                 "bases built on the modes fall back to a variational fit (pseudo-extended's, "
                 "with a pooled warmup, to a Gaussian fitted to its warmup's draws), and the mode "
                 "check has nothing to check",
                 who, set.n_starts, set.n_degenerate, set.n_not_converged, set.n_nonfinite);
}

}  // namespace

std::vector<double> outputs_at(const targets::Target& target, const Vector& x) {
  const auto names = target.output_names();
  if (names.empty()) return {};
  std::vector<double> out(names.size());
  target.write_outputs(x, 0, out);
  return out;
}

std::vector<modes::ModeSetPtr> search_modes_of_runs(const std::vector<v1::RunConfig>& runs,
                                             const std::vector<targets::TargetPtr>& targets,
                                             mpi::communicator& world) {
  std::vector<modes::ModeSetPtr> out(runs.size());
  std::map<std::string, modes::ModeSetPtr> done;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (!config::mode_search_enabled(runs[r])) continue;
    const auto settings = config::mode_search_settings(runs[r]);
    const auto key = search_key(runs[r], settings);
    if (const auto it = done.find(key); it != done.end()) {
      out[r] = it->second;
      continue;
    }
    const auto& target = *targets[r];
    auto set = std::make_shared<const modes::ModeSet>(
        modes::search_modes(target, settings, mpi_batches(target, settings, world)));
    if (world.rank() == 0) log_search(runs[r], target, *set, runs.size() > 1);
    out[r] = done[key] = set;
  }
  return out;
}

}  // namespace pemc::runner
