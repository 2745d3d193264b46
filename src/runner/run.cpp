#include "runner/run.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <deque>
#include <set>
#include <cstring>
#include <memory>
#include <iostream>
#include <map>
#include <new>
#include <optional>

#include "config/defaults.hpp"
#include "config/factories.hpp"
#include "config/init_point.hpp"
#include "config/load.hpp"
#include "config/study.hpp"
#include "config/validate.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "extended/continuous_tempering_bootstrap.hpp"
#include "parallel/layout.hpp"
#include "parallel/messenger.hpp"
#include "parallel/mpi_group_comm.hpp"
#include "records/record_file.hpp"
#include "runner/chain_driver.hpp"
#include "runner/checkpoint.hpp"
#include "runner/collector.hpp"
#include "runner/log_z_checks.hpp"
#include "runner/output_lock.hpp"
#include "runner/progress_model.hpp"

namespace pemc::runner {
namespace {

using Clock = std::chrono::steady_clock;
namespace mpi = boost::mpi;

// Checkpoint protocol messages (tags next to parallel::Tag's).
enum CheckpointTag : int {
  kTagCkptRequest = 21,  // any rank -> coordinator: please stop with a checkpoint (signal, testing)
  kTagCkptBegin = 22,    // coordinator -> group leaders: two int64 (epoch, stop)
  kTagCkptPart = 23,     // group leader -> collector: CheckpointPart
  kTagCkptWritten = 24,  // collector -> coordinator: CheckpointPart {epoch, error}
};

// Continuous-tempering bootstrap rounds (src/extended/continuous_tempering_bootstrap.hpp).
enum BootstrapTag : int {
  kTagBootstrapReport = 31,  // group leader -> coordinator: BootstrapChainReport of one round
  kTagBootstrapBase = 32,    // coordinator -> every worker: BootstrapBroadcast (next round's base)
};
// take_next_task(): nothing to hand out now, but a bootstrap round still to finish will add items.
constexpr int kWaitForRound = -2;

// Runs with bootstrap rounds cannot be resumed: a checkpoint holds neither the round index nor the
// refitted bases (and chains of one round are pooled before the next starts).
void refuse_bootstrap_resume(const std::vector<v1::RunConfig>& runs, const std::filesystem::path& ckpt) {
  for (const auto& run : runs)
    if (extended::bootstrap_settings(run))
      throw ConfigError(ckpt.string() + ": run '" + run.name() + "' has continuous tempering "
                        "bootstrap rounds (sampler.continuous_tempering.bootstrap), which cannot be "
                        "resumed from a checkpoint; start over with --overwrite");
}

// Set by SIGTERM/SIGUSR1; the event loops notice it between iterations.
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

void setup_logging(const RunOptions& o, int rank) {
  auto logger = spdlog::stderr_color_mt("pemc");
  logger->set_pattern("[%H:%M:%S.%e] [rank " + std::to_string(rank) + "] [%^%l%$] %v");
  auto level = spdlog::level::from_str(o.log_level);
  if (rank != 0 && !o.log_all_ranks && level < spdlog::level::warn) level = spdlog::level::warn;
  logger->set_level(level);
  spdlog::set_default_logger(logger);
}

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A word for the shell: quoted unless it is made of safe characters only.
std::string shell_quote(const std::string& s) {
  const bool safe = !s.empty() && s.find_first_not_of(
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789_./=:,+-@%") == std::string::npos;
  if (safe) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The options that shaped the plan besides the config and --output, as given on the command line
// (a checkpoint stores them; the resume hint repeats them).
std::vector<std::string> plan_options(const RunOptions& o) {
  std::vector<std::string> out;
  if (o.overrides.iterations)
    out.insert(out.end(), {"--iterations", std::to_string(*o.overrides.iterations)});
  if (o.overrides.warmup) out.insert(out.end(), {"--warmup", std::to_string(*o.overrides.warmup)});
  if (o.overrides.seeds) out.insert(out.end(), {"--seeds", std::to_string(*o.overrides.seeds)});
  for (const auto& s : o.overrides.sets) out.insert(out.end(), {"--set", s});
  if (!o.task_range.empty()) out.insert(out.end(), {"--task-range", o.task_range});
  if (o.array_task_size > 0)
    out.insert(out.end(), {"--array-task-size", std::to_string(o.array_task_size)});
  return out;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + shell_quote(w);
  return s;
}

// The command that continues the run (any number of ranks that gives the same group size).
std::string resume_command(const RunOptions& o, const std::string& output) {
  const auto options = plan_options(o);
  return "pemc-dist " + shell_quote(o.config_path.string()) + " --output " + shell_quote(output) +
         (options.empty() ? "" : " " + join_words(options)) + " --resume";
}

// Rank 0 loads, overrides, defaults and validates; the result (or the error) goes to every rank.
// The plan is a RunConfig whose `runs` are the fully resolved runs (one for a plain config).
struct Agreed {
  bool ok = false;
  std::string error;
  std::string plan_bytes;
  std::string resume_bytes;  // the checkpoint to continue from (empty: a fresh run)
  int task_begin = 0;
  int task_end = 0;
  // Rank 0 only: what to log once the run is agreed (which runs of a study an override reaches),
  // warnings of --validate, and the locks on the output (and checkpoint), held until the run ends.
  std::vector<std::string> notes;
  std::vector<std::string> warnings;
  std::vector<std::unique_ptr<OutputLock>> locks;
};

// One writer per output (output_lock.hpp): the locks are taken before the output or its checkpoint
// is looked at, and held until rank 0 returns, after the collector has closed the file.
void lock_outputs(const v1::RunConfig& plan, Agreed& a) {
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
void validate_outputs(const v1::RunConfig& plan, const RunOptions& o, Agreed& a) {
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

Agreed load_on_rank0(const RunOptions& o) {
  Agreed a;
  try {
    auto loaded = config::load_config(o.config_path);
    const auto included = config::include_run_files(loaded);
    const bool study = !loaded.config.runs().empty();
    std::vector<v1::RunConfig> runs;
    if (!study) {
      config::apply_overrides(loaded, o.overrides);
      config::apply_defaults(loaded);
      config::validate(loaded);
      runs.push_back(loaded.config);
    } else {
      // Command-line overrides and defaults apply to every run of the study; a --set into a oneof
      // member (sampler.nuts.*) reaches the runs that have that member and no other (never
      // switching a run's sampler or target); one that reaches no run is an error.
      const auto raw = config::expand_runs(loaded.config);
      std::vector<std::vector<std::string>> skipped(raw.size());
      for (std::size_t i = 0; i < raw.size(); ++i) {
        // Entries from run_files are located in their own file.
        const config::LoadedConfig* origin = &loaded;
        for (const auto& inc : included)
          if (inc.config.name() == raw[i].name()) origin = &inc;
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
      // The study's own fields (output, checkpoint: shared by every run) are checked once, for the
      // study, with the command line's overrides of them.
      config::LoadedConfig shared{loaded.config, loaded.path, loaded.source};
      shared.config.clear_runs();
      config::CommandLineOverrides shared_o;
      shared_o.output = o.overrides.output;
      for (const auto& s : o.overrides.sets)
        if (s.rfind("output.", 0) == 0 || s.rfind("checkpoint.", 0) == 0)
          shared_o.sets.push_back(s);
      config::apply_overrides(shared, shared_o);
      config::validate(shared, config::Scope::kShared);
    }
    // Building targets and samplers catches what needs the numbers (e.g. a non-SPD covariance).
    // Defaults that depend on the target's dimension are filled in here, so that the recorded
    // config holds the values the run uses.
    for (auto& run : runs) {
      std::int64_t dim = -1;
      try {
        auto target = config::make_target(run.target());
        dim = target->dim();
        // init's lengths need the dimension, which some targets know only once built.
        config::check_init_dimension(run.init(), target->original_dim());
        for (const auto& filled : config::apply_dimension_defaults(run, dim))
          a.notes.push_back("info:" + (study ? "run '" + run.name() + "': " : std::string()) +
                            filled);
        (void)config::make_sampler(run.sampler(), target);
      } catch (const std::bad_alloc&) {
        // Sizes the config alone does not fix (a plugin's or data file's dimension times a dense
        // metric or N pseudo-samples) are known only here: too large is a config error, not a crash.
        const std::string prefix = study ? "run '" + run.name() + "': " : std::string();
        if (dim < 0) {
          // The target itself: its data, not the sampler's settings.
          std::string data;
          const auto& t = run.target();
          if (t.has_horseshoe_logistic()) data = t.horseshoe_logistic().data_file();
          if (t.has_radon()) data = t.radon().data_file();
          throw ConfigError(prefix + "building the " + config::target_kind_name(t) +
                            " target needs more memory than can be allocated (std::bad_alloc)" +
                            (data.empty()
                                 ? std::string("; its size is set by its own files or plugin")
                                 : "; its data file '" + data +
                                       "' is too large for the "
                                       "memory this process may use"));
        }
        throw ConfigError(prefix + "building the " + config::sampler_kind_name(run.sampler()) +
                          " sampler for the " + config::target_kind_name(run.target()) +
                          " target of dimension " + std::to_string(dim) +
                          " needs more memory than can be allocated (std::bad_alloc); reduce the "
                          "dimension, the number of pseudo-samples or use a diagonal metric");
      } catch (const Error& e) {
        if (!study) throw;
        throw ConfigError("run '" + run.name() + "': " + e.what());
      }
    }
    const int n_tasks = static_cast<int>(config::enumerate_tasks(runs).size());
    config::TaskRange range{0, n_tasks};
    if (!o.task_range.empty()) {
      range = config::parse_task_range(o.task_range, n_tasks);
    } else if (o.array_task_size > 0) {
      const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
      if (!id) throw ConfigError("--array-task-size needs SLURM_ARRAY_TASK_ID (a job array)");
      range = config::array_task_range(std::atoi(id), o.array_task_size, n_tasks);
    }
    v1::RunConfig plan = study ? loaded.config : runs.front();
    plan.clear_runs();
    if (study) {
      *plan.mutable_output() = runs.front().output();  // the study's output, overrides applied
      *plan.mutable_checkpoint() = runs.front().checkpoint();  // likewise
      for (auto& r : runs) *plan.add_runs() = r;
    }
    a.plan_bytes = plan.SerializeAsString();
    a.task_begin = range.begin;
    a.task_end = range.end;
    if (o.resume && o.overwrite) throw ConfigError("--resume and --overwrite exclude each other");
    // From here on the output and its checkpoint are looked at: hold them first.
    if (o.validate_only)
      validate_outputs(plan, o, a);
    else
      lock_outputs(plan, a);
    if (o.resume) {
      const auto ckpt = checkpoint_path(plan);
      std::error_code ec;
      if (std::filesystem::exists(ckpt, ec)) {
        refuse_bootstrap_resume(runs, ckpt);
        auto c = read_checkpoint(ckpt);
        if (c.config_hash() != config_hash(plan)) {
          std::string msg = ckpt.string() +
                            ": the checkpoint was written for a different config "
                            "(or command-line options):";
          for (const auto& d : describe_plan_differences(c.plan(), hashed_plan(plan)))
            msg += "\n  " + d;
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
        if (!std::filesystem::exists(plan.output().path(), ec))
          throw ConfigError(ckpt.string() + ": the checkpoint's record file " +
                            plan.output().path() + " does not exist");
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
    a.ok = true;
  } catch (const Error& e) {
    a.error = e.what();
  }
  return a;
}

std::vector<v1::RunConfig> runs_of_plan(const v1::RunConfig& plan) {
  if (plan.runs().empty()) return {plan};
  return {plan.runs().begin(), plan.runs().end()};
}

// The per-rank event loop shared by the coordinator, collector and worker roles.
class RankLoop {
 public:
  struct CheckpointOptions {
    const v1::Checkpoint* resume = nullptr;  // continue from here
    double every_seconds = 0.0;
    std::int64_t every_iterations = 0;
    std::int64_t stop_after_iterations = 0;
  };

  RankLoop(mpi::communicator world, parallel::Layout layout, std::vector<v1::RunConfig> runs,
           std::vector<config::Task> tasks, Collector* collector, CheckpointOptions ck)
      : ck_(ck),
        messenger_(world),
        layout_(std::move(layout)),
        runs_(std::move(runs)),
        tasks_(std::move(tasks)),
        targets_(runs_.size()),
        collector_(collector),
        progress_(static_cast<std::size_t>(layout_.n_ranks), 0),
        finished_(static_cast<std::size_t>(layout_.n_ranks), false),
        rank_progress_(static_cast<std::size_t>(layout_.n_ranks), WorkerProgress(runs_.size())),
        my_progress_(runs_.size()),
        run_chain_length_(runs_.size(), 0),
        run_remaining_(runs_.size(), 0) {
    rank_ = messenger_.rank();
    for (const auto& t : tasks_) {
      const auto& run = runs_[static_cast<std::size_t>(t.run_index)];
      const std::int64_t length =
          run.warmup() + run.iterations() + extended::bootstrap_extra_iterations(run);
      total_iterations_ += length;
      run_chain_length_[static_cast<std::size_t>(t.run_index)] = length;
      run_remaining_[static_cast<std::size_t>(t.run_index)] += length;
    }
    init_bootstrap();
    progress_interval_ = runs_.front().logging().progress_interval_seconds();
    start_ = last_log_ = last_progress_send_ = last_checkpoint_ = Clock::now();
    // The task farm hands out what the checkpoint did not finish; running chains continue.
    std::set<int> finished;
    if (ck_.resume) {
      // Progress counts what is left: finished chains and the checkpointed part of running ones.
      std::map<int, std::int64_t> length;
      std::map<int, std::size_t> run_of;
      for (const auto& t : tasks_) {
        const auto& run = runs_[static_cast<std::size_t>(t.run_index)];
        length[t.id] = run.warmup() + run.iterations();
        run_of[t.id] = static_cast<std::size_t>(t.run_index);
      }
      for (const auto& c : ck_.resume->completed()) {
        finished.insert(c.chain_id());
        total_iterations_ -= length[c.chain_id()];
        run_remaining_[run_of[c.chain_id()]] -= length[c.chain_id()];
      }
      for (const auto& c : ck_.resume->in_progress()) {
        resume_of_[c.chain_id()] = &c;
        total_iterations_ -= c.next_iteration();
        run_remaining_[run_of[c.chain_id()]] -= c.next_iteration();
      }
      last_written_seq_ = ck_.resume->sequence();
      last_written_bytes_ = ck_.resume->record_bytes();
    }
    for (int i = 0; i < n_chains(); ++i)
      if (!finished.count(tasks_[static_cast<std::size_t>(i)].id)) todo_.push_back(i);
    for (const auto& g : layout_.groups) leaders_.push_back(g.front());
  }

  const std::vector<int>& leaders() const { return leaders_; }

  int n_chains() const { return static_cast<int>(tasks_.size()); }

  void adopt_target(int run_index, targets::TargetPtr t) {
    targets_[static_cast<std::size_t>(run_index)] = std::move(t);
  }

  // This rank's target for a run, built on first use (each rank reads its own data files).
  targets::TargetPtr target_of(int run_index) {
    auto& t = targets_[static_cast<std::size_t>(run_index)];
    if (!t) t = config::make_target(runs_[static_cast<std::size_t>(run_index)].target());
    return t;
  }

  // Worker role: ask the coordinator for tasks until none is left (a task farm: short and long
  // tasks share the ranks without idle time); a group's leader asks and tells its members.
  void run_worker(parallel::GroupCommPtr group) {
    const bool leader = layout_.is_group_leader(rank_);
    v1::Footer mine;
    mine_ = &mine;
    // mine_ must not outlive `mine` (serve_until_done() reads it after this returns or throws).
    struct ForgetMine {
      const v1::Footer*& p;
      ~ForgetMine() { p = nullptr; }
    } forget_mine{mine_};
    std::string batch;
    std::int64_t batch_records = 0;
    std::int64_t flush_every = 64;
    auto ship = [&] {
      if (batch_records == 0) return;
      deliver(layout_.collector, parallel::kTagRecords, std::move(batch));
      batch.clear();
      batch_records = 0;
    };
    ChainCallbacks cb;
    if (leader) {
      cb.emit = [&](const v1::Record& r) {
        records::append_frame(r, batch);
        if (++batch_records >= flush_every || batch.size() >= (1u << 20)) ship();
      };
    }
    bool shipped_on_signal = false;
    cb.tick = [&] {
      if (leader) {
        ++local_iterations_;  // a group's chain counts once, on its leader
        ++my_progress_.iterations[current_run_];
        // A stop signal may be the job's end (mpirun's SIGTERM after another rank crashed, shortly
        // followed by SIGKILL): send the records this chain holds now, not at its next batch.
        if (g_stop_signal != 0 && !shipped_on_signal) {
          shipped_on_signal = true;
          ship();
        }
      }
      pump_if_due();
    };
    if (leader) {
      cb.checkpoint_due = [&](std::int64_t t) {
        if (ck_.stop_after_iterations > 0 && t == ck_.stop_after_iterations && !stop_requested_) {
          // Testing: the same path as a signal, at a known iteration of this chain.
          request_stop();
          while (pending_epoch_ < 0) service_wait();
        }
        if (pending_epoch_ < 0) return CheckpointAction::kNone;
        return pending_stop_ ? CheckpointAction::kSaveAndStop : CheckpointAction::kSave;
      };
      cb.on_checkpoint = [&](const v1::ChainCheckpoint& ck) {
        ship();
        v1::CheckpointPart part;
        if (ck.kernel().kind().empty())
          part.set_error("the " + current_sampler_ + " sampler cannot save a checkpoint");
        else
          *part.add_in_progress() = ck;
        answer_epoch(part, mine);
      };
    }
    try {
      work_loop(leader, group, cb, mine, ship, flush_every);
    } catch (...) {
      // This rank fails (the job is aborted next): send what its chain holds to the collector and
      // give the sends a moment to complete, so that the file keeps them.
      if (leader) {
        try {
          ship();
          const auto deadline = Clock::now() + std::chrono::seconds(3);
          while (messenger_.in_flight() > 0 && Clock::now() < deadline) {
            if (auto m = messenger_.poll(); m && is_collector()) handle(std::move(*m));
            usleep(100);
          }
        } catch (...) {
        }
      }
      throw;
    }
    done_sent_ = true;
    deliver(layout_.collector, parallel::kTagDone, mine.SerializeAsString());
    send_progress(/*finished=*/true);
  }

 private:
  template <typename Ship>
  void work_loop(bool leader, parallel::GroupCommPtr group, ChainCallbacks& cb, v1::Footer& mine,
                 Ship& ship, std::int64_t& flush_every) {
    while (layout_.group_of(rank_) >= 0) {
      double next = !leader ? -1.0 : stopped_ ? -1.0 : static_cast<double>(request_task());
      if (group) group->broadcast(std::span<double>(&next, 1), 0);
      if (next < 0) break;
      // An item is a task index plus n_chains() x its bootstrap round (0 for other runs).
      const int item = static_cast<int>(next);
      const int round = item / n_chains();
      const auto& task = tasks_[static_cast<std::size_t>(item % n_chains())];
      const auto& run = runs_[static_cast<std::size_t>(task.run_index)];
      flush_every = std::max(1, run.output().flush_every());
      spdlog::debug("task {} (run {}, seed {}) starting", task.id, run.name(), task.seed);
      const auto resume_it = resume_of_.find(task.id);
      const v1::ChainCheckpoint* resume = resume_it == resume_of_.end() ? nullptr : resume_it->second;
      current_sampler_ = config::sampler_kind_name(run.sampler());
      in_chain_ = true;
      start_run_timing(static_cast<std::size_t>(task.run_index));
      auto summary = is_bootstrap_run(task.run_index)
                         ? run_bootstrap_item(task, round, cb, group)
                         : run_chain(run, target_of(task.run_index), ChainTask{task.id, task.seed},
                                     cb, group, resume);
      account_run_time(Clock::now());
      in_chain_ = false;
      const ChainStatus status = status_of(summary);
      if (status == ChainStatus::kRoundDone) continue;  // reported to the coordinator
      summary.set_rank(rank_);
      summary.set_run_id(run.name());
      if (!leader) {
        if (status == ChainStatus::kCheckpointed) break;
        continue;
      }
      if (status == ChainStatus::kCheckpointed) {
        ship();
        break;  // stopped at the checkpoint: not finished, not reported
      }
      if (status != ChainStatus::kOk)
        spdlog::error("run {} chain {} (seed {}) {}", run.name(), task.id, task.seed,
                      summary.status());
      for (const auto& w : summary.warnings())
        spdlog::warn("run {} chain {} (seed {}): {}", run.name(), task.id, task.seed, w);
      *mine.add_chains() = summary;
      ship();
      // An epoch that arrived during the chain's last iteration: answer between chains.
      if (pending_epoch_ >= 0) answer_epoch(v1::CheckpointPart(), mine);
    }
  }

 public:
  // Serve messages until every role this rank plays is complete.
  void serve_until_done() {
    while (!roles_done()) {
      if (!handle_pending()) {
        log_progress_if_due();
        check_checkpoint_triggers();
        usleep(200);
      }
    }
    messenger_.wait_all();
  }

  bool stop_requested() const { return stop_requested_; }

 private:
  // ---- checkpoints ----
  // Coordinator: starts an epoch when a stop was asked for or a period is due (one at a time).
  void check_checkpoint_triggers() {
    if (g_stop_signal != 0 && !signal_seen_) {
      signal_seen_ = true;
      // Say what happens and what is on disk now: the checkpoint is not written yet (it needs every
      // chain's answer), and a job killed meanwhile (mpirun's SIGKILL after a crash) leaves only
      // what is on disk at this point plus the records that reach the file before the kill.
      const int sig = g_stop_signal;
      std::string line = fmt::format("signal {} ({}) received: ", sig,
                                     sig == SIGTERM   ? "SIGTERM"
                                     : sig == SIGUSR1 ? "SIGUSR1"
                                                      : "?");
      if (is_coordinator())
        line +=
            "stopping; the checkpoint needs every chain's state at its next iteration ('checkpoint "
            "N "
            "written' follows once it is on disk)";
      else if (is_collector())
        line += "writing the records the chains send";
      else
        line += "sending this rank's records, stopping at the next iteration";
      if (is_collector())
        line += "; on disk now: " + collector_->describe_on_disk(/*final=*/false);
      else if (is_coordinator())
        line += last_written_seq_ > 0
                    ? fmt::format("; on disk now: checkpoint {} (records up to byte {})",
                                  last_written_seq_, last_written_bytes_)
                    : std::string("; on disk now: no checkpoint yet");
      if (is_coordinator() || is_collector())
        spdlog::warn("{}", line);
      else
        spdlog::info("{}", line);
      request_stop();
    }
    if (!is_coordinator() || epoch_active_ || stopping_ || coordinator_idle()) return;
    if (stop_requested_) {
      start_epoch(true);
      return;
    }
    const auto now = Clock::now();
    bool due = ck_.every_seconds > 0 &&
               std::chrono::duration<double>(now - last_checkpoint_).count() >= ck_.every_seconds;
    if (ck_.every_iterations > 0) {
      std::int64_t done = 0;
      for (auto p : progress_) done += p;
      due = due || done - done_at_checkpoint_ >=
                       ck_.every_iterations * static_cast<std::int64_t>(leaders_.size());
    }
    if (due) start_epoch(false);
  }

  // Every worker finished: no chain is left to checkpoint.
  bool coordinator_idle() const {
    for (int w : layout_.workers)
      if (!finished_[static_cast<std::size_t>(w)]) return false;
    return true;
  }

  void request_stop() {
    if (stop_requested_) return;
    stop_requested_ = true;
    if (!is_coordinator()) deliver(layout_.coordinator, kTagCkptRequest, std::string());
  }

  void start_epoch(bool stop) {
    epoch_active_ = true;
    stopping_ = stopping_ || stop;
    if (stopping_) serve_bootstrap_waiting();  // ranks waiting for a bootstrap round: none left
    ++epoch_;
    std::string bytes(2 * sizeof(std::int64_t), '\0');
    const std::int64_t v[2] = {epoch_, stop ? 1 : 0};
    std::memcpy(bytes.data(), v, sizeof v);
    spdlog::debug("checkpoint epoch {} ({})", epoch_, stop ? "stop" : "periodic");
    for (int l : leaders_) deliver(l, kTagCkptBegin, bytes);
  }

  // Leader: its answer to the pending epoch; `part` holds its running chain's state, if any.
  void answer_epoch(v1::CheckpointPart part, const v1::Footer& mine) {
    part.set_epoch(pending_epoch_);
    for (const auto& c : mine.chains()) *part.add_completed() = c;
    if (pending_stop_) stopped_ = true;
    pending_epoch_ = -1;
    deliver(layout_.collector, kTagCkptPart, part.SerializeAsString());
  }

  // Waits for a message (used while a chain holds at --stop-after-iterations).
  void service_wait() {
    if (!handle_pending()) {
      check_checkpoint_triggers();
      usleep(100);
    }
  }

  bool is_collector() const { return rank_ == layout_.collector; }
  bool is_coordinator() const { return rank_ == layout_.coordinator; }

  bool roles_done() const {
    if (is_collector() && collector_->workers_done() < static_cast<int>(layout_.workers.size()))
      return false;
    if (is_coordinator())
      for (int w : layout_.workers)
        if (!finished_[static_cast<std::size_t>(w)]) return false;
    return true;
  }

  // Sends to `dest`, or hands the message to this rank's own role directly.
  // Record batches are flow-controlled (synchronous sends, see parallel/messenger.hpp).
  void deliver(int dest, int tag, std::string bytes) {
    if (dest == rank_) {
      handle(parallel::Message{rank_, tag, std::move(bytes)});
    } else {
      messenger_.send(dest, tag, std::move(bytes),
                      tag == parallel::kTagRecords ? parallel::SendMode::kSynchronous
                                                   : parallel::SendMode::kStandard);
    }
  }

  // The coordinator hands out tasks in order (those a checkpoint left); -1 = none left, or stopping.
  int take_next_task() {
    if (stopping_) return -1;
    if (next_task_ >= static_cast<int>(todo_.size())) return take_bootstrap_item();
    return todo_[static_cast<std::size_t>(next_task_++)];
  }

  void report_written() {
    v1::CheckpointPart w;
    w.set_epoch(collector_->last_checkpoint().sequence());
    w.set_error(collector_->last_checkpoint_error());
    w.set_record_bytes(collector_->last_checkpoint().record_bytes());
    w.set_n_records(collector_->last_checkpoint().n_records());
    deliver(layout_.coordinator, kTagCkptWritten, w.SerializeAsString());
  }

  int request_task() {
    if (rank_ == layout_.coordinator) {
      int task;
      while ((task = take_next_task()) == kWaitForRound) service_wait();
      return task;
    }
    messenger_.send(layout_.coordinator, parallel::kTagTaskRequest, std::string());
    while (true) {
      auto m = messenger_.poll();
      if (!m) {
        usleep(100);
        continue;
      }
      if (m->tag == parallel::kTagTaskAssign) {
        int task = -1;
        std::memcpy(&task, m->bytes.data(), sizeof task);
        return task;
      }
      handle(std::move(*m));
    }
  }

  void send_progress(bool finished) {
    my_progress_.finished = finished;
    deliver(layout_.coordinator, parallel::kTagProgress, my_progress_.encode());
    last_progress_send_ = Clock::now();
  }

  // The time a worker's leader spends in each run's chains (progress_model.hpp), charged to the
  // running chain's run at each pump and when the chain ends: no clock read per iteration.
  void start_run_timing(std::size_t run_index) {
    current_run_ = run_index;
    run_time_charged_ = Clock::now();
  }
  void account_run_time(Clock::time_point now) {
    if (!in_chain_ || !layout_.is_group_leader(rank_)) return;
    my_progress_.seconds[current_run_] +=
        std::chrono::duration<double>(now - run_time_charged_).count();
    run_time_charged_ = now;
  }

  void pump_if_due() {
    const auto now = Clock::now();
    if (now - last_pump_ < std::chrono::milliseconds(5)) return;
    last_pump_ = now;
    account_run_time(now);
    // Bounded: a collector that is also a worker must get back to its own chain and to the
    // checkpoint triggers even while record batches keep arriving.
    for (int i = 0; i < kMaxMessagesPerPump && handle_pending(); ++i) {
    }
    check_checkpoint_triggers();
    if (!is_coordinator() && now - last_progress_send_ > std::chrono::seconds(1))
      send_progress(false);
    if (is_coordinator()) {
      progress_[static_cast<std::size_t>(rank_)] = local_iterations_;
      log_progress_if_due();
    }
  }

  bool handle_pending() {
    auto m = messenger_.poll();
    if (!m) return false;
    handle(std::move(*m));
    return true;
  }

  void handle(parallel::Message m) {
    switch (m.tag) {
      case parallel::kTagRecords:
        collector_->on_records(m.source, m.bytes);
        break;
      case parallel::kTagDone: {
        v1::Footer part;
        if (!part.ParseFromString(m.bytes))
          throw IoError("collector: malformed done message from rank " + std::to_string(m.source));
        if (collector_->on_worker_done(m.source, part)) report_written();
        break;
      }
      case kTagCkptRequest:
        if (!stop_requested_) spdlog::warn("rank {} asks to stop with a checkpoint", m.source);
        stop_requested_ = true;
        break;
      case kTagCkptBegin: {
        std::int64_t v[2];
        std::memcpy(v, m.bytes.data(), sizeof v);
        if (done_sent_ || stopped_ || !layout_.is_group_leader(rank_)) break;  // nothing to save
        pending_epoch_ = v[0];
        pending_stop_ = v[1] != 0;
        if (!in_chain_) answer_epoch(v1::CheckpointPart(), mine_ ? *mine_ : v1::Footer());
        break;
      }
      case kTagCkptPart: {
        v1::CheckpointPart part;
        if (!part.ParseFromString(m.bytes))
          throw IoError("collector: malformed checkpoint part from rank " + std::to_string(m.source));
        if (collector_->on_checkpoint_part(m.source, part)) report_written();
        break;
      }
      case kTagCkptWritten: {
        v1::CheckpointPart w;
        w.ParseFromString(m.bytes);
        epoch_active_ = false;
        last_checkpoint_ = Clock::now();
        std::int64_t done = 0;
        for (auto p : progress_) done += p;
        done_at_checkpoint_ = done;
        if (w.error().empty()) {
          last_written_seq_ = w.epoch();
          last_written_bytes_ = w.record_bytes();
          spdlog::info("checkpoint {} written ({} records, up to byte {})", w.epoch(),
                       w.n_records(), w.record_bytes());
        } else {
          spdlog::error("checkpoint not written: {}{}", w.error(),
                        last_written_seq_ > 0
                            ? fmt::format(" (checkpoint {} stays on disk)", last_written_seq_)
                            : std::string(" (no checkpoint on disk)"));
        }
        break;
      }
      case parallel::kTagTaskRequest: {
        const int task = take_next_task();
        if (task == kWaitForRound) {
          bootstrap_waiting_.push_back(m.source);  // answered when the round completes
          break;
        }
        std::string bytes(sizeof task, '\0');
        std::memcpy(bytes.data(), &task, sizeof task);
        deliver(m.source, parallel::kTagTaskAssign, std::move(bytes));
        break;
      }
      case parallel::kTagProgress: {
        auto p = WorkerProgress::decode(m.bytes, runs_.size());
        const auto source = static_cast<std::size_t>(m.source);
        progress_[source] = p.total_iterations();
        finished_[source] = p.finished;
        rank_progress_[source] = std::move(p);
        break;
      }
      case kTagBootstrapReport:
        on_bootstrap_report(m.bytes);
        break;
      case kTagBootstrapBase: {
        auto b = extended::BootstrapBroadcast::decode(m.bytes);
        const auto key = std::make_pair(b.run_index, b.round);
        bootstrap_bases_[key] = std::move(b);
        break;
      }
      default:
        throw IoError("unexpected message tag " + std::to_string(m.tag) + " from rank " +
                      std::to_string(m.source));
    }
  }

  void log_progress_if_due() {
    if (!is_coordinator()) return;
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - last_log_).count() < progress_interval_) return;
    last_log_ = now;
    std::int64_t done = 0;
    for (auto p : progress_) done += p;
    const double secs = std::chrono::duration<double>(now - start_).count();
    const double rate = done / std::max(secs, 1e-9);
    const auto work = run_work();
    const double eta = eta_seconds(work, static_cast<int>(leaders_.size()));
    for (std::size_t r = 0; r < work.size(); ++r)
      spdlog::debug("progress of run {}: {} iterations done in {:.2f} chain-seconds, {} left",
                    runs_[r].name(), work[r].done_iterations, work[r].done_seconds,
                    work[r].remaining);
    spdlog::info("progress {:5.1f}% ({}/{} iterations), {:.0f} it/s, ETA {:.0f} s",
                 100.0 * done / std::max<std::int64_t>(1, total_iterations_), done,
                 total_iterations_, rate, eta);
  }

  // Coordinator: every run's work for eta_seconds, from the workers' last reports (its own
  // progress when the coordinator also runs chains).
  std::vector<RunWork> run_work() const {
    std::vector<RunWork> work(runs_.size());
    for (std::size_t r = 0; r < runs_.size(); ++r) {
      work[r].chain_iterations = run_chain_length_[r];
      for (int rank = 0; rank < layout_.n_ranks; ++rank) {
        const auto& p = rank == rank_ ? my_progress_ : rank_progress_[static_cast<std::size_t>(rank)];
        work[r].done_iterations += p.iterations[r];
        work[r].done_seconds += p.seconds[r];
      }
      work[r].remaining = run_remaining_[r] - work[r].done_iterations;
    }
    return work;
  }

  // ---- continuous-tempering bootstrap rounds (src/extended/continuous_tempering_bootstrap.hpp) --
  // Every round of every chain of a bootstrap run is an item of the task farm (task index +
  // n_chains() x round). Round 0 items are the ordinary tasks; the coordinator adds a run's items
  // of round k + 1 once every live chain reported round k, after merging their accumulators in
  // ascending global chain id, refitting the base to the pooled estimates, logging and recording
  // them, and sending the new base to every worker. Workers asking meanwhile wait for an answer.

  void init_bootstrap() {
    std::map<int, std::vector<int>> chains;
    for (std::size_t i = 0; i < tasks_.size(); ++i) {
      const auto& t = tasks_[i];
      if (!is_bootstrap_run(t.run_index)) continue;
      chains[t.run_index].push_back(t.id);
      bootstrap_task_of_[t.id] = static_cast<int>(i);
    }
    for (auto& [r, ids] : chains) {
      const auto& run = runs_[static_cast<std::size_t>(r)];
      const auto s = *extended::bootstrap_settings(run);
      bootstrap_.emplace(r, extended::BootstrapRounds(r, s, std::move(ids),
                                                      run.sampler().continuous_tempering().base()));
    }
  }

  bool is_bootstrap_run(int run_index) const {
    return extended::bootstrap_settings(runs_[static_cast<std::size_t>(run_index)]).has_value();
  }

  // Coordinator: an item of a later bootstrap round, kWaitForRound while a round is still running,
  // -1 when nothing is left.
  int take_bootstrap_item() {
    if (!bootstrap_ready_.empty()) {
      const int item = bootstrap_ready_.front();
      bootstrap_ready_.pop_front();
      return item;
    }
    for (const auto& [r, b] : bootstrap_)
      if (b.round() < b.settings().rounds && !b.live_chains().empty()) return kWaitForRound;
    return -1;
  }

  // Coordinator: answers the ranks waiting for an item, as far as there are items (or none left).
  void serve_bootstrap_waiting() {
    while (!bootstrap_waiting_.empty()) {
      const int task = take_next_task();
      if (task == kWaitForRound) return;
      std::string bytes(sizeof task, '\0');
      std::memcpy(bytes.data(), &task, sizeof task);
      deliver(bootstrap_waiting_.front(), parallel::kTagTaskAssign, std::move(bytes));
      bootstrap_waiting_.pop_front();
    }
  }

  // Coordinator: a chain finished a bootstrap round.
  void on_bootstrap_report(const std::string& bytes) {
    auto report = extended::BootstrapChainReport::decode(bytes);
    const int chain = report.chain_id;
    const auto at = bootstrap_task_of_.find(chain);
    if (at == bootstrap_task_of_.end())
      throw IoError("bootstrap report of chain " + std::to_string(chain) + ", not a bootstrap chain");
    const int run_index = tasks_[static_cast<std::size_t>(at->second)].run_index;
    const auto& run = runs_[static_cast<std::size_t>(run_index)];
    auto& rounds = bootstrap_.at(run_index);
    if (!report.ok())
      spdlog::warn("{}: chain {} failed in bootstrap round {}; left out from now on: {}", run.name(),
                   chain, report.round + 1, report.status);
    const auto result = rounds.on_report(std::move(report));
    if (!result) return;
    const double secs = std::chrono::duration<double>(Clock::now() - start_).count();
    // The round, its refit and the choice of the next base (the refit, or an earlier round's base
    // when the refit's round did worse: extended/continuous_tempering_base_choice.hpp).
    const std::string line = run.name() + ": " + extended::describe(*result, rounds.settings());
    if (!result->chosen_base)
      spdlog::error("{}", line);
    else if (!result->choice.warning.empty() || !result->choice.use_refit)
      spdlog::warn("{}", line);
    else
      spdlog::info("{}", line);
    for (Eigen::Index i = 0; i < result->mean.size(); ++i)
      spdlog::debug("{}: bootstrap round {}: E[x{}] = {:.6g} ± {:.3g}, Var = {:.6g} ± {:.3g}",
                    run.name(), result->round + 1, i, result->mean[i], result->mean_se[i],
                    result->variance[i], result->variance_se[i]);
    std::string frames;
    records::append_frame(extended::bootstrap_snapshot(*result, run.name(), rounds.settings(), secs),
                          frames);
    deliver(layout_.collector, parallel::kTagRecords, std::move(frames));
    const std::string base = rounds.broadcast(*result).encode();
    for (int w : layout_.workers) deliver(w, kTagBootstrapBase, base);
    for (int id : rounds.live_chains())
      bootstrap_ready_.push_back(bootstrap_task_of_.at(id) + n_chains() * rounds.round());
    serve_bootstrap_waiting();
  }

  // Worker: round `round` of a bootstrap run's chain. A bootstrap round's draws go into the
  // chain's accumulator (not to the records) and the leader reports it to the coordinator; the
  // final round (round == rounds) is the chain's recorded run with the last refitted base.
  // Returns the chain's final summary (its final round, or the failure that ended it), or one with
  // status ChainStatus::kRoundDone after a bootstrap round that finished.
  v1::ChainSummary run_bootstrap_item(const config::Task& task, int round, const ChainCallbacks& cb,
                                      parallel::GroupCommPtr group) {
    const auto& run = runs_[static_cast<std::size_t>(task.run_index)];
    const auto settings = *extended::bootstrap_settings(run);
    const extended::BootstrapBroadcast* b = nullptr;
    if (round > 0) {
      const auto key = std::make_pair(task.run_index, round);
      while (!bootstrap_bases_.count(key)) service_wait();  // sent before the item; normally here
      b = &bootstrap_bases_.at(key);
    }
    v1::ChainSummary prior;  // this chain's bootstrap totals before this round
    if (b)
      if (const auto it = b->totals.find(task.id); it != b->totals.end()) prior = it->second;
    auto failed = [&](const std::string& why, const v1::ChainSummary* this_round) {
      v1::ChainSummary s;
      s.set_chain_id(task.id);
      s.set_seed(task.seed);
      s.set_status(why);
      if (this_round) {
        s.set_n_gradient_evals(this_round->n_gradient_evals());
        s.set_n_extended_gradient_evals(this_round->n_extended_gradient_evals());
        s.set_wall_seconds(this_round->wall_seconds());
        s.set_cpu_seconds(this_round->cpu_seconds());
      }
      extended::add_bootstrap_totals(s, prior, settings);
      return s;
    };
    if (b && !b->base)
      return failed(fmt::format("failed: bootstrap refit after round {} of {}: {}", round,
                                settings.rounds, b->error), nullptr);
    // A checkpoint holds neither the round nor the refitted base: such a chain's checkpoint
    // fails (the runner's message names the sampler below), and --resume refuses these runs.
    current_sampler_ = "continuous_tempering (with bootstrap rounds)";
    ChainCallbacks round_cb = cb;
    if (cb.on_checkpoint)
      round_cb.on_checkpoint = [orig = cb.on_checkpoint](const v1::ChainCheckpoint& ck) {
        v1::ChainCheckpoint unusable = ck;
        unusable.mutable_kernel()->Clear();
        orig(unusable);
      };
    const auto config = extended::bootstrap_round_config(run, round, b ? &*b->base : nullptr);
    const auto target = target_of(task.run_index);
    if (round == settings.rounds) {
      auto summary = run_chain(config, target, ChainTask{task.id, task.seed}, round_cb, group);
      if (status_of(summary) != ChainStatus::kCheckpointed)
        extended::add_bootstrap_totals(summary, prior, settings);
      return summary;
    }
    const bool leader = layout_.is_group_leader(rank_);
    extended::BootstrapChainReport report;
    report.chain_id = task.id;
    report.round = round;
    if (leader)
      round_cb.emit = [&report](const v1::Record& r) {
        if (r.has_draw() && !r.draw().warmup())
          report.log_zeta = extended::add_ct_draw(report.acc, r.draw());
      };
    else
      round_cb.emit = nullptr;
    auto summary = run_chain(config, target,
                             ChainTask{task.id, extended::bootstrap_round_seed(task.seed, round)},
                             round_cb, group);
    if (status_of(summary) == ChainStatus::kCheckpointed) return summary;
    if (leader) {
      report.status = summary.status();
      const auto se = summary.estimates().find("log_z_se");  // the same draws as report.acc
      if (se != summary.estimates().end()) report.log_z_se = se->second;
      const auto batches = summary.estimates().find("log_z_batches");
      if (batches != summary.estimates().end())
        report.log_z_batches = static_cast<std::int64_t>(batches->second);
      report.gradient_evals = summary.n_gradient_evals();
      report.extended_gradient_evals = summary.n_extended_gradient_evals();
      report.wall_seconds = summary.wall_seconds();
      report.cpu_seconds = summary.cpu_seconds();
      deliver(layout_.coordinator, kTagBootstrapReport, report.encode());
    }
    if (status_of(summary) == ChainStatus::kOk) {
      set_status(summary, ChainStatus::kRoundDone);
      return summary;
    }
    return failed(fmt::format("failed in bootstrap round {} of {}: {}", round + 1, settings.rounds,
                              summary.status()), &summary);
  }

  std::map<int, extended::BootstrapRounds> bootstrap_;  // coordinator: by run index
  std::map<int, int> bootstrap_task_of_;                 // chain id -> task index (bootstrap runs)
  std::deque<int> bootstrap_ready_;                      // coordinator: items of later rounds
  std::deque<int> bootstrap_waiting_;                    // coordinator: ranks waiting for an item
  std::map<std::pair<int, int>, extended::BootstrapBroadcast> bootstrap_bases_;  // (run, round)

  CheckpointOptions ck_;
  std::map<int, const v1::ChainCheckpoint*> resume_of_;  // chain id -> its saved state
  std::vector<int> todo_;                                // task indices to hand out
  std::vector<int> leaders_;
  // Coordinator.
  static constexpr int kMaxMessagesPerPump = 64;
  bool signal_seen_ = false;
  std::int64_t last_written_seq_ = 0, last_written_bytes_ = 0;  // the newest checkpoint on disk
  bool stop_requested_ = false, stopping_ = false, epoch_active_ = false;
  std::int64_t epoch_ = 0, done_at_checkpoint_ = 0;
  Clock::time_point last_checkpoint_;
  // Leader.
  std::int64_t pending_epoch_ = -1;
  bool pending_stop_ = false, stopped_ = false, in_chain_ = false, done_sent_ = false;
  const v1::Footer* mine_ = nullptr;
  std::string current_sampler_;
  parallel::Messenger messenger_;
  parallel::Layout layout_;
  std::vector<v1::RunConfig> runs_;
  std::vector<config::Task> tasks_;
  std::vector<targets::TargetPtr> targets_;
  Collector* collector_;
  int rank_ = 0;
  int next_task_ = 0;
  std::int64_t total_iterations_ = 0;
  std::int64_t local_iterations_ = 0;
  double progress_interval_ = 5.0;
  std::vector<std::int64_t> progress_;
  std::vector<bool> finished_;
  std::vector<WorkerProgress> rank_progress_;  // coordinator: each rank's last report
  WorkerProgress my_progress_;                 // this rank's chains, per run
  std::size_t current_run_ = 0;                // the run of the chain this rank is running
  Clock::time_point run_time_charged_;         // my_progress_.seconds holds the time up to here
  std::vector<std::int64_t> run_chain_length_;  // per run: one chain's iterations
  std::vector<std::int64_t> run_remaining_;     // per run: iterations left when this session began
  Clock::time_point start_, last_log_, last_pump_{}, last_progress_send_;
};

void log_footer(const v1::Footer& footer, const std::filesystem::path& path) {
  std::int64_t draws = 0, evals = 0;
  for (const auto& c : footer.chains()) {
    draws += c.n_draws();
    evals += c.n_gradient_evals();
    // Target gradients; where a sampler's own evaluation costs several (pseudo-extended), also
    // its own count.
    const std::string extended =
        c.n_extended_gradient_evals() != c.n_gradient_evals()
            ? fmt::format(" ({} extended)", c.n_extended_gradient_evals())
            : std::string();
    spdlog::info("{} chain {:3d} seed {:<6d} draws {:<8d} accept {:.3f} step {:.4g} "
                 "divergent {} grad evals {}{} ({:.2f} s wall, {:.2f} s CPU) {}",
                 c.run_id(), c.chain_id(), c.seed(), c.n_draws(), c.mean_accept_stat(), c.final_step_size(),
                 c.n_divergent(), c.n_gradient_evals(), extended, c.wall_seconds(), c.cpu_seconds(),
                 c.status());
  }
  // Chains that finished with warnings (ChainSummary.warnings), once per run at the end, so that
  // the last lines of the log say it.
  std::map<std::string, std::pair<int, int>> warned;  // run -> (chains with warnings, chains)
  std::map<std::string, const v1::ChainSummary*> first_warned;
  for (const auto& c : footer.chains()) {
    auto& [n_warned, n] = warned[c.run_id()];
    ++n;
    if (c.warnings_size() == 0) continue;
    if (n_warned++ == 0) first_warned[c.run_id()] = &c;
  }
  for (const auto& [run, counts] : warned) {
    if (counts.first == 0) continue;
    const auto& c = *first_warned.at(run);
    spdlog::warn("run {}: {} of {} chains finished with warnings; chain {} (seed {}): {}",
                 run.empty() ? "(unnamed)" : run, counts.first, counts.second, c.chain_id(),
                 c.seed(), c.warnings(0));
  }
  // Log Z estimates that cannot be trusted (estimators/log_z_trust.hpp), after the chain lines.
  for (const auto& w : log_z_warnings(footer)) spdlog::warn("{}", w);
  spdlog::info("done: {} chains, {} draws, {} target gradient evaluations in {:.2f} s wall "
               "({:.2f} s CPU in chains); status {}",
               footer.chains_size(), draws, evals, footer.wall_seconds(), footer.cpu_seconds(),
               footer.status());
  spdlog::info("output: {}", std::filesystem::absolute(path).string());
}

int run_ranks(const RunOptions& o, mpi::communicator& world) {
  const int rank = world.rank();
  const auto wall_start = Clock::now();

  Agreed agreed;
  if (rank == 0) agreed = load_on_rank0(o);
  mpi::broadcast(world, agreed.ok, 0);
  if (!agreed.ok) {
    if (rank == 0) std::cerr << "pemc-dist: error: " << agreed.error << "\n";
    return kExitConfig;
  }
  if (rank == 0) {
    for (const auto& n : agreed.notes) {
      if (n.rfind("warn:", 0) == 0)
        spdlog::warn("{}", n.substr(5));
      else
        spdlog::info("{}", n.substr(n.find(':') + 1));
    }
    for (const auto& w : agreed.warnings) std::cerr << "pemc-dist: warning: " << w << "\n";
  }
  mpi::broadcast(world, agreed.plan_bytes, 0);
  mpi::broadcast(world, agreed.task_begin, 0);
  mpi::broadcast(world, agreed.task_end, 0);
  mpi::broadcast(world, agreed.resume_bytes, 0);
  v1::RunConfig plan;
  plan.ParseFromString(agreed.plan_bytes);
  std::optional<v1::Checkpoint> resume;
  if (!agreed.resume_bytes.empty()) {
    resume.emplace();
    resume->ParseFromString(agreed.resume_bytes);
  }
  const auto runs = runs_of_plan(plan);
  const auto all_tasks = config::enumerate_tasks(runs);
  const std::vector<config::Task> tasks(all_tasks.begin() + agreed.task_begin,
                                        all_tasks.begin() + agreed.task_end);
  if (o.validate_only) {
    if (rank == 0) {
      std::cout << "pemc-dist: " << o.config_path.string() << ": OK (";
      if (runs.size() == 1)
        std::cout << config::target_kind_name(plan.target()) << " target, "
                  << config::sampler_kind_name(plan.sampler()) << " sampler, ";
      else
        std::cout << "study of " << runs.size() << " runs, ";
      std::cout << all_tasks.size() << " task(s)";
      if (tasks.size() != all_tasks.size())
        std::cout << ", running tasks " << agreed.task_begin << ".." << agreed.task_end - 1;
      std::cout << ")\n";
    }
    return kExitOk;
  }

  // Chains spanning several ranks: one group size for the job (the largest any run asks for).
  int requested_group = 1;
  for (const auto& run : runs)
    requested_group = std::max(requested_group, config::ranks_per_chain(run.sampler()));
  const auto layout = parallel::make_layout(world.size(), requested_group);
  const int group_size = static_cast<int>(layout.groups.front().size());
  if (resume) {
    // Independent chains can move to any rank; a chain spread over a group continues only on a
    // group of the same size (its state is split and ordered by the group's members).
    for (const auto& c : resume->in_progress()) {
      if (c.group_size() == group_size) continue;
      if (rank == 0)
        std::cerr << "pemc-dist: error: cannot resume: chain " << c.chain_id() << " of the checkpoint "
                  << "ran on " << c.group_size() << " rank(s) per chain, but " << world.size()
                  << " ranks give groups of " << group_size << " (ranks_per_chain " << requested_group
                  << "); resume with a number of ranks that gives " << c.group_size()
                  << " worker(s) per chain, e.g. the checkpointed run's " << resume->n_ranks() << "\n";
      return kExitConfig;
    }
  }
  // The ranks of one chain get their own communicator (every rank takes part in the split).
  const int my_group = layout.group_of(rank);
  MPI_Comm group_raw = MPI_COMM_NULL;
  MPI_Comm_split(static_cast<MPI_Comm>(world), my_group >= 0 ? my_group : MPI_UNDEFINED, rank,
                 &group_raw);
  parallel::GroupCommPtr group;
  if (group_raw != MPI_COMM_NULL) {
    mpi::communicator group_comm(group_raw, mpi::comm_take_ownership);
    if (group_comm.size() > 1) group = std::make_shared<parallel::MpiGroupComm>(group_comm);
  }
  if (rank == 0 && requested_group > 1) {
    const int used = static_cast<int>(layout.groups.front().size());
    const int idle = static_cast<int>(layout.workers.size() - layout.groups.size() * used);
    if (used < requested_group)
      spdlog::warn("ranks_per_chain = {} but only {} worker rank(s): each chain runs on {} "
                   "(draws are identical; only the speed differs)", requested_group, used, used);
    if (idle > 0)
      spdlog::warn("{} worker rank(s) idle: {} workers do not divide into groups of {}", idle,
                   layout.workers.size(), used);
  }

  // Every rank builds the targets it needs from the agreed plan; the collector opens the output.
  // A failure anywhere is reported before any work starts.
  std::string local_error;
  std::unique_ptr<Collector> collector;
  std::vector<targets::TargetPtr> setup_targets(runs.size());
  try {
    for (std::size_t r = 0; r < runs.size(); ++r)
      setup_targets[r] = config::make_target(runs[r].target());
    if (rank == layout.collector) {
      if (resume) {
        collector =
            std::make_unique<Collector>(plan.output().path(), *resume, checkpoint_path(plan));
      } else {
        collector = std::make_unique<Collector>(plan.output().path(), o.overwrite);
        // A checkpoint left by an earlier run of this output no longer describes the file.
        std::error_code ec;
        std::filesystem::remove(checkpoint_path(plan), ec);
      }
    }
  } catch (const Error& e) {
    local_error = e.what();
  }
  std::vector<std::string> errors;
  mpi::all_gather(world, local_error, errors);
  for (std::size_t r = 0; r < errors.size(); ++r) {
    if (errors[r].empty()) continue;
    if (rank == 0) std::cerr << "pemc-dist: error (rank " << r << "): " << errors[r] << "\n";
    return kExitConfig;
  }

  RankLoop::CheckpointOptions ck;
  ck.resume = resume ? &*resume : nullptr;
  ck.every_seconds = plan.checkpoint().every_seconds();
  ck.every_iterations = plan.checkpoint().every_iterations();
  ck.stop_after_iterations = o.stop_after_iterations;
  RankLoop loop(world, layout, runs, tasks, collector.get(), ck);
  if (collector) {
    Collector::CheckpointSetup setup;
    setup.path = checkpoint_path(plan);
    setup.leaders = loop.leaders();
    setup.started = wall_start;
    auto& b = setup.base;
    b.set_format_version(kCheckpointFormatVersion);
    b.set_program_version(std::string(kVersion));
    b.set_config_hash(config_hash(plan));
    b.set_task_begin(agreed.task_begin);
    b.set_task_end(agreed.task_end);
    b.set_n_ranks(world.size());
    b.set_group_size(group_size);
    b.set_output_path(plan.output().path());
    *b.mutable_plan() = hashed_plan(plan);
    for (const auto& w : plan_options(o)) b.add_options(w);
    setup.resume_command = resume_command(o, plan.output().path());
    collector->set_checkpointing(std::move(setup));
  }
  for (std::size_t r = 0; r < runs.size(); ++r) loop.adopt_target(static_cast<int>(r), setup_targets[r]);
  if (collector && !resume) {
    v1::Header h;
    *h.mutable_config() = plan;
    h.set_program_version(std::string(kVersion));
    h.set_n_ranks(world.size());
    h.set_start_time_unix_ms(unix_ms());
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const auto setup = config::make_sampler(runs[r].sampler(), setup_targets[r]);
      auto* info = h.add_runs();
      info->set_name(runs[r].name());
      info->set_dim(setup.space->dim());
      info->set_original_dim(setup.space->original_dim());
      info->set_target_name(config::target_kind_name(runs[r].target()));
      info->set_sampler_name(config::sampler_kind_name(runs[r].sampler()));
      for (const auto& name : setup_targets[r]->output_names()) info->add_output_names(name);
    }
    h.set_dim(h.runs(0).dim());
    h.set_original_dim(h.runs(0).original_dim());
    h.set_target_name(h.runs(0).target_name());
    h.set_sampler_name(h.runs(0).sampler_name());
    h.set_config_path(o.config_path.string());
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    h.set_hostname(host);
    h.set_n_chains(loop.n_chains());
    h.set_task_begin(agreed.task_begin);
    h.set_task_end(agreed.task_end);
    h.set_n_tasks(static_cast<int>(all_tasks.size()));
    collector->write_header(h);
  }
  if (rank == 0 && resume)
    spdlog::info("resuming from checkpoint {} ({}): {} finished and {} running chain(s), "
                 "records cut back to {} bytes", resume->sequence(),
                 checkpoint_path(plan).string(), resume->completed_size(),
                 resume->in_progress_size(), resume->record_bytes());
  if (rank == 0) {
    if (runs.size() == 1)
      spdlog::info("pemc {} | {} ranks (collector rank {}, {} workers) | {} chains of {} on {} "
                   "(dim {}) | {} warmup + {} iterations",
                   kVersion, world.size(), layout.collector, layout.workers.size(),
                   loop.n_chains(), config::sampler_kind_name(plan.sampler()),
                   config::target_kind_name(plan.target()), setup_targets[0]->dim(),
                   plan.warmup(), plan.iterations());
    else
      spdlog::info("pemc {} | {} ranks (collector rank {}, {} workers) | study of {} runs, "
                   "tasks {}..{} of {}",
                   kVersion, world.size(), layout.collector, layout.workers.size(), runs.size(),
                   agreed.task_begin, agreed.task_end - 1, all_tasks.size());
  }

  try {
    if (layout.is_worker(rank)) loop.run_worker(group);
    loop.serve_until_done();
  } catch (const std::exception& e) {
    if (!collector) throw;
    // The collector's abort path: write what it holds where the file still takes it, and say what
    // is on disk (the job is aborted next).
    collector->salvage();
    throw IoError(std::string(e.what()) + "\n  on disk: " + collector->describe_on_disk());
  }

  int exit_code = kExitOk;
  if (collector && collector->n_finished() < static_cast<int>(tasks.size())) {
    // Stopped at a checkpoint: no footer, the run continues with --resume.
    collector->close_without_footer();
    const auto level = spdlog::default_logger()->level();
    spdlog::default_logger()->set_level(spdlog::level::from_str(o.log_level));
    const auto& c = collector->last_checkpoint();
    if (!collector->last_checkpoint_error().empty() || c.sequence() == 0) {
      spdlog::error("stopped without a checkpoint: {}; on disk: {}",
                    collector->last_checkpoint_error().empty() ? "no checkpoint was written"
                                                               : collector->last_checkpoint_error(),
                    collector->describe_on_disk());
      exit_code = kExitInternal;
    } else {
      std::string at;
      for (const auto& k : c.in_progress())
        at += (at.empty() ? "" : ", ") + std::string("chain ") + std::to_string(k.chain_id()) +
              " at iteration " + std::to_string(k.next_iteration());
      spdlog::info(
          "checkpointed ({} finished chain(s){}{}) to {} (records up to byte {}); resume "
          "with: {}",
          c.completed_size(), at.empty() ? "" : "; ", at, checkpoint_path(plan).string(),
          c.record_bytes(), resume_command(o, plan.output().path()));
      exit_code = kExitCheckpointed;
    }
    spdlog::default_logger()->set_level(level);
  } else if (collector) {
    const double wall = std::chrono::duration<double>(Clock::now() - wall_start).count();
    const auto footer = collector->finish(wall);
    std::error_code ec;
    std::filesystem::remove(checkpoint_path(plan), ec);  // the run is complete: nothing to resume
    if (!footer_ok(footer)) exit_code = kExitChainsFailed;
    // The collector logs the summary it wrote at the coordinator's level, even on a rank whose
    // own logging is reduced to warnings.
    const auto level = spdlog::default_logger()->level();
    spdlog::default_logger()->set_level(spdlog::level::from_str(o.log_level));
    log_footer(footer, collector->path());
    spdlog::default_logger()->set_level(level);
  }
  mpi::broadcast(world, exit_code, layout.collector);
  return exit_code;
}

}  // namespace

void install_stop_handlers() {
  // Graceful stop: the handlers only set a flag; the event loops checkpoint and exit.
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGUSR1, on_stop_signal);
}

int run(const RunOptions& o) {
  mpi::communicator world;
  setup_logging(o, world.rank());
  install_stop_handlers();
  try {
    return run_ranks(o, world);
  } catch (const std::exception& e) {
    // A failure on one rank must not leave the others waiting: report it and abort the job.
    std::cerr << "pemc-dist: fatal error on rank " << world.rank() << ": " << e.what() << "\n";
    std::cerr.flush();
    MPI_Abort(MPI_COMM_WORLD, kExitInternal);
    return kExitInternal;
  }
}

}  // namespace pemc::runner
