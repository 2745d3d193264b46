#include "runner/run_header.hpp"

#include <unistd.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include "config/factories.hpp"
#include "config/init_point.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "runner/checkpoint.hpp"
#include "runner/mode_search_step.hpp"
#include "runner/resume_command.hpp"
#include "rng/stream.hpp"
#include "targets/lp_offset.hpp"
#include "targets/truth_record.hpp"

namespace pemc::runner {
namespace {

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The numbers every run's truth may hold together: the header stays far below a frame's limit.
constexpr std::int64_t kMaxHeaderTruthValues = 8 * targets::kMaxRecordedTruthValues;

// Each run's exact truth (targets/truth_record.hpp), computed once per distinct target; runs past
// the header's budget get a note instead.
void record_truths(const std::vector<v1::RunConfig>& runs,
                   const std::vector<targets::TargetPtr>& targets, v1::Header& h) {
  std::map<std::string, v1::TargetTruth> by_target;
  std::int64_t recorded = 0;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const std::string key = runs[r].target().SerializeAsString();
    auto it = by_target.find(key);
    if (it == by_target.end()) {
      v1::TargetTruth truth;
      try {
        truth = targets::truth_record(targets[r]->truth());
      } catch (const Error& e) {
        truth.set_note(std::string("the target's truth could not be computed: ") + e.what());
      }
      it = by_target.emplace(key, std::move(truth)).first;
    }
    auto* out = h.mutable_runs(static_cast<int>(r))->mutable_truth();
    recorded += targets::truth_record_values(it->second);
    if (recorded <= kMaxHeaderTruthValues)
      *out = it->second;
    else
      out->set_note("left out: the truths of the study's runs hold more numbers than a record "
                    "file's header keeps (" + std::to_string(kMaxHeaderTruthValues) + ")");
  }
}

// Each Stan run's lp offset (targets/lp_offset.hpp), measured once per distinct target at points
// drawn from the run's init (a fixed stream: the header does not depend on the seeds), so that
// reports export Stan's lp__. A target whose offset cannot be trusted gets none, with a warning:
// its exports keep lp__ = -potential.
void record_lp_offsets(const std::vector<v1::RunConfig>& runs,
                       const std::vector<targets::TargetPtr>& targets, v1::Header& h) {
  std::map<std::string, targets::LpOffsetMeasurement> by_target;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const std::string key = runs[r].target().SerializeAsString();
    auto it = by_target.find(key);
    if (it == by_target.end()) {
      const auto& init = runs[r].init();
      const auto m = targets::measure_lp_offset(*targets[r], [&init](int attempt, VectorRef x) {
        rng::Stream stream(0, rng::Domain::kLpOffset, 0, static_cast<std::uint64_t>(attempt));
        config::draw_initial_point(init, stream, x);
      });
      it = by_target.emplace(key, m).first;
    }
    const auto& m = it->second;
    if (m.offset) {
      h.mutable_runs(static_cast<int>(r))->set_lp_offset(*m.offset);
      spdlog::debug("run '{}': lp__ offset {:.17g} (the sampled log density minus Stan's lp__, "
                    "the same at {} points); exports write lp__ = -potential - offset",
                    runs[r].name(), *m.offset, m.values.size());
    } else if (!m.problem.empty()) {
      spdlog::warn("run '{}': no lp__ offset recorded: {}; exports keep lp__ = -potential, "
                   "which differs from Stan's lp__ by the constants of `~` statements",
                   runs[r].name(), m.problem);
    }
  }
}

}  // namespace

v1::Header make_header(const RunOptions& o, const RunPlan& plan,
                       const std::vector<targets::TargetPtr>& targets,
                       const std::vector<modes::ModeSetPtr>& modes, int n_ranks) {
  const auto& runs = plan.runs;
  v1::Header h;
  *h.mutable_config() = plan.config;
  h.set_program_version(std::string(kVersion));
  h.set_n_ranks(n_ranks);
  h.set_start_time_unix_ms(unix_ms());
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const auto setup = config::make_sampler(runs[r].sampler(), targets[r], nullptr,
                                            config::SamplerContext{modes[r], nullptr});
    auto* info = h.add_runs();
    info->set_name(runs[r].name());
    info->set_dim(setup.space->dim());
    info->set_original_dim(setup.space->original_dim());
    info->set_target_name(config::target_kind_name(runs[r].target()));
    info->set_sampler_name(config::sampler_kind_name(runs[r].sampler()));
    for (const auto& name : targets[r]->output_names()) info->add_output_names(name);
    info->set_n_test_points(targets[r]->n_test_points());
    if (const auto k = targets[r]->n_parameter_outputs()) info->set_n_parameter_outputs(*k);
    if (modes[r]) {
      const auto& target = *targets[r];
      *info->mutable_mode_search() =
          modes::to_record(*modes[r], [&target](const Vector& x) { return outputs_at(target, x); });
    }
  }
  record_truths(runs, targets, h);
  record_lp_offsets(runs, targets, h);
  h.set_dim(h.runs(0).dim());
  h.set_original_dim(h.runs(0).original_dim());
  h.set_target_name(h.runs(0).target_name());
  h.set_sampler_name(h.runs(0).sampler_name());
  h.set_config_path(o.config_path.string());
  // What the runs read and where their relative paths lead, so that a report opening one of the
  // files (export's observed_data) finds it and can tell whether it changed since.
  *h.mutable_inputs() = plan.inputs;
  h.set_working_directory(plan.working_directory);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  h.set_hostname(host);
  h.set_n_chains(static_cast<int>(plan.tasks.size()));
  h.set_task_begin(plan.task_begin);
  h.set_task_end(plan.task_end);
  h.set_n_tasks(static_cast<int>(plan.all_tasks.size()));
  return h;
}

Collector::CheckpointSetup checkpoint_setup(const RunOptions& o, const RunPlan& plan,
                                           std::vector<int> leaders, int n_ranks, int group_size,
                                           std::chrono::steady_clock::time_point started) {
  Collector::CheckpointSetup setup;
  setup.path = checkpoint_path(plan.config);
  setup.leaders = std::move(leaders);
  setup.started = started;
  auto& b = setup.base;
  b.set_format_version(kCheckpointFormatVersion);
  b.set_program_version(std::string(kVersion));
  b.set_config_hash(config_hash(plan.config));
  b.set_task_begin(plan.task_begin);
  b.set_task_end(plan.task_end);
  b.set_n_ranks(n_ranks);
  b.set_group_size(group_size);
  b.set_output_path(plan.config.output().path());
  *b.mutable_plan() = hashed_plan(plan.config);
  for (const auto& w : plan_options(o)) b.add_options(w);
  *b.mutable_inputs() = plan.inputs;
  setup.resume_command = resume_command(o, plan.config.output().path());
  return setup;
}

}  // namespace pemc::runner
