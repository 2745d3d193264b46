#include "stan_target/model_builder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "stan_target/content_hash.hpp"
#include "stan_target/process.hpp"
#include "stan_target/toolchain.hpp"

namespace pemc::stan_target {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The model's name for stanc and the cache: the file's stem with every character that is not a
// letter, digit or '_' replaced by '_', prefixed when it does not start with a letter.
std::string model_stem(const fs::path& model_file) {
  std::string stem = model_file.stem().string();
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  if (stem.empty() || !std::isalpha(static_cast<unsigned char>(stem[0]))) stem = "m_" + stem;
  return stem;
}

// The last `max_lines` lines of text that matter: stanc's messages, or the compiler's errors.
std::string excerpt(const std::string& text, bool errors_only, int max_lines) {
  std::istringstream in(text);
  std::vector<std::string> kept;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Model name=", 0) == 0 || line.rfind("Input file=", 0) == 0 ||
        line.rfind("Output file=", 0) == 0 || line.empty())
      continue;
    if (errors_only && line.find("error") == std::string::npos) continue;
    kept.push_back(line);
  }
  std::string out;
  const std::size_t first = kept.size() > static_cast<std::size_t>(max_lines)
                                ? kept.size() - static_cast<std::size_t>(max_lines)
                                : 0;
  if (errors_only && kept.size() > static_cast<std::size_t>(max_lines)) {
    // The first errors are the informative ones.
    for (int i = 0; i < max_lines; ++i) out += "\n  " + kept[static_cast<std::size_t>(i)];
    return out + "\n  ... (" + std::to_string(kept.size() - static_cast<std::size_t>(max_lines)) +
           " more)";
  }
  for (std::size_t i = first; i < kept.size(); ++i) out += "\n  " + kept[i];
  return out;
}

void make_writable_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir) || ::access(dir.c_str(), W_OK | X_OK) != 0)
    throw ConfigError("the Stan model cache '" + dir.string() + "' cannot be created or written" +
                      (ec ? " (" + ec.message() + ")"
                          : errno != 0 ? " (" + std::string(std::strerror(errno)) + ")" : "") +
                      "; choose another with target.stan.cache_dir or PEMC_STAN_CACHE");
}

// Holds an exclusive flock on a file while alive.
class BuildLock {
 public:
  explicit BuildLock(const fs::path& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw ConfigError("cannot create the lock file '" + path.string() +
                        "': " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    spdlog::info("another process is building this Stan model; waiting for it ({})",
                 path.string());
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR)
        throw ConfigError("cannot lock '" + path.string() + "': " + std::strerror(errno));
    }
  }
  ~BuildLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  BuildLock(const BuildLock&) = delete;
  BuildLock& operator=(const BuildLock&) = delete;

 private:
  int fd_ = -1;
};

void run_stanc(const Toolchain& t, const fs::path& model_file, const std::string& stem,
               const fs::path& work) {
  const fs::path log = work / "stanc.log";
  std::vector<std::string> argv{t.stanc};
  argv.insert(argv.end(), t.stanc_flags.begin(), t.stanc_flags.end());
  const std::string parent = model_file.parent_path().empty() ? "." : model_file.parent_path().string();
  argv.push_back("--include_paths=" + parent);
  argv.push_back("--name=" + stem + "_model");
  argv.push_back("--o=" + (work / (stem + ".hpp")).string());
  argv.push_back(model_file.string());
  const int rc = run_logged(argv, log.string());
  if (rc != 0 || !fs::exists(work / (stem + ".hpp")))
    throw ConfigError("target.stan.model_file: stanc rejected '" + model_file.string() + "':" +
                      excerpt(read_text(log), false, 30));
}

void run_compiler(const Toolchain& t, const std::string& stem, const fs::path& work,
                  const fs::path& failed_dir) {
  const fs::path unit = work / "unit.cpp";
  std::ofstream(unit) << "#include \"" << stem << ".hpp\"\n"
                      << "#include \"stan_target/shim/model_shim.hpp\"\n";
  const fs::path library = work / ("lib" + stem + ".so");
  std::vector<std::string> argv{t.cxx};
  argv.insert(argv.end(), t.cxx_flags.begin(), t.cxx_flags.end());
  argv.push_back("-I" + work.string());
  argv.push_back("-o");
  argv.push_back(library.string());
  argv.push_back(unit.string());
  argv.insert(argv.end(), t.link_inputs.begin(), t.link_inputs.end());
  const fs::path log = work / "build.log";
  {
    std::ofstream header(log);
    for (const auto& a : argv) header << a << ' ';
    header << "\n\n";
  }
  const int rc = run_logged(argv, log.string());
  if (rc == 0 && fs::exists(library)) return;
  // Keep the evidence where the user can read it.
  std::error_code ec;
  fs::remove_all(failed_dir, ec);
  fs::rename(work, failed_dir, ec);
  const fs::path kept = ec ? log : failed_dir / "build.log";
  throw ConfigError("target.stan.model_file: the C++ compiler failed on the model's code (exit " +
                    std::to_string(rc) + "):" + excerpt(read_text(kept), true, 5) +
                    "\n  full log: " + kept.string());
}

}  // namespace

std::string default_cache_dir() {
  if (const char* d = std::getenv("PEMC_STAN_CACHE"); d != nullptr && d[0] != '\0') return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && x[0] != '\0')
    return (fs::path(x) / "pemc" / "stan").string();
  if (const char* h = std::getenv("HOME"); h != nullptr && h[0] != '\0')
    return (fs::path(h) / ".cache" / "pemc" / "stan").string();
  return (fs::temp_directory_path() / "pemc-stan-cache").string();
}

BuiltModel build_model(const BuildRequest& request) {
  const fs::path model_file = request.model_file;
  std::error_code ec;
  if (request.model_file.empty()) throw ConfigError("target.stan.model_file: required");
  if (!fs::is_regular_file(model_file, ec) || ::access(model_file.c_str(), R_OK) != 0)
    throw ConfigError("target.stan.model_file: '" + request.model_file +
                      "' does not exist or is not a readable file");
  const std::string source = read_text(model_file);
  const Toolchain toolchain = find_toolchain();
  const std::string stem = model_stem(model_file);
  ContentHash h;
  h.add(source);
  h.add(toolchain.fingerprint);
  const std::string key = h.hex().substr(0, 20);

  const fs::path cache = request.cache_dir.empty() ? default_cache_dir() : request.cache_dir;
  const fs::path entry = cache / (stem + "-" + key);
  BuiltModel out;
  out.entry = entry.string();
  out.library = (entry / ("lib" + stem + ".so")).string();
  if (!request.force && fs::exists(out.library, ec)) {
    out.from_cache = true;
    return out;
  }
  make_writable_dir(cache);
  BuildLock lock(cache / (stem + "-" + key + ".lock"));
  if (!request.force && fs::exists(out.library, ec)) {  // built while we waited
    out.from_cache = true;
    return out;
  }
  const auto start = std::chrono::steady_clock::now();
  spdlog::info("compiling Stan model {} (once per model and toolchain; about a minute) into {}",
               model_file.string(), entry.string());
  const fs::path work = cache / (".build-" + stem + "-" + key + "-" + std::to_string(::getpid()));
  fs::remove_all(work, ec);
  fs::create_directories(work, ec);
  if (ec) throw ConfigError("cannot create '" + work.string() + "': " + ec.message());
  try {
    std::ofstream(work / (stem + ".stan")) << source;
    std::ofstream(work / "toolchain.txt")
        << toolchain.kind << "\n" << toolchain.stanc << "\n" << toolchain.cxx << ": "
        << run_captured({toolchain.cxx, "--version"}).substr(0, 200) << "\n";
    run_stanc(toolchain, model_file, stem, work);
    run_compiler(toolchain, stem, work, cache / ("failed-" + stem + "-" + key));
  } catch (...) {
    fs::remove_all(work, ec);
    throw;
  }
  if (request.force) fs::remove_all(entry, ec);
  fs::rename(work, entry, ec);
  if (ec) {
    fs::remove_all(work, ec);
    if (!fs::exists(out.library))
      throw ConfigError("cannot move the built Stan model into '" + entry.string() + "'");
  }
  fs::remove_all(cache / ("failed-" + stem + "-" + key), ec);
  out.build_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spdlog::info("compiled {} in {:.0f} s: {}", model_file.string(), out.build_seconds, out.library);
  return out;
}

}  // namespace pemc::stan_target
