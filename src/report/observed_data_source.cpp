#include "report/observed_data_source.hpp"

#include "core/error.hpp"
#include "core/regular_file.hpp"
#include "core/sha256.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;

constexpr const char* kField = "target.stan.data_file";
constexpr const char* kHint = "pass --data FILE with the run's data or --no-observed-data";

std::string short_hash(const std::string& hex) { return hex.substr(0, 16) + "..."; }

// The whole file, refused when it is not a regular file or larger than kMaxObservedDataBytes.
// IoError (naming `what` and the path) when it cannot be opened or read.
std::string read_data_file(const fs::path& path, const std::string& what) {
  std::string text;
  read_regular_file(path, what, kMaxObservedDataBytes,
                    [&](const char* data, std::size_t n) { text.append(data, n); });
  return text;
}

// The header's record of the file the config names `path` (Header.inputs names each file by the
// path its config gives), or nullptr.
const v1::InputFile* recorded_input(const v1::Header& header, const std::string& path) {
  for (const auto& f : header.inputs().files())
    if (f.path() == path) return &f;
  return nullptr;
}

}  // namespace

fs::path resolve_run_path(const v1::Header& header, const std::string& path) {
  const fs::path p(path);
  if (p.is_absolute() || header.working_directory().empty()) return p;
  return fs::path(header.working_directory()) / p;
}

ObservedDataSource observed_data_source(const v1::Header& header, const v1::RunConfig& run,
                                        const std::string& run_id, const fs::path& data_override) {
  ObservedDataSource s;
  if (!run.target().has_stan() || run.target().stan().data_file().empty()) return s;
  s.run_data_file = run.target().stan().data_file();
  const v1::InputFile* recorded = header.has_inputs() ? recorded_input(header, s.run_data_file)
                                                      : nullptr;
  if (recorded) s.recorded_sha256 = recorded->sha256();
  const std::string run_is = "run '" + run_id + "': ";

  if (!data_override.empty()) {
    try {
      s.text = read_data_file(data_override, "data file");
    } catch (const UntrustedInputError& e) {
      throw UntrustedInputError("export --data: " + std::string(e.what()));
    } catch (const Error& e) {
      throw ConfigError("export --data: " + std::string(e.what()));
    }
    s.kind = ObservedDataSource::Kind::kRead;
    s.path = data_override;
    s.sha256 = sha256_hex(s.text);
    if (!recorded)
      s.note = run_is + "observed_data is from --data " + data_override.string() +
               ", which cannot be compared with the run's " + kField + " " + s.run_data_file +
               ": the file does not record its data files' hashes";
    else if (s.sha256 != s.recorded_sha256)
      s.note = run_is + "observed_data is from --data " + data_override.string() +
               ", whose content is not the run's " + kField + " " + s.run_data_file +
               " (sha256 " + short_hash(s.recorded_sha256) + " recorded, " +
               short_hash(s.sha256) + " in --data)";
    return s;
  }

  if (!recorded) {
    s.kind = ObservedDataSource::Kind::kNotRecorded;
    return s;
  }
  s.path = resolve_run_path(header, s.run_data_file);
  try {
    s.text = read_data_file(s.path, kField);
  } catch (const UntrustedInputError& e) {
    throw UntrustedInputError(run_is + e.what() + "; " + kHint);
  } catch (const Error& e) {
    throw ConfigError(run_is + kField + " " + s.path.string() +
                      " cannot be read for observed_data (" + e.what() + "); " + kHint);
  }
  s.sha256 = sha256_hex(s.text);
  if (s.sha256 != s.recorded_sha256)
    throw ConfigError(run_is + kField + " " + s.path.string() + " changed since the run (sha256 " +
                      short_hash(s.recorded_sha256) + " recorded, " + short_hash(s.sha256) +
                      " now); " + kHint);
  s.kind = ObservedDataSource::Kind::kRead;
  return s;
}

}  // namespace pemc::report
