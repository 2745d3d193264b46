#pragma once
// Turns a Stan program into a shared library with the plugin ABI (src/targets/plugin_abi.h),
// once per model source and toolchain, into a cache shared by every rank, job and user of it.
//
// Cache layout: <cache>/<stem>-<key>/lib<stem>.so and its SHA-256 (lib<stem>.so.sha256) beside
// the model's C++ (stanc's output), a copy of the program and the build log, where <stem> is the model file's name and <key> hashes the
// program's text and the toolchain (Toolchain::fingerprint). A build happens under an exclusive
// lock on <cache>/<stem>-<key>.lock in a private folder renamed into place when complete, so that
// jobs building the same model at once build it once and nobody loads a half-written library. A
// failed compilation leaves its log in <cache>/failed-<stem>-<key>/build.log.
#include <string>

#include "stan_target/model_cache.hpp"

namespace pemc::stan_target {

struct BuildRequest {
  std::string model_file;  // the .stan program
  std::string cache_dir;   // empty: default_cache_dir()
  bool force = false;      // rebuild even when the cache holds the library
};

struct BuiltModel {
  std::string library;      // the .so to load
  std::string entry;        // its cache folder
  std::string sha256;       // the library's, as recorded at build and checked now
  bool from_cache = false;  // found, not built now
  double build_seconds = 0;
};

// Finds or builds the library in a private cache (stan_target/model_cache.hpp: a folder of the
// user's own; a cached library is used only when its SHA-256 matches the one recorded at build,
// else compiled again). stanc reads a copy of the program named "<stem>.stan", so no user path
// reaches the generated code. Throws ConfigError for what the user can fix, each naming the
// file: a missing or unreadable program, stanc's syntax and type errors (its message, with line
// and column), a C++ compilation failure (the first errors and the full log's path), a cache
// folder that cannot be written or is not the user's own, a damaged library in a read-only
// cache, a missing toolchain.
BuiltModel build_model(const BuildRequest& request);

}  // namespace pemc::stan_target
