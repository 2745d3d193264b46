#pragma once
// The Stan model cache's defences: it holds shared libraries that every rank loads and runs, so a
// library planted or damaged there would run as the user (often root on a cluster's login node).
// The cache folder is the user's own (created 0700; refused when another user owns it or others
// may write to it), and every library's SHA-256 is recorded beside it when it is built and checked
// before it is loaded: a damaged or replaced library is rebuilt, never loaded.
#include <filesystem>
#include <optional>
#include <string>

namespace pemc::stan_target {

// $PEMC_STAN_CACHE, else $XDG_CACHE_HOME/pemc/stan, else $HOME/.cache/pemc/stan. ConfigError when
// none is set: there is no shared fallback (a folder under /tmp could be anyone's).
std::string default_cache_dir();

// Creates `cache` (mode 0700; missing parents with the usual mode) when it does not exist, then
// checks that it is a directory this user owns and no one else may write to. ConfigError naming it
// and the fix otherwise.
void open_private_cache(const std::filesystem::path& cache);

// Whether this process may add to or replace entries of `cache`.
bool cache_is_writable(const std::filesystem::path& cache);

// "<library>.sha256": where a library's hash is recorded.
std::filesystem::path recorded_hash_path(const std::filesystem::path& library);

// Records the library's SHA-256 beside it (before the entry is moved into place); returns it.
std::string record_library_hash(const std::filesystem::path& library);

// The library's SHA-256 when it equals the recorded one, else nullopt with `why` saying what
// differs (no hash recorded, a different hash, an unreadable file).
std::optional<std::string> verified_library_hash(const std::filesystem::path& library,
                                                 std::string& why);

}  // namespace pemc::stan_target
