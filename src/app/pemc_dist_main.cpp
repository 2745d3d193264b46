// pemc-dist: run a sampler configuration under MPI. Thin: parses the command line, hands over to
// runner::run on every rank.
#include <boost/mpi/environment.hpp>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>

#include "core/version.hpp"
#include "runner/run.hpp"

int main(int argc, char** argv) {
  CLI::App app{"pemc-dist: distributed sampling of multi-modal distributions.\n"
               "Usage: mpirun -n RANKS pemc-dist CONFIG [options]"};
  pemc::runner::RunOptions o;
  std::string config_path;
  app.add_option("config", config_path, "Run config (.pbtxt/.textproto/.txtpb text, or .pb binary)")
      ->required();
  app.add_flag("--validate", o.validate_only, "Check the config (and build the target), then exit");
  app.add_option("--output", o.overrides.output, "Override output.path");
  app.add_option("--iterations", o.overrides.iterations, "Override iterations (draws per chain)");
  app.add_option("--warmup", o.overrides.warmup, "Override warmup");
  app.add_option("--seeds", o.overrides.seeds,
                 "Run the first K of the config's seeds (or K seeds from seeds.base)");
  app.add_option("--set", o.overrides.sets,
                 "Override any scalar field: --set FIELD.PATH=VALUE (repeatable), e.g. --set "
                 "sampler.nuts.step_size=0.05 on a NUTS config, or a list, e.g. --set "
                 "'init.uniform_box.lower=[0, -5]'; never switches the configured "
                 "sampler, target or init kind (in a study it reaches the runs it fits)");
  app.add_flag("--overwrite", o.overwrite, "Replace an existing output file");
  app.add_flag("--resume", o.resume,
               "Continue the run from its checkpoint (<output>.ckpt): records after the checkpoint "
               "are dropped and written again; without a checkpoint and output, start afresh");
  app.add_option("--stop-after-iterations", o.stop_after_iterations,
                 "Testing: stop like SIGTERM (checkpoint, exit status 4) when the first chain "
                 "reaches this iteration (warmup included)")
      ->check(CLI::PositiveNumber)
      ->group("");  // hidden: for tests
  app.add_option("--task-range", o.task_range,
                 "Run only tasks A..B-1 of the study (A:B; tasks = runs x seeds x chains)");
  app.add_option("--array-task-size", o.array_task_size,
                 "In a SLURM job array: run tasks [i*N, (i+1)*N) with i = SLURM_ARRAY_TASK_ID")
      ->check(CLI::PositiveNumber);
  app.add_option("--log-level", o.log_level, "Coordinator log level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_flag("--log-all-ranks", o.log_all_ranks,
               "Apply --log-level on every rank (default: other ranks log warnings and errors)");
  app.set_version_flag("--version", "pemc-dist " + std::string(pemc::kVersion));

  // Parse before MPI starts so --help/--version/usage errors need no MPI (and print once).
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  o.config_path = config_path;
  // Past a file-size limit (ulimit -f, RLIMIT_FSIZE) the kernel would kill the collector with
  // SIGXFSZ; ignored, the write fails with EFBIG and the run stops with an error naming the file.
  std::signal(SIGXFSZ, SIG_IGN);
  pemc::runner::install_stop_handlers();  // before MPI_Init, which can take a second under srun
  boost::mpi::environment env(argc, argv);
  return pemc::runner::run(o);
}
