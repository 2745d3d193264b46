#include "runner/run_plan.hpp"

#include <boost/mpi/collectives.hpp>
#include <spdlog/spdlog.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <new>

#include "config/created_files.hpp"
#include "config/defaults.hpp"
#include "config/factories.hpp"
#include "config/init_point.hpp"
#include "config/load.hpp"
#include "config/modes.hpp"
#include "config/multi_round.hpp"
#include "config/validate.hpp"
#include "core/error.hpp"
#include "records/no_follow.hpp"
#include "records/record_file.hpp"
#include "runner/checkpoint.hpp"
#include "runner/input_files.hpp"
#include "runner/resume_command.hpp"
#include "runner/stop_signal.hpp"

namespace pemc::runner {
namespace {

namespace mpi = boost::mpi;

// A stop signal (SIGTERM, SIGUSR1) while rank 0 is still validating: the run stops before it has
// written anything (stop_signal.hpp; the handlers are installed before MPI starts).
struct StoppedDuringStartup {
  int signal;
};

void stop_if_signalled() {
  if (const int sig = stop_signal()) throw StoppedDuringStartup{sig};
}

// A plain config: overrides, defaults, validation.
v1::RunConfig resolve_plain_run(config::LoadedConfig& loaded, const RunOptions& o) {
  config::apply_overrides(loaded, o.overrides);
  config::apply_defaults(loaded);
  config::validate(loaded);
  return loaded.config;
}

// Notes which runs of a study each --set reached; one that reaches no run is an error.
// skipped[i][k]: why --set k did not reach run i (empty: it did).
void note_set_reach(const std::vector<v1::RunConfig>& raw,
                    const std::vector<std::vector<std::string>>& skipped, const RunOptions& o,
                    AgreedPlan& a) {
  for (std::size_t k = 0; k < o.overrides.sets.size(); ++k) {
    std::string reached, missed;
    std::size_t n_reached = 0;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const std::string& why = skipped[i][k];
      if (why.empty()) {
        reached += (reached.empty() ? "'" : ", '") + raw[i].name() + "'";
        ++n_reached;
      } else {
        missed += (missed.empty() ? "'" : ", '") + raw[i].name() + "' (" + why + ")";
      }
    }
    const std::string set = "--set '" + o.overrides.sets[k] + "'";
    if (n_reached == 0)
      throw ConfigError(
          set + " reaches no run of the study: " + missed +
          "; --set never switches a sampler, target or init (edit the config instead)");
    if (missed.empty())
      a.notes.push_back("info:" + set + " applies to every run of the study (" + reached + ")");
    else
      a.notes.push_back("warn:" + set + " applies to run(s) " + reached + " only; not to " +
                        missed);
  }
}

// The study's own fields (output, checkpoint: shared by every run) are checked once, for the study,
// with the command line's overrides of them.
void validate_study_fields(const config::LoadedConfig& loaded, const RunOptions& o) {
  config::LoadedConfig shared{loaded.config, loaded.path, loaded.source};
  shared.config.clear_runs();
  config::CommandLineOverrides shared_o;
  shared_o.output = o.overrides.output;
  for (const auto& s : o.overrides.sets)
    if (s.rfind("output.", 0) == 0 || s.rfind("checkpoint.", 0) == 0) shared_o.sets.push_back(s);
  config::apply_overrides(shared, shared_o);
  config::validate(shared, config::Scope::kShared);
}

// A study: command-line overrides and defaults apply to every run; a --set into a oneof member
// (sampler.nuts.*) reaches the runs that have that member and no other (never switching a run's
// sampler or target).
std::vector<v1::RunConfig> resolve_study_runs(const config::LoadedConfig& loaded,
                                              const std::vector<config::LoadedConfig>& included,
                                              const RunOptions& o, AgreedPlan& a) {
  const auto raw = config::expand_runs(loaded.config);
  std::vector<v1::RunConfig> runs;
  std::vector<std::vector<std::string>> skipped(raw.size());
  // Entries from run_files are located in their own file.
  std::map<std::string, const config::LoadedConfig*> file_of_run;
  for (const auto& inc : included) file_of_run[inc.config.name()] = &inc;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    stop_if_signalled();
    const auto f = file_of_run.find(raw[i].name());
    const config::LoadedConfig* origin = f != file_of_run.end() ? f->second : &loaded;
    config::LoadedConfig lc{raw[i], origin->path, origin->source};
    try {
      skipped[i] = config::apply_overrides(lc, o.overrides, /*skip_oneof_mismatches=*/true);
      config::apply_defaults(lc);
      config::validate(lc, config::Scope::kRun);
    } catch (const ConfigError& e) {
      throw ConfigError("run '" + raw[i].name() + "' (runs[" + std::to_string(i) + "]): " +
                        e.what());
    }
    runs.push_back(lc.config);
  }
  note_set_reach(raw, skipped, o, a);
  validate_study_fields(loaded, o);
  return runs;
}

// Sizes the config alone does not fix (a plugin's or data file's dimension times a dense metric or
// N pseudo-samples) are known only once built: too large is a config error, not a crash.
// dim < 0: the target itself failed to build.
ConfigError out_of_memory_error(const v1::RunConfig& run, std::int64_t dim, bool study) {
  const std::string prefix = study ? "run '" + run.name() + "': " : std::string();
  if (dim < 0) {
    // The target itself: its data, not the sampler's settings.
    std::string data;
    const auto& t = run.target();
    if (t.has_horseshoe_logistic()) data = t.horseshoe_logistic().data_file();
    if (t.has_radon()) data = t.radon().data_file();
    return ConfigError(prefix + "building the " + config::target_kind_name(t) +
                       " target needs more memory than can be allocated (std::bad_alloc)" +
                       (data.empty() ? std::string("; its size is set by its own files or plugin")
                                     : "; its data file '" + data +
                                           "' is too large for the "
                                           "memory this process may use"));
  }
  return ConfigError(prefix + "building the " + config::sampler_kind_name(run.sampler()) +
                     " sampler for the " + config::target_kind_name(run.target()) +
                     " target of dimension " + std::to_string(dim) +
                     " needs more memory than can be allocated (std::bad_alloc); reduce the "
                     "dimension, the number of pseudo-samples or use a diagonal metric");
}

// Checking the config builds each run's sampler, fits included: a fit that takes a while (a
// variational or Laplace reference of a Stan model) is said, so that the wait before the run's
// banner is explained (each chain fits again; with a mode search, its modes replace stand-ins).
void note_slow_fit(const config::SamplerSetup& setup, std::chrono::steady_clock::duration took,
                   const v1::RunConfig& run, bool study, std::vector<std::string>& notes) {
  const double seconds = std::chrono::duration<double>(took).count();
  const std::string fit = setup.kernel->fit_description();
  if (seconds < 1.0 || fit.empty()) return;
  notes.push_back(fmt::format("info:{}checking the config built the sampler in {:.3g} s ({})",
                              study ? "run '" + run.name() + "': " : std::string(), seconds, fit));
}

// Building targets and samplers catches what needs the numbers (e.g. a non-SPD covariance).
// Defaults that depend on the target's dimension are filled in here, so that the recorded config
// holds the values the run uses.
void build_each_run(std::vector<v1::RunConfig>& runs, bool study, AgreedPlan& a) {
  for (auto& run : runs) {
    stop_if_signalled();
    std::int64_t dim = -1;
    try {
      auto target = config::make_target(run.target());
      dim = target->dim();
      // init's lengths need the dimension, which some targets know only once built.
      config::check_init_dimension(run.init(), target->original_dim());
      for (const auto& filled : config::apply_dimension_defaults(run, dim))
        a.notes.push_back("info:" + (study ? "run '" + run.name() + "': " : std::string()) +
                          filled);
      // Before any mode search: a sampler that builds on the modes gets a stand-in for them.
      config::SamplerContext context;
      if (config::mode_search_enabled(run))
        context.modes = std::make_shared<const modes::ModeSet>(modes::stand_in_mode_set(dim));
      const auto started = std::chrono::steady_clock::now();
      const auto setup = config::make_sampler(run.sampler(), target, nullptr, context);
      note_slow_fit(setup, std::chrono::steady_clock::now() - started, run, study, a.notes);
    } catch (const std::bad_alloc&) {
      throw out_of_memory_error(run, dim, study);
    } catch (const Error& e) {
      if (!study) throw;
      throw ConfigError("run '" + run.name() + "': " + e.what());
    }
  }
}

// The tasks this job runs: --task-range, a Slurm array's share, or all. A range holds all or none
// of the chains of a run with pooled warmup (config::task_blocks).
config::TaskRange choose_task_range(const RunOptions& o, const std::vector<v1::RunConfig>& runs) {
  const int n_tasks = static_cast<int>(config::enumerate_tasks(runs).size());
  if (!o.task_range.empty()) {
    const auto range = config::parse_task_range(o.task_range, n_tasks);
    config::check_range_keeps_blocks(range, runs, "--task-range " + o.task_range);
    return range;
  }
  if (o.array_task_size > 0) {
    const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
    if (!id) throw ConfigError("--array-task-size needs SLURM_ARRAY_TASK_ID (a job array)");
    int index = 0;
    const std::string_view text(id);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
      throw ConfigError("SLURM_ARRAY_TASK_ID '" + std::string(text) +
                        "' is not a whole number (--array-task-size takes the task's index from "
                        "it)");
    return config::array_task_range(index, o.array_task_size, config::task_blocks(runs));
  }
  return config::TaskRange{0, n_tasks};
}

// The plan: the plain run, or the study with its resolved runs.
v1::RunConfig plan_of(const config::LoadedConfig& loaded, const std::vector<v1::RunConfig>& runs,
                      bool study) {
  v1::RunConfig plan = study ? loaded.config : runs.front();
  plan.clear_runs();
  if (study) {
    // The study's output and checkpoint, with the command line's overrides.
    *plan.mutable_output() = runs.front().output();
    *plan.mutable_checkpoint() = runs.front().checkpoint();
    for (const auto& r : runs) *plan.add_runs() = r;
  }
  return plan;
}

// The names pemc-dist creates files at (config/created_files.hpp) must not hold a link (it would be
// followed) or a special file (a FIFO would block); the record file may be a device (/dev/null).
void refuse_links_at_created_files(const v1::RunConfig& plan) {
  for (const auto& f : config::created_files(plan))
    records::refuse_link_at(f.path, f.role, /*allow_devices=*/f.path == plan.output().path());
}

// One writer per output (output_lock.hpp): the locks are taken before the output or its checkpoint
// is looked at, and held until rank 0 returns, after the collector has closed the file.
void lock_outputs(const v1::RunConfig& plan, AgreedPlan& a) {
  std::vector<std::filesystem::path> paths{plan.output().path()};
  if (!plan.checkpoint().path().empty()) paths.push_back(plan.checkpoint().path());
  for (const auto& p : paths) {
    std::error_code ec;
    const auto st = std::filesystem::status(p, ec);
    if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
      continue;  // /dev/null, a pipe
    std::string warning;
    auto lock = OutputLock::acquire(p, &warning);
    if (!warning.empty()) a.notes.push_back("warn:" + warning);
    if (lock) a.locks.push_back(std::move(lock));
  }
}

// --validate: what the run would refuse or meet (an existing output, a job holding it).
void validate_outputs(const v1::RunConfig& plan, const RunOptions& o, AgreedPlan& a) {
  const std::string out = plan.output().path();
  if (const auto who = OutputLock::holder(out))
    a.warnings.push_back(out + " is in use by another pemc-dist job (" + *who +
                         "): the run would be refused while that job holds it");
  std::error_code ec;
  if (!o.resume && !o.overwrite && std::filesystem::is_regular_file(out, ec))
    a.warnings.push_back(out +
                         ": output file already exists: the run would refuse it (use --overwrite "
                         "to replace it, or --resume to continue it)");
}

// Runs whose rounds a checkpoint cannot hold (continuous tempering's bootstrap) cannot resume:
// said before the checkpoint is read, whatever it holds.
void refuse_rounds_without_checkpoints(const std::vector<v1::RunConfig>& runs,
                                       const std::filesystem::path& ckpt) {
  for (std::size_t r = 0; r < runs.size(); ++r)
    if (const auto rounds = config::make_multi_round_run(runs[r], static_cast<int>(r));
        rounds && !rounds->can_checkpoint())
      throw ConfigError(ckpt.string() + ": run '" + runs[r].name() + "' has " +
                        rounds->describe() +
                        ", which cannot be resumed from a checkpoint; start over with --overwrite");
}

// The checkpoint's pooling states of runs whose chains run in rounds (rounds_resume.hpp) fit this
// job's chains.
void check_rounds_states(const std::vector<v1::RunConfig>& runs, config::TaskRange range,
                         const v1::Checkpoint& c, const std::filesystem::path& ckpt) {
  const auto all = config::enumerate_tasks(runs);
  const std::vector<config::Task> tasks(all.begin() + range.begin, all.begin() + range.end);
  rounds_resume(runs, tasks, c, ckpt.string());
}

// The checkpoint must be of this plan, these options and this task range.
void check_checkpoint_matches(const v1::Checkpoint& c, const std::filesystem::path& ckpt,
                              const v1::RunConfig& plan, config::TaskRange range) {
  if (c.config_hash() != config_hash(plan)) {
    std::string msg = ckpt.string() +
                      ": the checkpoint was written for a different config "
                      "(or command-line options):";
    for (const auto& d : describe_plan_differences(c.plan(), hashed_plan(plan))) msg += "\n  " + d;
    msg += "\nthe checkpointed run's options were: " +
           (c.options().empty() ? std::string("none besides --output")
                                : join_words({c.options().begin(), c.options().end()})) +
           "; resume with the same config and options (and --output " +
           shell_quote(plan.output().path()) + "), or start over with --overwrite";
    throw ConfigError(msg);
  }
  if (c.task_begin() != range.begin || c.task_end() != range.end)
    throw ConfigError(ckpt.string() + ": the checkpoint covers tasks " +
                      std::to_string(c.task_begin()) + ".." + std::to_string(c.task_end() - 1) +
                      ", this run tasks " + std::to_string(range.begin) + ".." +
                      std::to_string(range.end - 1) + " (--task-range/--array-task-size)");
}

// --resume: the checkpoint to continue from (into a.resume_bytes), or none when nothing ran yet.
// The checkpoint must be of this plan and of inputs with the same content.
void agree_on_resume(const v1::RunConfig& plan, const std::vector<v1::RunConfig>& runs,
                     config::TaskRange range, const v1::InputFiles& inputs, const RunOptions& o,
                     AgreedPlan& a) {
  const auto ckpt = checkpoint_path(plan);
  std::error_code ec;
  if (std::filesystem::exists(ckpt, ec)) {
    refuse_rounds_without_checkpoints(runs, ckpt);
    auto c = read_checkpoint(ckpt);
    check_checkpoint_matches(c, ckpt, plan, range);
    check_rounds_states(runs, range, c, ckpt);
    check_input_files(c.inputs(), inputs, ckpt);
    if (!std::filesystem::exists(plan.output().path(), ec))
      throw ConfigError(ckpt.string() + ": the checkpoint's record file " + plan.output().path() +
                        " does not exist");
    // The run itself checks the record file while cutting it back; --validate reads it here.
    if (o.validate_only)
      check_record_prefix(plan.output().path(), c.record_bytes(), c.records_crc32());
    a.resume_bytes = c.SerializeAsString();
  } else if (std::filesystem::exists(plan.output().path(), ec)) {
    throw ConfigError("--resume: " + plan.output().path() + " exists but has no checkpoint (" +
                      ckpt.string() + "); use --overwrite to start over");
  }
  // No output and no checkpoint: nothing ran yet, start from the beginning.
}

// --resume: the files the config names are compared with the checkpoint's before anything is built,
// so that a changed Stan program is refused before it is compiled (agree_on_resume checks every
// input, the compiled models too, once the output is locked). A checkpoint that cannot be read
// here is left for agree_on_resume to refuse with its reason.
void check_named_inputs_first(const std::vector<v1::RunConfig>& runs) {
  const auto ckpt = checkpoint_path(runs.front());
  std::error_code ec;
  if (!std::filesystem::is_regular_file(ckpt, ec)) return;
  v1::Checkpoint c;
  try {
    c = read_checkpoint(ckpt);
  } catch (const Error&) {
    return;
  }
  check_input_files(c.inputs(), named_input_files(runs), ckpt, /*missing_is_error=*/false);
}

void agree(const RunOptions& o, AgreedPlan& a) {
  auto loaded = config::load_config(o.config_path);
  const auto included = config::include_run_files(loaded);
  const bool study = !loaded.config.runs().empty();
  std::vector<v1::RunConfig> runs;
  if (study)
    runs = resolve_study_runs(loaded, included, o, a);
  else
    runs.push_back(resolve_plain_run(loaded, o));
  if (o.resume) check_named_inputs_first(runs);
  build_each_run(runs, study, a);
  const auto range = choose_task_range(o, runs);
  const v1::RunConfig plan = plan_of(loaded, runs, study);
  a.plan_bytes = plan.SerializeAsString();
  a.task_begin = range.begin;
  a.task_end = range.end;
  if (o.resume && o.overwrite) throw ConfigError("--resume and --overwrite exclude each other");
  stop_if_signalled();
  const auto inputs = input_files_of(runs);
  a.inputs_bytes = inputs.SerializeAsString();
  std::error_code cwd_error;
  a.working_directory = std::filesystem::current_path(cwd_error).string();
  // From here on the output and its checkpoint are looked at: hold them first.
  refuse_links_at_created_files(plan);
  if (o.validate_only)
    validate_outputs(plan, o, a);
  else
    lock_outputs(plan, a);
  if (o.resume) agree_on_resume(plan, runs, range, inputs, o, a);
  stop_if_signalled();
}

// Rank 0: the notes and --validate warnings of the agreed plan.
void log_notes(const AgreedPlan& agreed) {
  for (const auto& n : agreed.notes) {
    if (n.rfind("warn:", 0) == 0)
      spdlog::warn("{}", n.substr(5));
    else
      spdlog::info("{}", n.substr(n.find(':') + 1));
  }
  for (const auto& w : agreed.warnings) std::cerr << "pemc-dist: warning: " << w << "\n";
}

}  // namespace

AgreedPlan agree_on_rank0(const RunOptions& o) {
  AgreedPlan a;
  try {
    agree(o, a);
    a.ok = true;
  } catch (const Error& e) {
    a.error = e.what();
  } catch (const StoppedDuringStartup& s) {
    a.locks.clear();
    a.exit_code = kExitCheckpointed;
    a.error = "signal " + std::to_string(s.signal) + " (" + stop_signal_name(s.signal) +
              ") received while starting up: stopped before the run wrote anything (the output "
              "and any checkpoint are as they were); run the same command again to go on";
  }
  return a;
}

std::optional<RunPlan> share_plan(mpi::communicator& world, AgreedPlan& agreed) {
  const int rank = world.rank();
  mpi::broadcast(world, agreed.ok, 0);
  if (!agreed.ok) {
    mpi::broadcast(world, agreed.exit_code, 0);
    if (rank == 0)
      std::cerr << "pemc-dist: " << (agreed.exit_code == kExitConfig ? "error: " : "")
                << agreed.error << "\n";
    return std::nullopt;
  }
  if (rank == 0) log_notes(agreed);
  mpi::broadcast(world, agreed.plan_bytes, 0);
  mpi::broadcast(world, agreed.task_begin, 0);
  mpi::broadcast(world, agreed.task_end, 0);
  mpi::broadcast(world, agreed.resume_bytes, 0);
  mpi::broadcast(world, agreed.inputs_bytes, 0);
  mpi::broadcast(world, agreed.working_directory, 0);
  RunPlan p;
  p.config.ParseFromString(agreed.plan_bytes);
  p.inputs.ParseFromString(agreed.inputs_bytes);
  p.working_directory = agreed.working_directory;
  if (!agreed.resume_bytes.empty()) {
    p.resume.emplace();
    p.resume->ParseFromString(agreed.resume_bytes);
  }
  p.runs = runs_of_plan(p.config);
  p.all_tasks = config::enumerate_tasks(p.runs);
  p.task_begin = agreed.task_begin;
  p.task_end = agreed.task_end;
  p.tasks.assign(p.all_tasks.begin() + p.task_begin, p.all_tasks.begin() + p.task_end);
  if (p.resume) {
    p.rounds_resume = rounds_resume(p.runs, p.tasks, *p.resume, checkpoint_path(p.config).string());
    drop_restarted_rounds(*p.resume, p.rounds_resume, p.runs);
  }
  return p;
}

std::vector<v1::RunConfig> runs_of_plan(const v1::RunConfig& plan) {
  if (plan.runs().empty()) return {plan};
  return {plan.runs().begin(), plan.runs().end()};
}

}  // namespace pemc::runner
