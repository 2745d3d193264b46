#include "config/overrides.hpp"

#include <google/protobuf/descriptor.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <variant>

#include "config/problems.hpp"
#include "core/error.hpp"

namespace pemc::config {

namespace pb = google::protobuf;

namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

[[noreturn]] void fail(std::string_view assignment, const std::string& reason) {
  throw ConfigError("--set '" + std::string(assignment) + "': " + reason);
}

std::string field_names(const pb::Descriptor* d) {
  std::string s;
  for (int i = 0; i < d->field_count(); ++i) s += (i ? ", " : "") + d->field(i)->name();
  return s;
}

std::string type_name(const pb::FieldDescriptor* f) {
  if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) return f->message_type()->full_name();
  if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM) return f->enum_type()->full_name();
  return f->type_name();
}

template <typename T>
T parse_integer(std::string_view assignment, std::string_view path, std::string_view text) {
  T value{};
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    fail(assignment, std::string(path) + ": value '" + std::string(text) + "' is out of range for " +
                         (std::is_signed_v<T> ? "a signed " : "an unsigned ") +
                         std::to_string(sizeof(T) * 8) + "-bit integer [" +
                         std::to_string(std::numeric_limits<T>::min()) + ", " +
                         std::to_string(std::numeric_limits<T>::max()) + "]");
  }
  if (ec != std::errc() || ptr != end || text.empty()) {
    // Distinguish "-1" for an unsigned field: from_chars stops at '-'.
    if (!std::is_signed_v<T> && !text.empty() && text.front() == '-') {
      fail(assignment, std::string(path) + ": value '" + std::string(text) +
                           "' is negative but the field is unsigned");
    }
    fail(assignment, std::string(path) + ": value '" + std::string(text) +
                         "' is not an integer (the field is " +
                         (std::is_signed_v<T> ? "int" : "uint") + std::to_string(sizeof(T) * 8) +
                         ")");
  }
  return value;
}

double parse_double(std::string_view assignment, std::string_view path, std::string_view text,
                    bool is_float) {
  double value = 0.0;
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);  // from_chars has no '+'
  const auto* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    fail(assignment, std::string(path) + ": value '" + std::string(text) +
                         "' is out of range for a double");
  }
  if (ec != std::errc() || ptr != end || digits.empty()) {
    fail(assignment, std::string(path) + ": value '" + std::string(text) + "' is not a number (the "
                         "field is " + (is_float ? "float" : "double") + ")");
  }
  if (is_float && std::isfinite(value) &&
      std::fabs(value) > static_cast<double>(std::numeric_limits<float>::max())) {
    fail(assignment, std::string(path) + ": value '" + std::string(text) +
                         "' is out of range for a float");
  }
  return value;
}

bool parse_bool(std::string_view assignment, std::string_view path, std::string_view text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  fail(assignment, std::string(path) + ": value '" + std::string(text) +
                       "' is not a bool (use true, false, 1 or 0)");
}

struct ResolvedPath {
  std::vector<const pb::FieldDescriptor*> fields;  // the message path then the leaf
  std::string path;
};

ResolvedPath resolve(std::string_view assignment, std::string_view path) {
  ResolvedPath out;
  out.path = std::string(path);
  const pb::Descriptor* d = pemc::v1::RunConfig::descriptor();
  std::string so_far;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    const std::string_view name =
        path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    const std::string where = so_far.empty() ? "the top level (RunConfig)" : "'" + so_far + "'";
    if (name.empty()) fail(assignment, "empty field name in path '" + std::string(path) + "'");
    if (!d) {
      fail(assignment, "'" + so_far + "' is not a message, so it has no field '" +
                           std::string(name) + "'");
    }
    const pb::FieldDescriptor* f = d->FindFieldByName(std::string(name));
    if (!f) {
      std::string hint;
      if (name.find('[') != std::string_view::npos) hint = " (repeated elements cannot be set)";
      fail(assignment, "unknown field '" + std::string(name) + "' at " + where + hint +
                           "; valid fields: " + field_names(d));
    }
    so_far = so_far.empty() ? std::string(name) : so_far + "." + std::string(name);
    out.fields.push_back(f);
    const bool last = dot == std::string_view::npos;
    const bool scalar = f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE;
    if (f->is_repeated() && !(last && scalar && f->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING)) {
      fail(assignment, "'" + so_far + "' is a repeated field (" + type_name(f) +
                           "); --set sets singular fields and whole lists of numbers, bools or "
                           "enums — edit the config file instead");
    }
    if (last) {
      if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        fail(assignment, "'" + so_far + "' is a message (" + type_name(f) +
                             "), not a value; set one of its fields: " +
                             field_names(f->message_type()));
      }
      return out;
    }
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      fail(assignment, "'" + so_far + "' is a " + type_name(f) +
                           ", not a message, so the path cannot continue past it");
    }
    d = f->message_type();
    start = dot + 1;
  }
}

struct EnumNumber {
  int number;
};

using ParsedValue = std::variant<std::monostate, double, float, std::int32_t, std::int64_t,
                                 std::uint32_t, std::uint64_t, bool, std::string, EnumNumber>;

// One value of the leaf's type from `value` (trimmed; `raw_value` is the untrimmed text, which a
// string field takes verbatim).
ParsedValue parse_value(std::string_view assignment, std::string_view path,
                        const pb::FieldDescriptor* leaf, std::string_view value,
                        std::string_view raw_value) {
  using CT = pb::FieldDescriptor::CppType;
  switch (leaf->cpp_type()) {
    case CT::CPPTYPE_DOUBLE: return parse_double(assignment, path, value, false);
    case CT::CPPTYPE_FLOAT: return static_cast<float>(parse_double(assignment, path, value, true));
    case CT::CPPTYPE_INT32: return parse_integer<std::int32_t>(assignment, path, value);
    case CT::CPPTYPE_INT64: return parse_integer<std::int64_t>(assignment, path, value);
    case CT::CPPTYPE_UINT32: return parse_integer<std::uint32_t>(assignment, path, value);
    case CT::CPPTYPE_UINT64: return parse_integer<std::uint64_t>(assignment, path, value);
    case CT::CPPTYPE_BOOL: return parse_bool(assignment, path, value);
    case CT::CPPTYPE_STRING: return std::string(raw_value);
    case CT::CPPTYPE_ENUM: {
      const auto* v = leaf->enum_type()->FindValueByName(std::string(value));
      if (!v) {
        std::string names;
        for (int i = 0; i < leaf->enum_type()->value_count(); ++i) {
          names += (i ? ", " : "") + leaf->enum_type()->value(i)->name();
        }
        fail(assignment, std::string(path) + ": '" + std::string(value) + "' is not a value of " +
                             leaf->enum_type()->full_name() + "; valid: " + names);
      }
      return EnumNumber{v->number()};
    }
    case CT::CPPTYPE_MESSAGE: break;  // excluded by resolve()
  }
  return {};
}

// The elements of a repeated field's new value: "[a, b, c]" (the whole list; "[]" empties it) or a
// single value "a" (a list of one). Elements are trimmed; an empty element is an error.
std::vector<std::string_view> list_elements(std::string_view assignment, std::string_view path,
                                            std::string_view value) {
  const bool open = !value.empty() && value.front() == '[';
  const bool close = !value.empty() && value.back() == ']';
  if (open != close) {
    fail(assignment, std::string(path) + ": a list is written [a, b, ...] (got '" +
                         std::string(value) + "')");
  }
  if (!open) return {value};
  const std::string_view inner = trim(value.substr(1, value.size() - 2));
  std::vector<std::string_view> out;
  if (inner.empty()) return out;
  std::size_t start = 0;
  while (true) {
    const auto comma = inner.find(',', start);
    const std::string_view element = trim(inner.substr(start, comma == std::string_view::npos
                                                                  ? std::string_view::npos
                                                                  : comma - start));
    if (element.empty()) {
      fail(assignment, std::string(path) + ": empty element in the list '" + std::string(value) + "'");
    }
    out.push_back(element);
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

void set_value(const pb::Reflection& refl, pb::Message* msg, const pb::FieldDescriptor* f,
               const ParsedValue& value) {
  std::visit(
      [&](auto&& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) refl.SetDouble(msg, f, v);
        else if constexpr (std::is_same_v<T, float>) refl.SetFloat(msg, f, v);
        else if constexpr (std::is_same_v<T, std::int32_t>) refl.SetInt32(msg, f, v);
        else if constexpr (std::is_same_v<T, std::int64_t>) refl.SetInt64(msg, f, v);
        else if constexpr (std::is_same_v<T, std::uint32_t>) refl.SetUInt32(msg, f, v);
        else if constexpr (std::is_same_v<T, std::uint64_t>) refl.SetUInt64(msg, f, v);
        else if constexpr (std::is_same_v<T, bool>) refl.SetBool(msg, f, v);
        else if constexpr (std::is_same_v<T, std::string>) refl.SetString(msg, f, v);
        else if constexpr (std::is_same_v<T, EnumNumber>) refl.SetEnumValue(msg, f, v.number);
      },
      value);
}

void add_value(const pb::Reflection& refl, pb::Message* msg, const pb::FieldDescriptor* f,
               const ParsedValue& value) {
  std::visit(
      [&](auto&& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) refl.AddDouble(msg, f, v);
        else if constexpr (std::is_same_v<T, float>) refl.AddFloat(msg, f, v);
        else if constexpr (std::is_same_v<T, std::int32_t>) refl.AddInt32(msg, f, v);
        else if constexpr (std::is_same_v<T, std::int64_t>) refl.AddInt64(msg, f, v);
        else if constexpr (std::is_same_v<T, std::uint32_t>) refl.AddUInt32(msg, f, v);
        else if constexpr (std::is_same_v<T, std::uint64_t>) refl.AddUInt64(msg, f, v);
        else if constexpr (std::is_same_v<T, bool>) refl.AddBool(msg, f, v);
        else if constexpr (std::is_same_v<T, std::string>) refl.AddString(msg, f, v);
        else if constexpr (std::is_same_v<T, EnumNumber>) refl.AddEnumValue(msg, f, v.number);
      },
      value);
}

// The descriptors along `path` from RunConfig, or empty when it does not resolve (no throw).
std::vector<const pb::FieldDescriptor*> try_resolve(std::string_view path) {
  std::vector<const pb::FieldDescriptor*> out;
  const pb::Descriptor* d = pemc::v1::RunConfig::descriptor();
  std::size_t start = 0;
  while (true) {
    if (!d) return {};
    const auto dot = path.find('.', start);
    const std::string name(
        path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    const pb::FieldDescriptor* f = d->FindFieldByName(name);
    if (!f || f->is_repeated()) return {};
    out.push_back(f);
    if (dot == std::string_view::npos)
      return f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE
                 ? std::vector<const pb::FieldDescriptor*>{}
                 : out;
    d = f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE ? f->message_type() : nullptr;
    start = dot + 1;
  }
}

struct Mismatch {
  std::size_t index;                      // into the path's fields: the member the path names
  const pb::FieldDescriptor* configured;  // the member the config has
};

// The first oneof along `fields` whose configured member differs from the path's, if any.
std::optional<Mismatch> find_mismatch(const pb::Message& config,
                                      const std::vector<const pb::FieldDescriptor*>& fields) {
  const pb::Message* m = &config;
  for (std::size_t i = 0; i < fields.size() && m; ++i) {
    const auto* f = fields[i];
    const pb::Reflection* refl = m->GetReflection();
    if (const pb::OneofDescriptor* o = f->real_containing_oneof()) {
      const pb::FieldDescriptor* set = refl->GetOneofFieldDescriptor(*m, o);
      if (set && set != f) return Mismatch{i, set};
    }
    if (i + 1 < fields.size()) m = refl->HasField(*m, f) ? &refl->GetMessage(*m, f) : nullptr;
  }
  return std::nullopt;
}

std::string join(const std::vector<const pb::FieldDescriptor*>& fields, std::size_t begin,
                 std::size_t end) {
  std::string s;
  for (std::size_t i = begin; i < end; ++i) s += (s.empty() ? "" : ".") + fields[i]->name();
  return s;
}

// Throws OneofMismatch when the path enters a oneof member other than the configured one.
void check_oneofs(const pemc::v1::RunConfig& config, std::string_view assignment,
                  const std::vector<const pb::FieldDescriptor*>& fields) {
  const auto mm = find_mismatch(config, fields);
  if (!mm) return;
  const auto* wanted = fields[mm->index];
  const std::string parent = join(fields, 0, mm->index);
  const std::string owner = parent.empty() ? "the config" : "the config's " + parent;
  const std::string kind = wanted->containing_oneof()->name();
  std::string reason = (parent.empty() ? std::string("the config") : "its " + parent) + " is " +
                       mm->configured->name() + ", not " + wanted->name();
  std::string msg = join(fields, 0, mm->index + 1) + ": " + owner + " is " +
                    mm->configured->name() + ", not " + wanted->name() + " (" +
                    (parent.empty() ? "" : parent + ".") + kind +
                    " is a oneof; --set never switches one, as that would replace the configured " +
                    (parent.empty() ? kind : parent) + ": edit the config to change it)";
  // The same field inside the configured member (e.g. sampler.pseudo_extended.nuts.step_size).
  if (mm->configured->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
    const std::string inside = (parent.empty() ? "" : parent + ".") + mm->configured->name() + "." +
                               join(fields, mm->index, fields.size());
    const auto alt = try_resolve(inside);
    if (!alt.empty() && !find_mismatch(config, alt)) msg += "; did you mean " + inside + "?";
  }
  throw OneofMismatch("--set '" + std::string(assignment) + "': " + msg, reason);
}

}  // namespace

std::string apply_set_override(pemc::v1::RunConfig& config, std::string_view assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    fail(assignment, "expected FIELD.PATH=VALUE (missing '='), e.g. sampler.hmc.step_size=0.05");
  }
  const std::string_view path = trim(assignment.substr(0, eq));
  const std::string_view raw_value = assignment.substr(eq + 1);
  const std::string_view value = trim(raw_value);
  if (path.empty()) fail(assignment, "missing field path before '='");
  const ResolvedPath r = resolve(assignment, path);
  const pb::FieldDescriptor* leaf = r.fields.back();
  check_oneofs(config, assignment, r.fields);

  // Parse before touching the config so that a bad value leaves it unchanged.
  std::vector<ParsedValue> values;
  if (leaf->is_repeated()) {
    for (const std::string_view element : list_elements(assignment, path, value))
      values.push_back(parse_value(assignment, path, leaf, element, element));
  } else {
    values.push_back(parse_value(assignment, path, leaf, value, raw_value));
  }

  pb::Message* msg = &config;
  for (std::size_t i = 0; i + 1 < r.fields.size(); ++i) {
    msg = msg->GetReflection()->MutableMessage(msg, r.fields[i]);
  }
  const pb::Reflection* refl = msg->GetReflection();
  if (leaf->is_repeated()) {
    refl->ClearField(msg, leaf);
    for (const auto& v : values) add_value(*refl, msg, leaf, v);
  } else {
    set_value(*refl, msg, leaf, values.front());
  }
  return r.path;
}

std::vector<std::string> apply_overrides(LoadedConfig& c, const CommandLineOverrides& o,
                                         bool skip_oneof_mismatches) {
  std::vector<std::string> skipped;
  for (const auto& s : o.sets) {
    std::string path;
    try {
      path = apply_set_override(c.config, s);
      skipped.emplace_back();
    } catch (const OneofMismatch& e) {
      if (!skip_oneof_mismatches) throw;
      skipped.push_back(e.reason());
      continue;
    }
    const std::string origin = "command line (--set " + s + ")";
    c.source.set_origin(path, origin);
    // A list replaces the file's elements too: none of them is located in the file any more.
    for (int i = 0; c.source.contains(el(path, i)); ++i) c.source.set_origin(el(path, i), origin);
    // Messages the override created (e.g. sampler.nuts.adaptation when the file had only
    // sampler.nuts) are located at the command line too, so problems inside them do not point into
    // the file.
    for (std::string p = parent_field_path(path); !p.empty(); p = parent_field_path(p)) {
      if (!c.source.contains(p)) c.source.set_origin(p, origin);
    }
  }
  if (o.output) {
    c.config.mutable_output()->set_path(*o.output);
    c.source.set_origin("output.path", "command line (--output " + *o.output + ")");
  }
  if (o.iterations) {
    c.config.set_iterations(*o.iterations);
    c.source.set_origin("iterations",
                        "command line (--iterations " + std::to_string(*o.iterations) + ")");
  }
  if (o.warmup) {
    c.config.set_warmup(*o.warmup);
    c.source.set_origin("warmup", "command line (--warmup " + std::to_string(*o.warmup) + ")");
  }
  if (o.seeds) {
    const int k = *o.seeds;
    const std::string flag = "--seeds " + std::to_string(k);
    if (k < 1) throw ConfigError(flag + ": the number of seeds must be >= 1");
    auto& seeds = *c.config.mutable_seeds();
    if (seeds.values_size() > 0) {
      if (k > seeds.values_size()) {
        throw ConfigError(flag + ": the config lists only " + std::to_string(seeds.values_size()) +
                          " seed value(s) at " + c.source.where("seeds.values") +
                          "; --seeds can only select the first K of them");
      }
      seeds.mutable_values()->Truncate(k);
    } else {
      seeds.set_count(k);
      c.source.set_origin("seeds.count", "command line (" + flag + ")");
    }
  }
  return skipped;
}

std::vector<std::uint64_t> expand_seeds(const pemc::v1::RunConfig& config) {
  const auto& s = config.seeds();
  if (s.values_size() > 0) return {s.values().begin(), s.values().end()};
  std::vector<std::uint64_t> out;
  if (s.count() > 0) {
    out.reserve(static_cast<std::size_t>(s.count()));
    for (std::int32_t i = 0; i < s.count(); ++i) out.push_back(s.base() + static_cast<std::uint64_t>(i));
  }
  return out;
}

}  // namespace pemc::config
