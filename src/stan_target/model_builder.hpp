#pragma once
// Turns a Stan program into a shared library with the plugin ABI (src/targets/plugin_abi.h),
// once per model source and toolchain, into a cache shared by every rank, job and user of it.
//
// Cache layout: <cache>/<stem>-<key>/lib<stem>.so beside the model's C++ (stanc's output), a copy
// of the program and the build log, where <stem> is the model file's name and <key> hashes the
// program's text and the toolchain (Toolchain::fingerprint). A build happens under an exclusive
// lock on <cache>/<stem>-<key>.lock in a private folder renamed into place when complete, so that
// jobs building the same model at once build it once and nobody loads a half-written library. A
// failed compilation leaves its log in <cache>/failed-<stem>-<key>/build.log.
#include <string>

namespace pemc::stan_target {

struct BuildRequest {
  std::string model_file;  // the .stan program
  std::string cache_dir;   // empty: default_cache_dir()
  bool force = false;      // rebuild even when the cache holds the library
};

struct BuiltModel {
  std::string library;      // the .so to load
  std::string entry;        // its cache folder
  bool from_cache = false;  // found, not built now
  double build_seconds = 0;
};

// $PEMC_STAN_CACHE, else $XDG_CACHE_HOME/pemc/stan, else $HOME/.cache/pemc/stan.
std::string default_cache_dir();

// Finds or builds the library. Throws ConfigError for what the user can fix, each naming the
// file: a missing or unreadable program, stanc's syntax and type errors (its message, with line
// and column), a C++ compilation failure (the first errors and the full log's path), an
// unwritable cache folder, a missing toolchain.
BuiltModel build_model(const BuildRequest& request);

}  // namespace pemc::stan_target
