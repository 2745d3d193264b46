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
#include "stan_target/model_cache.hpp"
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

// Replaces every quoted mention of the model's safe copy in stanc's messages by the user's path.
std::string with_user_path(std::string text, const std::string& copy, const std::string& user) {
  const std::string from = "'" + copy + "'", to = "'" + user + "'";
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// stanc runs inside `work` on the program's copy "<stem>.stan" (written by the caller), so the only
// file name that reaches the generated C++ (in its error locations) is that safe one: no user path
// is pasted into code (a name such as x"); std::system("...") would be).
void run_stanc(const Toolchain& t, const fs::path& model_file, const std::string& stem,
               const fs::path& work) {
  const fs::path log = work / "stanc.log";
  const std::string copy = stem + ".stan";
  std::vector<std::string> argv{t.stanc};
  argv.insert(argv.end(), t.stanc_flags.begin(), t.stanc_flags.end());
  std::error_code ec;
  const fs::path parent = fs::absolute(model_file, ec).parent_path();
  argv.push_back("--include_paths=" + parent.string());
  argv.push_back("--name=" + stem + "_model");
  argv.push_back("--o=" + stem + ".hpp");
  argv.push_back(copy);
  const int rc = run_logged(argv, log.string(), work.string());
  if (rc != 0 || !fs::exists(work / (stem + ".hpp")))
    throw ConfigError("target.stan.model_file: stanc rejected '" + model_file.string() + "':" +
                      with_user_path(excerpt(read_text(log), false, 30), copy,
                                     model_file.string()));
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

namespace {

// The cache's library when it is there and matches the SHA-256 recorded when it was built
// (out.from_cache, out.sha256 set). One that does not match is not loaded: where the cache is
// writable it is rebuilt (`rebuild` set), where it is read-only the run is refused.
bool found_intact(BuiltModel& out, const fs::path& cache, bool& rebuild) {
  std::error_code ec;
  if (!fs::exists(out.library, ec)) return false;
  std::string why;
  if (const auto hash = verified_library_hash(out.library, why)) {
    out.from_cache = true;
    out.sha256 = *hash;
    return true;
  }
  if (!cache_is_writable(cache))
    throw ConfigError("the cached Stan model '" + out.library + "' is not loaded: " + why +
                      "; the cache is read-only here: rebuild it where it is writable "
                      "(pemc-stan build --force MODEL) or remove '" + out.entry + "'");
  spdlog::warn("the cached Stan model {} is not loaded: {}; compiling it again", out.library, why);
  rebuild = true;
  return false;
}

struct ModelSource {
  fs::path file;
  std::string text;
  std::string stem;  // the safe name of its copy, of the model class and of the cache entry
  std::string key;   // hash of the text and the toolchain
};

// Compiles the model in a private folder of the cache, records the library's SHA-256 and renames
// the folder into place (replacing a rebuilt entry).
void compile_into_cache(const ModelSource& m, const Toolchain& toolchain, const fs::path& cache,
                        bool rebuild, BuiltModel& out) {
  const auto start = std::chrono::steady_clock::now();
  spdlog::info("compiling Stan model {} (once per model and toolchain; about a minute) into {}",
               m.file.string(), out.entry);
  const std::string name = m.stem + "-" + m.key;
  const fs::path work = cache / (".build-" + name + "-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(work, ec);
  fs::create_directories(work, ec);
  if (ec) throw ConfigError("cannot create '" + work.string() + "': " + ec.message());
  try {
    std::ofstream(work / (m.stem + ".stan")) << m.text;
    std::ofstream(work / "toolchain.txt")
        << toolchain.kind << "\n" << toolchain.stanc << "\n" << toolchain.cxx << ": "
        << run_captured({toolchain.cxx, "--version"}).substr(0, 200) << "\n";
    run_stanc(toolchain, m.file, m.stem, work);
    run_compiler(toolchain, m.stem, work, cache / ("failed-" + name));
    out.sha256 = record_library_hash(work / fs::path(out.library).filename());
  } catch (...) {
    fs::remove_all(work, ec);
    throw;
  }
  if (rebuild) fs::remove_all(out.entry, ec);
  fs::rename(work, out.entry, ec);
  if (ec) {
    fs::remove_all(work, ec);
    std::string why;
    if (!verified_library_hash(out.library, why))
      throw ConfigError("cannot move the built Stan model into '" + out.entry + "'");
  }
  fs::remove_all(cache / ("failed-" + name), ec);
  out.build_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spdlog::info("compiled {} in {:.0f} s: {}", m.file.string(), out.build_seconds, out.library);
}

ModelSource read_model(const std::string& model_file, const Toolchain& toolchain) {
  if (model_file.empty()) throw ConfigError("target.stan.model_file: required");
  std::error_code ec;
  if (!fs::is_regular_file(model_file, ec) || ::access(model_file.c_str(), R_OK) != 0)
    throw ConfigError("target.stan.model_file: '" + model_file +
                      "' does not exist or is not a readable file");
  ModelSource m;
  m.file = model_file;
  m.text = read_text(m.file);
  m.stem = model_stem(m.file);
  ContentHash h;
  h.add(m.text);
  h.add(toolchain.fingerprint);
  m.key = h.hex().substr(0, 20);
  return m;
}

}  // namespace

BuiltModel build_model(const BuildRequest& request) {
  const Toolchain toolchain = find_toolchain();
  const ModelSource m = read_model(request.model_file, toolchain);
  const fs::path cache = request.cache_dir.empty() ? default_cache_dir() : request.cache_dir;
  open_private_cache(cache);
  const fs::path entry = cache / (m.stem + "-" + m.key);
  BuiltModel out;
  out.entry = entry.string();
  out.library = (entry / ("lib" + m.stem + ".so")).string();
  bool rebuild = request.force;
  if (!rebuild && found_intact(out, cache, rebuild)) return out;
  if (!cache_is_writable(cache))
    throw ConfigError("the Stan model cache '" + cache.string() + "' cannot be written (" +
                      std::strerror(EACCES) +
                      "); choose another with target.stan.cache_dir or PEMC_STAN_CACHE");
  BuildLock lock(cache / (m.stem + "-" + m.key + ".lock"));
  if (!rebuild && found_intact(out, cache, rebuild)) return out;  // built while we waited
  compile_into_cache(m, toolchain, cache, rebuild, out);
  return out;
}

}  // namespace pemc::stan_target
