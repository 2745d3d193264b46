#pragma once
// Where the tools that turn a Stan program into a shared library live: stanc, the C++ compiler,
// Stan's headers and libraries, and pemc's shim (src/stan_target/shim/).
//
// Two toolchains:
// - Debian's (default): Stan 2.21 from r-cran-stanheaders (Stan Math, the model headers, the
//   sundials library for ODE models), Debian's Boost (libboost-dev), Eigen 3.3 from r-cran-rcppeigen,
//   and pemc-stanc, a stanc 2.21 that pemc builds from StanHeaders' compiler sources beside
//   pemc-dist. No R runs.
// - A CmdStan installation named by the environment variable CMDSTAN: its bin/stanc, its Stan and
//   Stan Math sources and the libraries it ships (docs/stan.md says what was tested).
#include <string>
#include <vector>

namespace pemc::stan_target {

struct Toolchain {
  std::string kind;                       // "debian-stanheaders-2.21" or "cmdstan"
  std::string stanc;                      // the stanc executable
  std::vector<std::string> stanc_flags;   // before the model file
  std::string cxx;                        // the C++ compiler driver
  std::vector<std::string> cxx_flags;     // compile and link flags, -I included
  std::vector<std::string> link_inputs;   // libraries after the source
  std::string shim_include_dir;           // holds stan_target/shim/ and targets/plugin_abi.h
  // Everything that changes the built library besides the model: Stan's version, the compiler
  // command and flags, the shim's text. Part of the cache key; the same on every node.
  std::string fingerprint;
};

// The toolchain to use: CMDSTAN's when that variable is set, else Debian's. Environment:
// PEMC_STANC (another stanc), CXX (another compiler), PEMC_STAN_CXXFLAGS (extra flags, split at
// spaces). Throws ConfigError naming what is missing (e.g. StanHeaders not installed: run
// deploy/install-deps.sh).
Toolchain find_toolchain();

}  // namespace pemc::stan_target
