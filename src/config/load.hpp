#pragma once
// Loading a pemc::v1::RunConfig from a file, remembering where each field came from.
//
// Formats, chosen by extension: text format (.pbtxt, .textproto, .txtpb) or binary (.pb).
// Every failure is a pemc::ConfigError naming the file, the line:column (text) and, where it can
// be worked out, the field path (e.g. `sampler.hmc.step_size`).
//
// Paths inside a config (output.path, data files, plugin libraries) are NOT resolved here: they are
// relative to the current working directory of the process, not to the config file.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "pemc/v1/config.pb.h"

namespace pemc::config {

// 1-based line and column of a field in a text config; 0 = unknown (binary configs).
struct FieldLocation {
  int line = 0;
  int column = 0;
};

// Field path -> where the value came from. Paths are dotted field names with repeated elements as
// `name[i]`, e.g. "sampler.hmc.step_size", "seeds.values[2]", "target.mixture.components[1].mean".
// A repeated field's bare path ("seeds.values") is located at its first occurrence.
class SourceMap {
 public:
  SourceMap() = default;
  explicit SourceMap(std::filesystem::path file) : file_(std::move(file)) {}

  // Records a location in the config file (first call for a path wins: fields are located where
  // they first appear).
  void set_location(const std::string& field_path, FieldLocation location);
  // Marks a field as coming from somewhere other than the file, e.g. "command line (--set a.b=1)".
  // Replaces any earlier location or origin of that path.
  void set_origin(const std::string& field_path, std::string origin);

  // "file.pbtxt:12:5", the origin text for overridden fields, or just "file.pb" when nothing is
  // known. Falls back to the nearest located parent ("a.b[2].c" -> "a.b[2]" -> "a.b" -> "a").
  std::string where(std::string_view field_path) const;
  // Exact location of a path in the file, if recorded (no parent fallback, no origins).
  FieldLocation location(std::string_view field_path) const;
  // Whether the path itself (not a parent) has a location or an origin.
  bool contains(std::string_view field_path) const { return find(field_path) != nullptr; }

  const std::filesystem::path& file() const { return file_; }

  // Makes the entries so far shared by every copy of this map: a copy then costs only what is
  // set on it afterwards (a study's runs each copy their file's map, so that copying must not
  // grow with the number of runs). load_config freezes the maps it returns.
  void freeze();

 private:
  struct Entry {
    FieldLocation location;
    std::string origin;  // non-empty: not from the file
  };
  using Entries = std::map<std::string, Entry, std::less<>>;
  const Entry* find(std::string_view field_path) const;

  std::filesystem::path file_;
  std::shared_ptr<const Entries> frozen_;  // shared between copies
  Entries own_;                            // set on this copy since; looked up first
};

// The parent of a field path: "a.b[2].c" -> "a.b[2]" -> "a.b" -> "a" -> "".
std::string parent_field_path(std::string_view field_path);

struct LoadedConfig {
  pemc::v1::RunConfig config;
  std::filesystem::path path;  // as given (used in messages and for the default run name)
  SourceMap source;
};

// Reads a config file; the format follows the extension. Throws ConfigError for an unknown
// extension (listing the accepted ones), an unreadable file (with strerror), syntax errors (all
// that protobuf reports, each with line:column and field path), unknown fields, or a corrupt
// binary file.
LoadedConfig load_config(const std::filesystem::path& path);

// Text-format parsing of an in-memory config; `display_path` is used in messages and SourceMap.
LoadedConfig parse_text_config(std::string_view text, const std::filesystem::path& display_path);

// Binary parsing of an in-memory config (no locations are known).
LoadedConfig parse_binary_config(std::string_view bytes, const std::filesystem::path& display_path);

// Extensions accepted by load_config, for messages and --help text.
inline constexpr std::string_view kTextExtensions[] = {".pbtxt", ".textproto", ".txtpb"};
inline constexpr std::string_view kBinaryExtension = ".pb";

}  // namespace pemc::config
