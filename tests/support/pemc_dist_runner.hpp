#pragma once
// Running pemc-dist from a statistical study, as a user would: under mpirun (root-safe and
// oversubscribed), with its output in a log file, timed by the wall clock. The build's directories
// come from the compile definitions tests/CMakeLists.txt gives every study.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace pemc::study {

inline const std::filesystem::path kSourceDir = PEMC_SOURCE_DIR;
inline const std::filesystem::path kBinaryDir = PEMC_BINARY_DIR;
inline const std::filesystem::path kSharedDir = PEMC_SHARED_DIR;

struct DistRun {
  std::filesystem::path bin = kBinaryDir;  // the folder holding pemc-dist
  int ranks = 2;
  std::filesystem::path config;
  std::vector<std::string> args;          // further pemc-dist options, e.g. {"--output", path}
  std::filesystem::path log;               // stdout and stderr of the run
  std::filesystem::path working_dir;       // empty: the current one (relative data paths)
};

struct DistResult {
  int exit_status = 0;  // std::system's status: 0 when pemc-dist exited 0
  double wall_seconds = 0.0;
};

inline std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline DistResult run_pemc_dist(const DistRun& run) {
  std::string cmd;
  if (!run.working_dir.empty()) cmd = "cd " + shell_quoted(run.working_dir.string()) + " && ";
  cmd += "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --allow-run-as-root "
         "--oversubscribe -n " + std::to_string(run.ranks) + " " +
         shell_quoted((run.bin / "pemc-dist").string()) + " " + shell_quoted(run.config.string()) +
         " --overwrite --log-level warn";
  for (const auto& a : run.args) cmd += " " + shell_quoted(a);
  cmd += " > " + shell_quoted(run.log.string()) + " 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  DistResult r;
  r.exit_status = std::system(cmd.c_str());
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace pemc::study
