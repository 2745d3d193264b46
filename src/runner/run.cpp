#include "runner/run.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <mpi.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include "config/factories.hpp"
#include "core/error.hpp"
#include "parallel/idle_wait.hpp"
#include "parallel/layout.hpp"
#include "parallel/mpi_group_comm.hpp"
#include "runner/chain_status.hpp"
#include "runner/checkpoint.hpp"
#include "runner/collector.hpp"
#include "runner/direct_writes.hpp"
#include "runner/mode_search_step.hpp"
#include "runner/rank_loop.hpp"
#include "runner/rank_stats.hpp"
#include "runner/resume_command.hpp"
#include "runner/run_header.hpp"
#include "runner/run_log.hpp"
#include "runner/run_plan.hpp"
#include "runner/stop_signal.hpp"

namespace pemc::runner {
namespace {

using Clock = std::chrono::steady_clock;
namespace mpi = boost::mpi;

// This job's ranks: the layout (coordinator, collector, worker groups) and, on a worker of a group
// of several, the group's communicator.
struct Ranks {
  parallel::Layout layout;
  int group_size = 1;
  std::shared_ptr<parallel::MpiGroupComm> group;  // nullptr: this rank runs its chains alone (or none)
};

// Chains spanning several ranks: one group size for the job (the largest any run asks for).
int requested_group_size(const RunPlan& plan) {
  int requested = 1;
  for (const auto& run : plan.runs)
    requested = std::max(requested, config::ranks_per_chain(run.sampler()));
  return requested;
}

// Independent chains can move to any rank; a chain spread over a group continues only on a group of
// the same size (its state is split and ordered by the group's members). False (rank 0 says why)
// when the checkpoint's chains cannot continue on these ranks.
bool resume_fits_groups(const RunPlan& plan, int group_size, int requested_group,
                        const mpi::communicator& world) {
  if (!plan.resume) return true;
  for (const auto& c : plan.resume->in_progress()) {
    if (c.group_size() == group_size) continue;
    if (world.rank() == 0)
      std::cerr << "pemc-dist: error: cannot resume: chain " << c.chain_id()
                << " of the checkpoint ran on " << c.group_size() << " rank(s) per chain, but "
                << world.size() << " ranks give groups of " << group_size << " (ranks_per_chain "
                << requested_group << "); resume with a number of ranks that gives "
                << c.group_size() << " worker(s) per chain, e.g. the checkpointed run's "
                << plan.resume->n_ranks() << "\n";
    return false;
  }
  return true;
}

// Rank 0: ranks_per_chain that the worker count cannot give, and workers left idle.
void warn_about_groups(const parallel::Layout& layout, int requested_group) {
  if (requested_group <= 1) return;
  const int used = static_cast<int>(layout.groups.front().size());
  const int idle = static_cast<int>(layout.workers.size() - layout.groups.size() * used);
  if (used < requested_group)
    spdlog::warn("ranks_per_chain = {} but only {} worker rank(s): each chain runs on {} "
                 "(draws are identical; only the speed differs)", requested_group, used, used);
  if (idle > 0)
    spdlog::warn("{} worker rank(s) idle: {} workers do not divide into groups of {}", idle,
                 layout.workers.size(), used);
}

// Every rank takes part (the communicator split is collective); nullopt when a resume cannot
// continue on these ranks.
std::optional<Ranks> arrange_ranks(mpi::communicator& world, const RunPlan& plan) {
  const int requested_group = requested_group_size(plan);
  Ranks r;
  r.layout = parallel::make_layout(world.size(), requested_group);
  r.group_size = static_cast<int>(r.layout.groups.front().size());
  if (!resume_fits_groups(plan, r.group_size, requested_group, world)) return std::nullopt;
  // The ranks of one chain get their own communicator.
  const int rank = world.rank();
  const int my_group = r.layout.group_of(rank);
  MPI_Comm group_raw = MPI_COMM_NULL;
  MPI_Comm_split(static_cast<MPI_Comm>(world), my_group >= 0 ? my_group : MPI_UNDEFINED, rank,
                 &group_raw);
  if (group_raw != MPI_COMM_NULL) {
    mpi::communicator group_comm(group_raw, mpi::comm_take_ownership);
    if (group_comm.size() > 1) r.group = std::make_shared<parallel::MpiGroupComm>(group_comm);
  }
  if (rank == 0) warn_about_groups(r.layout, requested_group);
  return r;
}

// What a rank builds before any work starts: its targets and, on the collector, the open output.
struct RankSetup {
  std::vector<targets::TargetPtr> targets;  // one per run
  std::vector<modes::ModeSetPtr> modes;            // one per run: its mode search (nullptr: none)
  std::unique_ptr<Collector> collector;
};

// The runs this job has tasks of (a study's slice may leave some out).
std::vector<v1::RunConfig> runs_with_tasks(const RunPlan& plan) {
  std::vector<bool> used(plan.runs.size(), false);
  for (const auto& t : plan.tasks) used[static_cast<std::size_t>(t.run_index)] = true;
  std::vector<v1::RunConfig> runs = plan.runs;
  for (std::size_t r = 0; r < runs.size(); ++r)
    if (!used[r]) runs[r].mutable_modes()->set_enabled(false);  // no search for it here
  return runs;
}

// The mode searches of the job's runs (mode_search_step.hpp), collective; a failure on any rank
// (a target that throws what the search does not catch) ends the run before sampling.
bool search_modes(const RunPlan& plan, RankSetup& setup, mpi::communicator& world) {
  std::string local_error;
  try {
    setup.modes = search_modes_of_runs(runs_with_tasks(plan), setup.targets, world);
  } catch (const std::exception& e) {
    local_error = e.what();
  }
  std::vector<std::string> errors;
  mpi::all_gather(world, local_error, errors);
  for (std::size_t r = 0; r < errors.size(); ++r) {
    if (errors[r].empty()) continue;
    if (world.rank() == 0)
      std::cerr << "pemc-dist: error (rank " << r << ") in the mode search: " << errors[r] << "\n";
    return false;
  }
  return true;
}

ModeSharesByRun mode_shares(const RunPlan& plan, const std::vector<modes::ModeSetPtr>& modes) {
  ModeSharesByRun out;
  for (std::size_t r = 0; r < modes.size(); ++r)
    if (modes[r]) out[plan.runs[r].name()] = modes[r]->laplace_shares();
  return out;
}

void build_rank_setup(const RunOptions& o, const RunPlan& plan, bool is_collector,
                      RankSetup& setup) {
  setup.targets.resize(plan.runs.size());
  for (std::size_t r = 0; r < plan.runs.size(); ++r)
    setup.targets[r] = config::make_target(plan.runs[r].target());
  if (!is_collector) return;
  const auto ckpt = checkpoint_path(plan.config);
  if (plan.resume) {
    RecordDropFilter drop;
    for (const auto& [r, point] : plan.rounds_resume)
      if (point.restarts)
        drop = [&plan](const v1::Record& record) {
          return written_in_restarted_round(record, plan.rounds_resume, plan.runs);
        };
    setup.collector =
        std::make_unique<Collector>(plan.config.output().path(), *plan.resume, ckpt, drop);
  } else {
    setup.collector = std::make_unique<Collector>(plan.config.output().path(), o.overwrite);
    // A checkpoint left by an earlier run of this output no longer describes the file.
    std::error_code ec;
    std::filesystem::remove(ckpt, ec);
  }
}

// Every rank builds what it needs from the agreed plan; a failure anywhere is reported (by rank 0)
// before any work starts, and the run ends with nullopt and `exit_code`: kExitInternal for an I/O
// failure (the output cannot be written: a full disk, /dev/full), else kExitConfig.
std::optional<RankSetup> set_up_rank(const RunOptions& o, const RunPlan& plan,
                                     const parallel::Layout& layout, mpi::communicator& world,
                                     int& exit_code) {
  const int rank = world.rank();
  RankSetup setup;
  std::string local_error;
  int local_code = kExitOk;
  try {
    build_rank_setup(o, plan, rank == layout.collector, setup);
  } catch (const IoError& e) {
    local_error = e.what();
    local_code = kExitInternal;
  } catch (const Error& e) {
    local_error = e.what();
    local_code = kExitConfig;
  }
  std::vector<std::string> errors;
  std::vector<int> codes;
  mpi::all_gather(world, local_error, errors);
  mpi::all_gather(world, local_code, codes);
  for (std::size_t r = 0; r < errors.size(); ++r) {
    if (errors[r].empty()) continue;
    if (rank == 0) std::cerr << "pemc-dist: error (rank " << r << "): " << errors[r] << "\n";
    exit_code = codes[r];
    return std::nullopt;
  }
  return setup;
}

// Plays this rank's roles to the end. On the collector an error ends in its abort path: write what
// it holds where the file still takes it, and say what is on disk (the job is aborted next).
void play_roles(RankLoop& loop, const parallel::Layout& layout, int rank,
                parallel::GroupCommPtr group, Collector* collector) {
  try {
    if (layout.is_worker(rank)) loop.run_worker(std::move(group));
    loop.serve_until_done();
  } catch (const std::exception& e) {
    if (!collector) throw;
    collector->salvage();
    throw IoError(std::string(e.what()) + "\n  on disk: " + collector->describe_on_disk());
  }
}

// The collector ends the output: a footer when every chain finished, else (stopped at a
// checkpoint) no footer, since the run continues with --resume. Returns the run's exit code.
int finish_output(const RunOptions& o, const RunPlan& plan, Collector& collector,
                  Clock::time_point wall_start) {
  const auto ckpt = checkpoint_path(plan.config);
  int exit_code = kExitOk;
  if (collector.n_finished() < static_cast<int>(plan.tasks.size())) {
    collector.close_without_footer();
    at_coordinator_level(o, [&] {
      exit_code = log_stopped(collector.last_checkpoint(), collector.last_checkpoint_error(),
                              collector.describe_on_disk(), ckpt,
                              resume_command(o, plan.config.output().path()));
    });
    return exit_code;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - wall_start).count();
  const auto footer = collector.finish(wall);
  std::error_code ec;
  std::filesystem::remove(ckpt, ec);  // the run is complete: nothing to resume
  if (!footer_ok(footer)) exit_code = kExitChainsFailed;
  // The collector logs the summary it wrote at the coordinator's level.
  at_coordinator_level(o, [&] { log_footer(footer, collector.path()); });
  return exit_code;
}

RankLoop::CheckpointOptions checkpoint_options(const RunOptions& o, const RunPlan& plan) {
  RankLoop::CheckpointOptions ck;
  ck.resume = plan.resume ? &*plan.resume : nullptr;
  ck.every_seconds = plan.config.checkpoint().every_seconds();
  ck.every_iterations = plan.config.checkpoint().every_iterations();
  ck.stop_after_iterations = o.stop_after_iterations;
  return ck;
}

// This rank's counters at the end of the run (rank_stats.hpp).
RankStats final_stats(const RankLoop& loop, const parallel::MpiGroupComm* group,
                      const Collector* collector) {
  RankStats s = loop.stats();
  if (group) {
    s.group_calls = group->stats().calls;
    s.group_seconds = group->stats().seconds;
  }
  if (collector) {
    s.records = collector->records_written();
    s.record_bytes = collector->bytes_written();
  }
  s.cpu_seconds = process_cpu_seconds();
  return s;
}

int run_ranks(const RunOptions& o, mpi::communicator& world) {
  const int rank = world.rank();
  const auto wall_start = Clock::now();
  AgreedPlan agreed;  // rank 0 holds the output locks in it until the run ends
  if (rank == 0) agreed = agree_on_rank0(o);
  const auto plan = share_plan(world, agreed);
  if (!plan) return agreed.exit_code;
  if (o.validate_only) {
    if (rank == 0) print_validated(o, *plan);
    return kExitOk;
  }
  const auto ranks = arrange_ranks(world, *plan);
  if (!ranks) return kExitConfig;
  const auto& layout = ranks->layout;
  int setup_exit_code = kExitConfig;
  auto setup = set_up_rank(o, *plan, layout, world, setup_exit_code);
  if (!setup) return setup_exit_code;
  if (rank == 0) log_start(*plan, layout, world.size(), setup->targets[0]->dim());
  if (!search_modes(*plan, *setup, world)) return kExitInternal;
  Collector* collector = setup->collector.get();

  RankLoop loop(world, layout, plan->runs, plan->tasks, collector, checkpoint_options(o, *plan));
  if (collector) {
    auto ck = checkpoint_setup(o, *plan, loop.leaders(), world.size(), ranks->group_size,
                               wall_start);
    ck.rounds_part = loop.any_rounds();
    collector->set_checkpointing(std::move(ck));
  }
  for (std::size_t r = 0; r < plan->runs.size(); ++r)
    loop.adopt_target(static_cast<int>(r), setup->targets[r], setup->modes[r]);
  if (collector) collector->set_mode_shares(mode_shares(*plan, setup->modes));
  if (collector) collector->set_runs(plan->runs, plan->config.runs_size() > 0);
  if (collector && !plan->resume)
    collector->write_header(make_header(o, *plan, setup->targets, setup->modes, world.size()));
  if (collector) collector->flush();  // the file's first bytes, which the leaders check
  const auto& output = plan->config.output();
  loop.set_direct_writer(set_up_direct_writes(
      world, layout, !output.has_direct_writes() || output.direct_writes(), output.path()));

  play_roles(loop, layout, rank, ranks->group, collector);
  int exit_code = collector ? finish_output(o, *plan, *collector, wall_start) : kExitOk;
  // Ranks done before the collector wait here, asleep (a blocking broadcast spins).
  parallel::broadcast_idle(world, exit_code, layout.collector);
  if (spdlog::level::from_str(o.log_level) <= spdlog::level::debug)  // the same on every rank
    log_rank_stats(world, final_stats(loop, ranks->group.get(), collector));
  return exit_code;
}

}  // namespace

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
