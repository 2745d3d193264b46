#pragma once
// The command line that shaped a run's plan, as a checkpoint stores it and as the resume hint
// repeats it.
#include <string>
#include <vector>

#include "runner/run.hpp"

namespace pemc::runner {

// A word for the shell: quoted unless it is made of safe characters only.
std::string shell_quote(const std::string& s);

// Words joined by spaces, each quoted for the shell where needed.
std::string join_words(const std::vector<std::string>& words);

// The options that shaped the plan besides the config and --output, as given on the command line.
std::vector<std::string> plan_options(const RunOptions& o);

// The command that continues the run (any number of ranks that gives the same group size).
std::string resume_command(const RunOptions& o, const std::string& output);

}  // namespace pemc::runner
