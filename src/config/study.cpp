#include "config/study.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <string>

#include "config/limits.hpp"
#include "config/overrides.hpp"
#include "core/error.hpp"
#include "warmup/pooled_warmup_rounds.hpp"

namespace pemc::config {

namespace {

// Before any entry is read: a study of more runs than kMaxRuns is refused whole.
void check_run_count(const v1::RunConfig& study) {
  const std::int64_t n = std::int64_t{study.runs_size()} + study.run_files_size();
  if (n > kMaxRuns)
    throw ConfigError("runs: the study has " + std::to_string(n) +
                      " runs (runs and run_files), more than the limit " +
                      std::to_string(kMaxRuns) +
                      "; split it into several studies (one job each, or one Slurm array)");
}

}  // namespace

std::vector<LoadedConfig> include_run_files(LoadedConfig& study) {
  check_run_count(study.config);
  std::vector<LoadedConfig> out;
  const auto dir = study.path.parent_path();
  for (int i = 0; i < study.config.run_files_size(); ++i) {
    const std::string where = "run_files[" + std::to_string(i) + "]";
    const std::filesystem::path given = study.config.run_files(i);
    const auto path = given.is_relative() ? dir / given : given;
    LoadedConfig run;
    try {
      run = load_config(path);
    } catch (const ConfigError& e) {
      throw ConfigError(where + " (" + study.source.where(where) + "): " + e.what());
    }
    if (!run.config.runs().empty() || run.config.run_files_size() > 0)
      throw ConfigError(where + " (" + study.source.where(where) + "): '" + path.string() +
                        "' is itself a study; run_files must be single-run configs");
    v1::RunConfig entry = run.config;
    entry.clear_output();
    entry.clear_logging();
    if (entry.name().empty()) entry.set_name(path.stem().string());
    run.config = entry;
    *study.config.add_runs() = std::move(entry);
    out.push_back(std::move(run));
  }
  study.config.clear_run_files();
  return out;
}

std::vector<v1::RunConfig> expand_runs(const v1::RunConfig& config) {
  if (config.runs().empty()) return {config};
  check_run_count(config);
  v1::RunConfig base = config;
  base.clear_runs();
  std::vector<v1::RunConfig> out;
  std::set<std::string> names;
  const auto* refl = v1::RunConfig::GetReflection();
  for (int i = 0; i < config.runs_size(); ++i) {
    const auto& entry = config.runs(i);
    const std::string where = "runs[" + std::to_string(i) + "]";
    if (entry.name().empty()) throw ConfigError(where + ".name: every study entry needs a name");
    if (!names.insert(entry.name()).second)
      throw ConfigError(where + ".name: duplicate run name '" + entry.name() + "'");
    if (entry.has_output() || entry.has_logging())
      throw ConfigError(where + ": output and logging belong to the study, not to one run");
    if (!entry.runs().empty()) throw ConfigError(where + ".runs: studies do not nest");
    // Replace, do not merge: a repeated field (e.g. seeds) or a message in an entry is the whole
    // setting, not an addition to the study's.
    v1::RunConfig merged = base;
    std::vector<const google::protobuf::FieldDescriptor*> fields;
    refl->ListFields(entry, &fields);
    for (const auto* f : fields) refl->ClearField(&merged, f);
    merged.MergeFrom(entry);
    out.push_back(std::move(merged));
  }
  return out;
}

std::vector<Task> enumerate_tasks(const std::vector<v1::RunConfig>& runs) {
  std::int64_t total = 0;
  for (const auto& run : runs) {
    const std::int64_t seeds =
        run.seeds().values_size() > 0 ? run.seeds().values_size() : run.seeds().count();
    total += std::max<std::int64_t>(seeds, 0) * std::max(1, run.chains_per_seed());
  }
  if (total > kMaxTotalChains)
    throw ConfigError("the study has " + std::to_string(total) +
                      " tasks (runs x seeds x chains_per_seed), more than the limit " +
                      std::to_string(kMaxTotalChains) + " chains of one job; split it");
  std::vector<Task> tasks;
  tasks.reserve(static_cast<std::size_t>(total));
  for (int r = 0; r < static_cast<int>(runs.size()); ++r) {
    const auto seeds = expand_seeds(runs[r]);
    const int per_seed = std::max(1, runs[r].chains_per_seed());
    for (auto seed : seeds)
      for (int j = 0; j < per_seed; ++j)
        tasks.push_back(Task{static_cast<int>(tasks.size()), r, seed, j});
  }
  return tasks;
}

namespace {

std::optional<int> parse_int(std::string_view s) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

TaskRange parse_task_range(std::string_view text, int n_tasks) {
  const auto bad = [&](const std::string& why) {
    return ConfigError("--task-range '" + std::string(text) + "': " + why + " (the study has " +
                       std::to_string(n_tasks) + " tasks, numbered 0.." +
                       std::to_string(n_tasks - 1) + ")");
  };
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) throw bad("expected A:B");
  TaskRange r{0, n_tasks};
  const auto a = text.substr(0, colon), b = text.substr(colon + 1);
  if (!a.empty()) {
    const auto v = parse_int(a);
    if (!v) throw bad("'" + std::string(a) + "' is not a whole number");
    r.begin = *v;
  }
  if (!b.empty()) {
    const auto v = parse_int(b);
    if (!v) throw bad("'" + std::string(b) + "' is not a whole number");
    r.end = *v;
  }
  if (r.begin < 0 || r.end > n_tasks || r.begin >= r.end) throw bad("empty or out of range");
  return r;
}

std::vector<TaskRange> task_blocks(const std::vector<v1::RunConfig>& runs) {
  std::vector<TaskRange> blocks;
  const auto tasks = enumerate_tasks(runs);
  for (std::size_t i = 0; i < tasks.size();) {
    std::size_t end = i + 1;
    if (warmup::has_pooled_warmup(runs[static_cast<std::size_t>(tasks[i].run_index)]))
      while (end < tasks.size() && tasks[end].run_index == tasks[i].run_index) ++end;
    blocks.push_back({static_cast<int>(i), static_cast<int>(end)});
    i = end;
  }
  return blocks;
}

void check_range_keeps_blocks(TaskRange range, const std::vector<v1::RunConfig>& runs,
                              const std::string& option) {
  const auto tasks = enumerate_tasks(runs);
  for (const auto& b : task_blocks(runs)) {
    const int begin = std::max(b.begin, range.begin), end = std::min(b.end, range.end);
    if (begin >= end || (begin == b.begin && end == b.end)) continue;
    const auto& run = runs[static_cast<std::size_t>(tasks[static_cast<std::size_t>(b.begin)].run_index)];
    throw ConfigError(
        option + " holds " + std::to_string(end - begin) + " of the " +
        std::to_string(b.end - b.begin) + " chains of run '" + run.name() + "' (tasks " +
        std::to_string(b.begin) + ".." + std::to_string(b.end - 1) +
        "), which pool their warmup (" + warmup::pooled_field(run) +
        "; the default for NUTS, HMC and pseudo-extended runs of 2 or more chains): a job "
        "holding only some of them cannot draw what the whole study draws. Hold all of them or "
        "none (e.g. --task-range " +
        std::to_string(b.begin) + ":" + std::to_string(b.end) +
        "), or set adaptation { pooled: false } in that run");
  }
}

TaskRange array_task_range(int array_index, int blocks_per_array_task,
                           const std::vector<TaskRange>& blocks) {
  if (blocks_per_array_task < 1)
    throw ConfigError("--array-task-size must be >= 1, got " +
                      std::to_string(blocks_per_array_task));
  const long n_blocks = static_cast<long>(blocks.size());
  const long first = static_cast<long>(array_index) * blocks_per_array_task;
  if (array_index < 0 || first >= n_blocks)
    throw ConfigError(
        "SLURM_ARRAY_TASK_ID " + std::to_string(array_index) + " with " +
        std::to_string(blocks_per_array_task) + " tasks per array task is past the " +
        std::to_string(n_blocks) + " tasks of the study (a run whose chains pool their warmup " +
        "counts as one task; the array needs " +
        std::to_string((n_blocks + blocks_per_array_task - 1) / blocks_per_array_task) +
        " array tasks)");
  const long last = std::min(n_blocks, first + blocks_per_array_task) - 1;
  return TaskRange{blocks[static_cast<std::size_t>(first)].begin,
                   blocks[static_cast<std::size_t>(last)].end};
}

}  // namespace pemc::config
