#pragma once
// Running the build tools (stanc, the C++ compiler) as child processes, without a shell.
#include <string>
#include <vector>

namespace pemc::stan_target {

// Runs argv[0] (searched on PATH when it has no '/') with argv, standard output and error
// appended to log_path, standard input from /dev/null, in the directory `cwd` (empty: this
// process's); waits and returns its exit status (128 + N when killed by signal N). Throws Error
// when the program cannot be started (the message names it and the reason).
int run_logged(const std::vector<std::string>& argv, const std::string& log_path,
               const std::string& cwd = "");

// Runs argv like run_logged and returns what it printed (standard output and error), or "" when
// it could not be started or failed.
std::string run_captured(const std::vector<std::string>& argv);

}  // namespace pemc::stan_target
