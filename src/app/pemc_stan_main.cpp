// pemc-stan: compile Stan models ahead of a run (e.g. on a login node, before sbatch: compute
// nodes may have no compiler) and inspect them. Thin: the work is in src/stan_target/.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <string>

#include "core/error.hpp"
#include "core/version.hpp"
#include "pemc/v1/config.pb.h"
#include "stan_target/model_builder.hpp"
#include "stan_target/stan_target.hpp"

namespace {

int cmd_build(const std::string& model, const std::string& cache_dir, bool force) {
  pemc::stan_target::BuildRequest r;
  r.model_file = model;
  r.cache_dir = cache_dir;
  r.force = force;
  const auto built = pemc::stan_target::build_model(r);
  std::cerr << (built.from_cache ? "already compiled: " : "compiled: ") << model << "\n";
  std::cout << built.library << "\n";
  return 0;
}

int cmd_info(const std::string& model, const std::string& data, const std::string& cache_dir) {
  pemc::v1::StanTarget config;
  config.set_model_file(model);
  config.set_data_file(data);
  config.set_cache_dir(cache_dir);
  const auto target = pemc::stan_target::make_stan_target(config);
  const auto names = target->output_names();
  std::cout << "model: " << model << "\nlibrary: " << target->library()
            << "\nunconstrained dimension: " << target->dim() << "\noutputs (" << names.size()
            << "):";
  for (const auto& n : names) std::cout << ' ' << n;
  std::cout << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("pemc-stan"));
  spdlog::set_pattern("[%H:%M:%S] %v");
  CLI::App app{"pemc-stan: compile Stan models for pemc's `stan` target (docs/stan.md)"};
  app.set_version_flag("--version", std::string("pemc-stan ") + PEMC_VERSION);
  app.require_subcommand(1);
  std::string cache_dir;
  app.add_option("--cache-dir", cache_dir,
                 "Model cache (default $PEMC_STAN_CACHE, else $XDG_CACHE_HOME/pemc/stan, else "
                 "~/.cache/pemc/stan)");

  std::string build_model;
  bool force = false;
  auto* build = app.add_subcommand(
      "build", "Compile a model into the cache (once per model and toolchain); prints the library");
  build->add_option("model", build_model, "The .stan program")->required();
  build->add_flag("--force", force, "Compile again even when the cache has it");

  std::string info_model, info_data;
  auto* info = app.add_subcommand(
      "info", "Compile (or find) a model, load it with its data, print its dimension and names");
  info->add_option("model", info_model, "The .stan program")->required();
  info->add_option("--data", info_data, "CmdStan JSON data file");

  auto* cache = app.add_subcommand("cache-dir", "Print the model cache folder in use");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (*build) return cmd_build(build_model, cache_dir, force);
    if (*info) return cmd_info(info_model, info_data, cache_dir);
    if (*cache) {
      std::cout << (cache_dir.empty() ? pemc::stan_target::default_cache_dir() : cache_dir)
                << "\n";
      return 0;
    }
  } catch (const pemc::ConfigError& e) {
    std::cerr << "pemc-stan: error: " << e.what() << "\n";
    return 2;
  } catch (const pemc::Error& e) {
    std::cerr << "pemc-stan: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
