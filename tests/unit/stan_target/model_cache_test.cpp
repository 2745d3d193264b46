// The Stan model cache's defences (stan_target/model_cache.hpp): a private folder, refused when
// others may write to it or another user owns it; libraries checked against the SHA-256 recorded
// at build; no fallback cache without HOME.
#include "stan_target/model_cache.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "core/error.hpp"

namespace pemc::stan_target {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("pemc-cache-test-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

std::string refusal(const fs::path& cache) {
  try {
    open_private_cache(cache);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelCache, CreatedPrivateAndRefusedWhenOthersMayWrite) {
  TempDir dir;
  const auto cache = dir.path / "a" / "cache";
  EXPECT_EQ(refusal(cache), "");
  struct stat st {};
  ASSERT_EQ(::stat(cache.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ::chmod(cache.c_str(), 0777);
  EXPECT_THAT(refusal(cache),
              HasSubstr("may be written by others (mode 0777): a library planted there would run "
                        "as you; make it private with 'chmod go-w " + cache.string() + "'"));
  ::chmod(cache.c_str(), 0755);  // a readable cache of one's own is fine
  EXPECT_EQ(refusal(cache), "");
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(cache.c_str(), 65534, 65534), 0);
    EXPECT_THAT(refusal(cache), HasSubstr("is owned by user 65534, not by you (user 0)"));
  }
  std::ofstream(dir.path / "file") << "x";
  EXPECT_THAT(refusal(dir.path / "file"), HasSubstr("is not a directory"));
}

TEST(ModelCache, LibrariesMustMatchTheirRecordedHash) {
  TempDir dir;
  const auto lib = dir.path / "libm.so";
  std::ofstream(lib) << "library bytes";
  std::string why;
  EXPECT_FALSE(verified_library_hash(lib, why));
  EXPECT_THAT(why, HasSubstr("no SHA-256 was recorded for it"));
  const auto hash = record_library_hash(lib);
  EXPECT_EQ(verified_library_hash(lib, why), hash);
  std::ofstream(lib, std::ios::app) << "!";
  EXPECT_FALSE(verified_library_hash(lib, why));
  EXPECT_THAT(why, HasSubstr("differs from the one recorded when it was built, " +
                             hash.substr(0, 16) + "... (a damaged or replaced file)"));
}

TEST(ModelCache, NoFallbackWithoutHome) {
  const char* names[] = {"HOME", "XDG_CACHE_HOME", "PEMC_STAN_CACHE"};
  std::map<std::string, std::string> saved;
  for (const char* n : names) {
    if (const char* v = std::getenv(n)) saved[n] = v;
    ::unsetenv(n);
  }
  try {
    default_cache_dir();
    ADD_FAILURE() << "a cache folder without HOME";
  } catch (const ConfigError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("no Stan model cache: PEMC_STAN_CACHE, "
                                                 "XDG_CACHE_HOME and HOME are all unset"));
  }
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(default_cache_dir(), "/home/someone/.cache/pemc/stan");
  ::unsetenv("HOME");
  for (const auto& [n, v] : saved) ::setenv(n.c_str(), v.c_str(), 1);
}

}  // namespace
}  // namespace pemc::stan_target
