#include "stan_target/model_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/sha256.hpp"

namespace pemc::stan_target {
namespace {

namespace fs = std::filesystem;

const std::string kChooseAnother = "choose another with target.stan.cache_dir or PEMC_STAN_CACHE";

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

std::string default_cache_dir() {
  if (const char* d = std::getenv("PEMC_STAN_CACHE"); d != nullptr && d[0] != '\0') return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && x[0] != '\0')
    return (fs::path(x) / "pemc" / "stan").string();
  if (const char* h = std::getenv("HOME"); h != nullptr && h[0] != '\0')
    return (fs::path(h) / ".cache" / "pemc" / "stan").string();
  throw ConfigError("no Stan model cache: PEMC_STAN_CACHE, XDG_CACHE_HOME and HOME are all unset "
                    "(pemc does not fall back to a shared folder such as /tmp, where anyone could "
                    "plant a library); set PEMC_STAN_CACHE to a folder of your own, or "
                    "target.stan.cache_dir");
}

void open_private_cache(const fs::path& cache) {
  std::error_code ec;
  if (!fs::exists(cache, ec)) {
    if (cache.has_parent_path()) fs::create_directories(cache.parent_path(), ec);
    if (::mkdir(cache.c_str(), 0700) != 0 && errno != EEXIST)
      throw ConfigError("the Stan model cache '" + cache.string() + "' cannot be created (" +
                        std::strerror(errno) + "); " + kChooseAnother);
  }
  struct stat st {};
  if (::stat(cache.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw ConfigError("the Stan model cache '" + cache.string() + "' is not a directory; " +
                      kChooseAnother);
  if (st.st_uid != ::geteuid())
    throw ConfigError("the Stan model cache '" + cache.string() + "' is owned by user " +
                      std::to_string(st.st_uid) + ", not by you (user " +
                      std::to_string(::geteuid()) +
                      "): its libraries would run as you; " + kChooseAnother +
                      " (a folder of your own)");
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    throw ConfigError("the Stan model cache '" + cache.string() + "' may be written by others " +
                      "(mode " + octal_mode(st.st_mode) +
                      "): a library planted there would run as you; make it private with "
                      "'chmod go-w " + cache.string() + "' (pemc creates it 0700), or " +
                      kChooseAnother);
}

bool cache_is_writable(const fs::path& cache) { return ::access(cache.c_str(), W_OK | X_OK) == 0; }

fs::path recorded_hash_path(const fs::path& library) { return library.string() + ".sha256"; }

std::string record_library_hash(const fs::path& library) {
  const std::string hash = sha256_of_file(library, "the compiled Stan model");
  std::ofstream out(recorded_hash_path(library), std::ios::trunc);
  out << hash << "\n";
  if (!out.flush())
    throw ConfigError("cannot record the SHA-256 of '" + library.string() + "' in " +
                      recorded_hash_path(library).string());
  return hash;
}

std::optional<std::string> verified_library_hash(const fs::path& library, std::string& why) {
  std::ifstream in(recorded_hash_path(library));
  std::string recorded;
  if (!(in >> recorded)) {
    why = "no SHA-256 was recorded for it (" + recorded_hash_path(library).string() + ")";
    return std::nullopt;
  }
  std::string actual;
  try {
    actual = sha256_of_file(library, "the compiled Stan model");
  } catch (const Error& e) {
    why = e.what();
    return std::nullopt;
  }
  if (actual != recorded) {
    why = "its SHA-256 " + actual.substr(0, 16) + "... differs from the one recorded when it was " +
          "built, " + recorded.substr(0, 16) + "... (a damaged or replaced file)";
    return std::nullopt;
  }
  return actual;
}

}  // namespace pemc::stan_target
