#include "stan_target/toolchain.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "stan_target/content_hash.hpp"
#include "stan_target/process.hpp"

// Set by CMake: where Debian's packages put Stan's headers, Boost and Eigen for R, pemc's own
// sources (the shim), and the pemc-stanc it built.
#ifndef PEMC_R_SITE_LIBRARY
#define PEMC_R_SITE_LIBRARY "/usr/lib/R/site-library"
#endif
#ifndef PEMC_SOURCE_SRC_DIR
#error "PEMC_SOURCE_SRC_DIR must name pemc's src/ folder"
#endif
#ifndef PEMC_STANC_BUILD_PATH
#define PEMC_STANC_BUILD_PATH ""
#endif

namespace pemc::stan_target {
namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

std::vector<std::string> split_spaces(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// pemc-stanc beside the running program (an installed or build tree), else where CMake built it.
std::string find_pemc_stanc() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && is_executable(self.parent_path() / "pemc-stanc"))
    return (self.parent_path() / "pemc-stanc").string();
  if (is_executable(PEMC_STANC_BUILD_PATH)) return PEMC_STANC_BUILD_PATH;
  return "";
}

// Debian's version line of an R package's DESCRIPTION ("Version: 2.21.0-7"), or "".
std::string r_package_version(const fs::path& package) {
  std::ifstream in(package / "DESCRIPTION");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Version:", 0) == 0) return line;
  return "";
}

void add_common(Toolchain& t) {
  t.cxx = env("CXX").empty() ? "c++" : env("CXX");
  t.shim_include_dir = PEMC_SOURCE_SRC_DIR;
}

// The user's flags come after pemc's, so that they win (e.g. -O3 over the default -O2).
void add_user_flags(Toolchain& t) {
  for (const auto& f : split_spaces(env("PEMC_STAN_CXXFLAGS"))) t.cxx_flags.push_back(f);
}

// Debian's Boost (libboost-dev, on the default include path): its version line.
std::string boost_version() {
  std::ifstream in("/usr/include/boost/version.hpp");
  for (std::string line; std::getline(in, line);)
    if (line.find("#define BOOST_LIB_VERSION") == 0) return line;
  return "";
}

Toolchain debian_toolchain() {
  const fs::path site = PEMC_R_SITE_LIBRARY;
  const fs::path stan = site / "StanHeaders";
  const fs::path include = stan / "include";
  if (!fs::exists(include / "stan" / "math.hpp"))
    throw ConfigError("Stan's headers are not installed (looked for " +
                      (include / "stan" / "math.hpp").string() +
                      "): run deploy/install-deps.sh (Debian packages r-cran-stanheaders, "
                      "r-cran-rcppeigen, libboost-dev), or set CMDSTAN to a CmdStan installation");
  Toolchain t;
  t.kind = "debian-stanheaders-2.21";
  t.stanc = env("PEMC_STANC").empty() ? find_pemc_stanc() : env("PEMC_STANC");
  if (t.stanc.empty())
    throw ConfigError("pemc-stanc (the Stan compiler pemc builds) was not found beside this "
                      "program nor at " + std::string(PEMC_STANC_BUILD_PATH) +
                      ": build it with deploy/build.sh, or set PEMC_STANC");
  add_common(t);
  // The definitions RStan 2.21 compiles models with, at its -O2 (faster than -O3 on models
  // dominated by Eigen's matrix-vector products); warnings of Stan's own headers are off.
  for (const char* f :
       {"-std=c++14", "-O2", "-fPIC", "-shared", "-w", "-DBOOST_DISABLE_ASSERTS", "-DEIGEN_NO_DEBUG",
        "-DBOOST_RESULT_OF_USE_TR1", "-DBOOST_NO_DECLTYPE", "-DBOOST_PHOENIX_NO_VARIADIC_EXPRESSION",
        "-D_REENTRANT"})
    t.cxx_flags.emplace_back(f);
  t.cxx_flags.push_back("-I" + include.string());
  t.cxx_flags.push_back("-I" + (include / "src").string());
  t.cxx_flags.push_back("-I" + (site / "RcppEigen" / "include").string());  // Boost: Debian's own
  t.link_inputs.push_back((stan / "lib" / "libStanHeaders.a").string());  // sundials (ODEs)

  // pemc-stanc is built from StanHeaders' sources, so their version names it; another stanc
  // (PEMC_STANC) is named by its path.
  ContentHash h;
  h.add(t.kind);
  h.add(r_package_version(stan));
  h.add(boost_version());
  h.add(r_package_version(site / "RcppEigen"));
  h.add(env("PEMC_STANC"));
  t.fingerprint = h.hex();
  return t;
}

// A CmdStan tree (2.2x or later): bin/stanc, stan/src, stan/lib/stan_math and its lib/ folder of
// Eigen, Boost, sundials and TBB.
Toolchain cmdstan_toolchain(const fs::path& root) {
  if (!is_executable(root / "bin" / "stanc"))
    throw ConfigError("CMDSTAN=" + root.string() + ": no executable bin/stanc there (build "
                      "CmdStan first, or unset CMDSTAN to use Debian's Stan 2.21)");
  Toolchain t;
  t.kind = "cmdstan";
  t.stanc = env("PEMC_STANC").empty() ? (root / "bin" / "stanc").string() : env("PEMC_STANC");
  add_common(t);
  for (const char* f : {"-std=c++17", "-O2", "-fPIC", "-shared", "-w", "-DBOOST_DISABLE_ASSERTS",
                        "-DEIGEN_NO_DEBUG", "-D_REENTRANT", "-DTBB_INTERFACE_NEW"})
    t.cxx_flags.emplace_back(f);
  const fs::path math = root / "stan" / "lib" / "stan_math";
  t.cxx_flags.push_back("-I" + (root / "stan" / "src").string());
  t.cxx_flags.push_back("-I" + math.string());
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(math / "lib", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("eigen_", 0) == 0 || name.rfind("boost_", 0) == 0)
      t.cxx_flags.push_back("-I" + entry.path().string());
    if (name.rfind("sundials_", 0) == 0 || name.rfind("tbb", 0) == 0)
      t.cxx_flags.push_back("-I" + (entry.path() / "include").string());
    if (name == "tbb") {
      t.link_inputs.push_back("-L" + entry.path().string());
      t.link_inputs.push_back("-Wl,-rpath," + entry.path().string());
      t.link_inputs.push_back("-ltbb");
    }
  }
  ContentHash h;
  h.add(t.kind);
  h.add(root.string());
  h.add(run_captured({t.stanc, "--version"}));
  t.fingerprint = h.hex();
  return t;
}

}  // namespace

Toolchain find_toolchain() {
  const std::string cmdstan = env("CMDSTAN");
  Toolchain t = cmdstan.empty() ? debian_toolchain() : cmdstan_toolchain(cmdstan);
  add_user_flags(t);
  t.cxx_flags.push_back("-I" + t.shim_include_dir);  // last: Stan's own headers come first
  // The key must come out the same on every node of a job, including compute nodes that have no
  // compiler (the model was built on a login node): so it names the compiler by its command, not
  // by asking it for its version (build_model records the version beside the library).
  ContentHash h;
  h.add(t.fingerprint);
  h.add(t.cxx);
  for (const auto& f : t.cxx_flags) h.add(f);
  for (const auto& f : t.link_inputs) h.add(f);
  for (const char* file : {"stan_target/shim/model_shim.hpp", "stan_target/shim/json_data.hpp",
                           "stan_target/shim/cmdstan_json.hpp", "targets/plugin_abi.h"})
    h.add_file(t.shim_include_dir + "/" + file);
  t.fingerprint = h.hex();
  return t;
}

}  // namespace pemc::stan_target
