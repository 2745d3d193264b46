#include "stan_target/process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

extern char** environ;

namespace pemc::stan_target {

int run_logged(const std::vector<std::string>& argv, const std::string& log_path,
               const std::string& cwd) {
  if (argv.empty()) throw Error("run_logged: no program");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    throw Error("cannot run '" + argv[0] + "': " + std::strerror(rc) +
                (argv[0].find('/') == std::string::npos ? " (searched PATH)" : ""));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error("waiting for '" + argv[0] + "': " + std::strerror(errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string run_captured(const std::vector<std::string>& argv) {
  namespace fs = std::filesystem;
  char name[] = "/tmp/pemc-stan-capture-XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0) return "";
  close(fd);
  std::string out;
  try {
    if (run_logged(argv, name) == 0) {
      std::ifstream in(name);
      std::ostringstream text;
      text << in.rdbuf();
      out = text.str();
    }
  } catch (const Error&) {
    out.clear();
  }
  std::error_code ec;
  fs::remove(name, ec);
  return out;
}

}  // namespace pemc::stan_target
