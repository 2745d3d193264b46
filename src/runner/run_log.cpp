#include "runner/run_log.hpp"

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>

#include "config/factories.hpp"
#include "core/version.hpp"
#include "records/describe_model_messages.hpp"
#include "runner/checkpoint.hpp"
#include "runner/log_z_checks.hpp"
#include "runner/mode_checks.hpp"

namespace pemc::runner {
namespace {

// One line per chain: draws, acceptance, step size, divergences, gradients, time and status.
void log_chain_lines(const v1::Footer& footer) {
  for (const auto& c : footer.chains()) {
    // Target gradients; where a sampler's own evaluation costs several (pseudo-extended), also
    // its own count.
    const std::string extended =
        c.n_extended_gradient_evals() != c.n_gradient_evals()
            ? fmt::format(" ({} extended)", c.n_extended_gradient_evals())
            : std::string();
    spdlog::info("{} chain {:3d} seed {:<6d} draws {:<8d} accept {:.3f} step {:.4g} "
                 "divergent {} grad evals {}{} ({:.2f} s wall, {:.2f} s CPU) {}",
                 c.run_id(), c.chain_id(), c.seed(), c.n_draws(), c.mean_accept_stat(),
                 c.final_step_size(), c.n_divergent(), c.n_gradient_evals(), extended,
                 c.wall_seconds(), c.cpu_seconds(), c.status());
  }
}

// What the model said (ChainSummary.model_messages), for the first few chains that have any.
void log_model_messages(const v1::Footer& footer) {
  constexpr int kChainsShown = 3;
  int n_with = 0;
  for (const auto& c : footer.chains()) {
    const std::string said = records::describe_model_messages(c.model_messages());
    if (said.empty()) continue;
    if (n_with++ < kChainsShown)
      spdlog::info("{} chain {}: the model's messages: {}", c.run_id(), c.chain_id(), said);
  }
  if (n_with > kChainsShown)
    spdlog::info("{} more chains with messages of the model (pemc-report summarize shows them)",
                 n_with - kChainsShown);
}

}  // namespace

void setup_logging(const RunOptions& o, int rank) {
  auto logger = spdlog::stderr_color_mt("pemc");
  logger->set_pattern("[%H:%M:%S.%e] [rank " + std::to_string(rank) + "] [%^%l%$] %v");
  auto level = spdlog::level::from_str(o.log_level);
  if (rank != 0 && !o.log_all_ranks && level < spdlog::level::warn) level = spdlog::level::warn;
  logger->set_level(level);
  spdlog::set_default_logger(logger);
}

void print_validated(const RunOptions& o, const RunPlan& plan) {
  std::cout << "pemc-dist: " << o.config_path.string() << ": OK (";
  if (plan.runs.size() == 1)
    std::cout << config::target_kind_name(plan.runs.front().target()) << " target, "
              << config::sampler_kind_name(plan.runs.front().sampler()) << " sampler, ";
  else
    std::cout << "study of " << plan.runs.size() << " runs, ";
  std::cout << plan.all_tasks.size() << " task(s)";
  if (plan.tasks.size() != plan.all_tasks.size())
    std::cout << ", running tasks " << plan.task_begin << ".." << plan.task_end - 1;
  std::cout << ")\n";
}

void log_start(const RunPlan& plan, const parallel::Layout& layout, int n_ranks,
               std::int64_t first_run_dim) {
  const auto& r = plan.resume;
  if (r)
    spdlog::info("resuming from checkpoint {} ({}): {} finished and {} running chain(s), "
                 "records cut back to {} bytes", r->sequence(),
                 checkpoint_path(plan.config).string(), r->completed_size(),
                 r->in_progress_size(), r->record_bytes());
  for (const auto& [run, point] : plan.rounds_resume) {
    const auto& name = plan.runs[static_cast<std::size_t>(run)].name();
    if (point.restarts)
      spdlog::info("{}: round {} of the pooled warmup runs again from its start for {} chain(s): "
                   "their warmup draws from iteration {} on are dropped from the file and "
                   "written again",
                   name, point.round + 1, point.chains.size(), point.warmup_before);
    else
      spdlog::info("{}: resumes in its final round (sampling after {} pooled warmup iterations)",
                   name, point.warmup_before);
  }
  // The run itself, not the plan: a study of one run keeps its sampler (and maybe its lengths) there.
  const auto& c = plan.runs.front();
  if (plan.runs.size() == 1)
    spdlog::info("pemc {} | {} ranks (collector rank {}, {} workers) | {} chains of {} on {} "
                 "(dim {}) | {} warmup + {} iterations",
                 kVersion, n_ranks, layout.collector, layout.workers.size(), plan.tasks.size(),
                 config::sampler_kind_name(c.sampler()), config::target_kind_name(c.target()),
                 first_run_dim, c.warmup(), c.iterations());
  else
    spdlog::info("pemc {} | {} ranks (collector rank {}, {} workers) | study of {} runs, "
                 "tasks {}..{} of {}",
                 kVersion, n_ranks, layout.collector, layout.workers.size(), plan.runs.size(),
                 plan.task_begin, plan.task_end - 1, plan.all_tasks.size());
}

void log_footer(const v1::Footer& footer, const std::filesystem::path& path) {
  log_chain_lines(footer);
  log_model_messages(footer);
  // The run-level warnings (Footer.warnings: divergences, tree depth, E-BFMI, R-hat and bulk ESS
  // or why they are unchecked, the chains' own warnings), each problem once per run; the chains'
  // warnings are not logged one by one.
  for (const auto& w : footer.warnings()) spdlog::warn("{}", w);
  // Log Z estimates that cannot be trusted (estimators/log_z_trust.hpp), after the chain lines.
  for (const auto& w : log_z_warnings(footer)) spdlog::warn("{}", w);
  // Runs whose mode check failed (modes/mode_occupancy.hpp).
  for (const auto& w : mode_check_warnings(footer)) spdlog::warn("{}", w);
  std::int64_t draws = 0, evals = 0;
  for (const auto& c : footer.chains()) {
    draws += c.n_draws();
    evals += c.n_gradient_evals();
  }
  spdlog::info("done: {} chains, {} draws, {} target gradient evaluations in {:.2f} s wall "
               "({:.2f} s CPU in chains); status {}",
               footer.chains_size(), draws, evals, footer.wall_seconds(), footer.cpu_seconds(),
               footer.status());
  spdlog::info("output: {}", std::filesystem::absolute(path).string());
}

int log_stopped(const v1::Checkpoint& c, const std::string& checkpoint_error,
                const std::string& on_disk, const std::filesystem::path& checkpoint_file,
                const std::string& resume_hint) {
  if (!checkpoint_error.empty() || c.sequence() == 0) {
    spdlog::error("stopped without a checkpoint: {}; on disk: {}",
                  checkpoint_error.empty() ? "no checkpoint was written" : checkpoint_error,
                  on_disk);
    return kExitInternal;
  }
  std::string at;
  for (const auto& k : c.in_progress())
    at += (at.empty() ? "" : ", ") + std::string("chain ") + std::to_string(k.chain_id()) +
          " at iteration " + std::to_string(k.next_iteration());
  spdlog::info(
      "checkpointed ({} finished chain(s){}{}) to {} (records up to byte {}); resume "
      "with: {}",
      c.completed_size(), at.empty() ? "" : "; ", at, checkpoint_file.string(), c.record_bytes(),
      resume_hint);
  return kExitCheckpointed;
}

void at_coordinator_level(const RunOptions& o, const std::function<void()>& log) {
  const auto level = spdlog::default_logger()->level();
  spdlog::default_logger()->set_level(spdlog::level::from_str(o.log_level));
  log();
  spdlog::default_logger()->set_level(level);
}

}  // namespace pemc::runner
