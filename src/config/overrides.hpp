#pragma once
// Command-line changes to a loaded config (pemc-dist --output/--iterations/--warmup/--seeds/--set).
// Overridden fields are marked in the SourceMap ("command line (--set a.b=c)") so that a later
// validation error about them points at the command line rather than the file.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/load.hpp"
#include "core/error.hpp"

namespace pemc::config {

// A --set whose path goes into a member of a oneof other than the one the config has (e.g.
// sampler.nuts.* on a config whose sampler is pseudo_extended): --set never switches a oneof, since
// that would silently replace the configured sampler, target or init by another one.
class OneofMismatch : public ConfigError {
 public:
  OneofMismatch(const std::string& message, std::string reason)
      : ConfigError(message), reason_(std::move(reason)) {}
  // Short form for a study's per-run note, e.g. "its sampler is pseudo_extended, not nuts".
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

struct CommandLineOverrides {
  std::optional<std::string> output;       // --output PATH
  std::optional<std::int64_t> iterations;  // --iterations N
  std::optional<std::int64_t> warmup;      // --warmup N
  std::optional<int> seeds;                // --seeds K: the first K of the config's seed values (error
                                           //   if K > number of values), or K seeds from its base
                                           //   when the config uses base/count
  std::vector<std::string> sets;           // --set FIELD.PATH=VALUE, repeatable, applied in order
};

// Applies the --set assignments first (in order), then the dedicated flags, which therefore win.
// Values are not range-checked here (validate() does that, naming the command line as the source);
// anything that cannot be applied at all is a ConfigError naming the override.
// With skip_oneof_mismatches (a run of a study), a --set that does not fit this run's oneof choices
// (OneofMismatch) is skipped instead of thrown. Returns, per --set in order, "" when it was applied
// or the OneofMismatch's reason when it was skipped.
std::vector<std::string> apply_overrides(LoadedConfig& c, const CommandLineOverrides& o,
                                         bool skip_oneof_mismatches = false);

// Sets one scalar field reached by a dotted path of singular message fields, e.g.
// "sampler.hmc.step_size=0.05". A repeated field of numbers, bools or enums takes a whole list,
// "init.uniform_box.lower=[0, -5, 2]" ("[]" empties it), or a single value as a list of one. Missing intermediate messages are created; a oneof that is not set
// yet gets the branch the path names, but a path into a oneof member other than the one the config
// has is refused (OneofMismatch naming the configured member and, where one exists, the path that
// reaches the same field inside it). Values: decimal numbers for numeric fields ("inf"/"nan" parse,
// validate() rejects them), true/false/1/0 for bools, the enum value's name for enums (an unknown
// name lists the valid ones), and the text after '=' verbatim for strings. Whitespace around the
// path and around numeric/bool/enum values is ignored.
// Returns the field path that was set. Throws ConfigError naming the assignment for: missing '=',
// an unknown field (listing the valid names at that level), a path through a non-message or
// repeated field, a message-typed or repeated-string leaf, another oneof member, a malformed list,
// or an unparseable/out-of-range value (in a list: any element). On error the config is unchanged.
std::string apply_set_override(pemc::v1::RunConfig& config, std::string_view assignment);

// The seeds of a run: `seeds.values`, or base, base+1, ..., base+count-1.
std::vector<std::uint64_t> expand_seeds(const pemc::v1::RunConfig& config);

}  // namespace pemc::config
