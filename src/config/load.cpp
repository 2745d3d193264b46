#include "config/load.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "core/regular_file.hpp"

namespace pemc::config {

namespace pb = google::protobuf;

// ---------------------------------------------------------------------------------------------
// SourceMap
// ---------------------------------------------------------------------------------------------

const SourceMap::Entry* SourceMap::find(std::string_view field_path) const {
  if (const auto it = own_.find(field_path); it != own_.end()) return &it->second;
  if (frozen_)
    if (const auto it = frozen_->find(field_path); it != frozen_->end()) return &it->second;
  return nullptr;
}

void SourceMap::set_location(const std::string& field_path, FieldLocation location) {
  if (!find(field_path)) own_.emplace(field_path, Entry{location, {}});
}

void SourceMap::set_origin(const std::string& field_path, std::string origin) {
  own_.insert_or_assign(field_path, Entry{FieldLocation{}, std::move(origin)});
}

void SourceMap::freeze() {
  if (own_.empty()) return;
  auto merged = frozen_ ? std::make_shared<Entries>(*frozen_) : std::make_shared<Entries>();
  for (auto& [path, entry] : own_) merged->insert_or_assign(path, std::move(entry));
  own_.clear();
  frozen_ = std::move(merged);
}

FieldLocation SourceMap::location(std::string_view field_path) const {
  const Entry* e = find(field_path);
  if (!e || !e->origin.empty()) return {};
  return e->location;
}

std::string SourceMap::where(std::string_view field_path) const {
  std::string path(field_path);
  while (!path.empty()) {
    if (const Entry* e = find(path)) {
      if (!e->origin.empty()) return e->origin;
      if (e->location.line > 0) {
        return file_.string() + ":" + std::to_string(e->location.line) + ":" +
               std::to_string(e->location.column);
      }
    }
    path = parent_field_path(path);
  }
  return file_.string();
}

std::string parent_field_path(std::string_view field_path) {
  if (field_path.empty()) return {};
  if (field_path.back() == ']') {
    const auto open = field_path.rfind('[');
    return std::string(field_path.substr(0, open == std::string_view::npos ? 0 : open));
  }
  const auto dot = field_path.rfind('.');
  return dot == std::string_view::npos ? std::string() : std::string(field_path.substr(0, dot));
}

namespace {

// Configs are small; anything larger than this is a mistake (a data file passed as config?) and
// is refused before it is read into memory.
constexpr std::uintmax_t kMaxConfigBytes = 256u << 20;

std::string join_path(const std::string& prefix, std::string_view name) {
  return prefix.empty() ? std::string(name) : prefix + "." + std::string(name);
}

// ---------------------------------------------------------------------------------------------
// A lenient walk over the tokens of a text-format message, tracking the field path.
//
// protobuf's own error messages do not say which field they are about, and its ParseInfoTree
// records one location per `name: [a, b, c]` list rather than one per element. This walk fills
// both gaps: it records the first location of every path it sees (list elements included) and,
// given a position, says which field path the text at that position belongs to. It follows the
// descriptor to know which fields are repeated (indices) and never fails: unknown names simply
// get no index.
// ---------------------------------------------------------------------------------------------
class NullErrorCollector final : public pb::io::ErrorCollector {
 public:
  void AddError(int, pb::io::ColumnNumber, const std::string&) override {}
};

class TextWalker {
 public:
  struct Result {
    std::map<std::string, FieldLocation> locations;  // 1-based
    std::string path_at_stop;                        // only when a stop position was given
    std::string last_field_name;                     // the last field name read before the stop
    std::string last_field_path;                     // ... and its path
  };

  // stop: 0-based (line, column) of interest, e.g. of a parse error.
  static Result walk(std::string_view text, const pb::Descriptor* root,
                     std::optional<std::pair<int, int>> stop) {
    TextWalker w(root);
    pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
    NullErrorCollector errors;
    pb::io::Tokenizer tok(&input, &errors);
    tok.set_comment_style(pb::io::Tokenizer::SH_COMMENT_STYLE);
    tok.set_allow_f_after_float(true);
    tok.set_require_space_after_number(false);
    bool stopped = false;
    while (tok.Next()) {
      const auto& t = tok.current();
      // Stop at the first token that starts at or after the position, or contains it (the
      // tokenizer reports e.g. an unterminated string at its end).
      if (stop && (std::make_pair(t.line, t.column) >= *stop ||
                   (t.line == stop->first && t.end_column >= stop->second))) {
        w.result_.path_at_stop = w.path_at(&t);
        stopped = true;
        break;
      }
      w.consume(t);
    }
    if (stop && !stopped) w.result_.path_at_stop = w.path_at(nullptr);
    return std::move(w.result_);
  }

 private:
  enum class State { kName, kAfterName, kAfterColon, kList, kNegative, kExtension };
  struct Frame {
    const pb::Descriptor* descriptor = nullptr;  // nullptr below an unknown field
    std::string path;
    std::map<std::string, int> counts;  // elements seen per repeated field name
    bool in_list = false;               // this frame is inside `name: [ ... ]`
    std::string list_name;
    bool list_repeated = false;
  };

  explicit TextWalker(const pb::Descriptor* root) { frames_.push_back(make_frame(root, "")); }

  static Frame make_frame(const pb::Descriptor* d, std::string path) {
    Frame f;
    f.descriptor = d;
    f.path = std::move(path);
    return f;
  }

  Frame& top() { return frames_.back(); }

  const pb::FieldDescriptor* find(const Frame& f, const std::string& name) const {
    return f.descriptor ? f.descriptor->FindFieldByName(name) : nullptr;
  }

  std::string element_path(Frame& f, const std::string& name, bool repeated, bool take) {
    std::string p = join_path(f.path, name);
    if (repeated) {
      int& n = f.counts[name];
      p += "[" + std::to_string(n) + "]";
      if (take) ++n;
    }
    return p;
  }

  void record(const std::string& path, const pb::io::Tokenizer::Token& t) {
    result_.locations.try_emplace(path, FieldLocation{t.line + 1, t.column + 1});
  }

  void push_message() {
    const pb::Descriptor* d =
        (field_ && field_->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) ? field_->message_type()
                                                                               : nullptr;
    frames_.push_back(make_frame(d, path_));
    state_ = State::kName;
  }

  void pop_message() {
    if (frames_.size() > 1) frames_.pop_back();
    state_ = top().in_list ? State::kList : State::kName;
  }

  void value_done() { state_ = top().in_list ? State::kList : State::kName; }

  void start_list_element(const pb::io::Tokenizer::Token& t) {
    Frame& f = top();
    path_ = element_path(f, f.list_name, f.list_repeated, true);
    record(path_, t);
  }

  void consume(const pb::io::Tokenizer::Token& t) {
    using Type = pb::io::Tokenizer::TokenType;
    const bool open = t.text == "{" || t.text == "<";
    const bool close = t.text == "}" || t.text == ">";
    switch (state_) {
      case State::kName:
        if (t.type == Type::TYPE_IDENTIFIER) {
          field_ = find(top(), t.text);
          name_ = t.text;
          path_ = element_path(top(), t.text, field_ && field_->is_repeated(), true);
          record(path_, t);
          if (field_ && field_->is_repeated()) record(join_path(top().path, t.text), t);
          result_.last_field_name = name_;
          result_.last_field_path = path_;
          state_ = State::kAfterName;
        } else if (t.text == "[") {
          state_ = State::kExtension;  // [extension.name] or [type.url/Name]: skipped
        } else if (close) {
          pop_message();
        }
        return;
      case State::kExtension:
        if (t.text == "]") {
          field_ = nullptr;
          path_ = join_path(top().path, "[extension]");
          state_ = State::kAfterName;
        }
        return;
      case State::kAfterName:
      case State::kAfterColon:
        if (t.text == ":" && state_ == State::kAfterName) {
          state_ = State::kAfterColon;
        } else if (open) {
          push_message();
        } else if (t.text == "[") {
          // `name: [ ... ]`: undo the index taken for the name; each element takes its own.
          Frame& f = top();
          const bool repeated = field_ && field_->is_repeated();
          if (repeated) --f.counts[name_];
          result_.locations.erase(path_);  // elements are located at their own tokens
          f.in_list = true;
          f.list_name = name_;
          f.list_repeated = repeated;
          state_ = State::kList;
        } else if (t.text == "-") {
          state_ = State::kNegative;
        } else {
          value_done();
        }
        return;
      case State::kNegative:
        value_done();
        return;
      case State::kList:
        if (list_negative_) {  // the number after a '-' element
          list_negative_ = false;
          return;
        }
        if (t.text == "]") {
          top().in_list = false;
          state_ = State::kName;
        } else if (t.text == ",") {
        } else if (open) {
          start_list_element(t);
          field_ = find(top(), top().list_name);
          push_message();
        } else if (t.text == "-") {
          start_list_element(t);
          list_negative_ = true;
        } else if (t.type != Type::TYPE_STRING || !last_was_list_string_) {
          start_list_element(t);
        }
        last_was_list_string_ = t.type == Type::TYPE_STRING;
        return;
    }
  }

  // The field path the token `t` (nullptr: end of input) belongs to.
  std::string path_at(const pb::io::Tokenizer::Token* t) {
    switch (state_) {
      case State::kName:
        if (t && t->type == pb::io::Tokenizer::TYPE_IDENTIFIER) {
          const auto* f = find(top(), t->text);
          std::string p = element_path(top(), t->text, f && f->is_repeated(), false);
          record(p, *t);
          return p;
        }
        return top().path;
      case State::kList: {
        Frame& f = top();
        return element_path(f, f.list_name, f.list_repeated, false);
      }
      case State::kExtension:
        return top().path;
      default:
        return path_;
    }
  }

  std::vector<Frame> frames_;
  State state_ = State::kName;
  const pb::FieldDescriptor* field_ = nullptr;  // the field whose name was read last
  std::string name_;
  std::string path_;
  bool last_was_list_string_ = false;
  bool list_negative_ = false;
  Result result_;
};

struct SyntaxError {
  int line;    // 0-based, as protobuf reports
  int column;  // 0-based
  std::string message;
};

class CollectingErrorCollector final : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    errors.push_back(SyntaxError{line, column, message});
  }
  std::vector<SyntaxError> errors;
};

// protobuf's messages name the message type but not the path; add the valid names for unknown
// fields so a typo is easy to fix.
std::string explain(const SyntaxError& e, const pb::Descriptor* root, const std::string& path) {
  std::string msg = e.message;
  if (msg.find("Unknown enumeration value") != std::string::npos && !path.empty()) {
    // The enum field the value was meant for: list the values it takes.
    const pb::Descriptor* d = root;
    const pb::FieldDescriptor* f = nullptr;
    std::string segment;
    std::istringstream ss(path);
    while (d && std::getline(ss, segment, '.')) {
      const auto br = segment.find('[');
      if (br != std::string::npos) segment.resize(br);
      f = d->FindFieldByName(segment);
      d = (f && f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) ? f->message_type()
                                                                       : nullptr;
    }
    if (f && f->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM) {
      msg += " Valid values: ";
      for (int i = 0; i < f->enum_type()->value_count(); ++i)
        msg += (i ? ", " : "") + f->enum_type()->value(i)->name();
      msg += ".";
    }
    return msg;
  }
  if (msg.find("has no field named") == std::string::npos || path.empty()) return msg;
  // Walk the path's parent to the descriptor that lacks the name, remembering the ancestors.
  std::vector<std::pair<std::string, const pb::Descriptor*>> ancestors{{"", root}};
  const pb::Descriptor* d = root;
  std::string so_far;
  std::string segment;
  std::istringstream ss(parent_field_path(path));
  while (d && std::getline(ss, segment, '.')) {
    so_far = join_path(so_far, segment);
    const auto br = segment.find('[');
    if (br != std::string::npos) segment.resize(br);
    const auto* f = d->FindFieldByName(segment);
    d = (f && f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) ? f->message_type() : nullptr;
    if (d) ancestors.emplace_back(so_far, d);
  }
  if (!d) return msg;
  msg += " Valid fields here: ";
  for (int i = 0; i < d->field_count(); ++i) msg += (i ? ", " : "") + d->field(i)->name();
  msg += ".";
  // A field of an enclosing message usually means a '}' is missing above it.
  const auto dot = path.rfind('.');
  const std::string name = dot == std::string::npos ? path : path.substr(dot + 1);
  for (auto it = ancestors.rbegin() + 1; it < ancestors.rend(); ++it) {
    if (it->second->FindFieldByName(name)) {
      msg += " '" + name + "' is a field of " +
             (it->first.empty() ? std::string("the top level") : "'" + it->first + "'") +
             ": is a closing '}' missing before it?";
      break;
    }
  }
  return msg;
}

// Builds the SourceMap from the parser's ParseInfoTree; repeated fields written with list syntax
// (`x: [1, 2]`, one recorded location for several elements) take per-element locations from the
// token walk.
void add_locations(SourceMap& map, const pb::Message& msg, const pb::TextFormat::ParseInfoTree* tree,
                   const std::string& prefix, const std::map<std::string, FieldLocation>& walked) {
  const pb::Descriptor* d = msg.GetDescriptor();
  const pb::Reflection* r = msg.GetReflection();
  auto to_location = [](pb::TextFormat::ParseLocation l) {
    return FieldLocation{l.line + 1, l.column + 1};
  };
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    const std::string path = join_path(prefix, f->name());
    const bool is_message = f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE;
    if (!f->is_repeated()) {
      const auto loc = tree->GetLocation(f, -1);
      if (loc.line < 0) continue;
      map.set_location(path, to_location(loc));
      if (is_message) {
        if (const auto* nested = tree->GetTreeForNested(f, -1)) {
          add_locations(map, r->GetMessage(msg, f), nested, path, walked);
        }
      }
      continue;
    }
    const int n = r->FieldSize(msg, f);
    if (n == 0) continue;
    int recorded = 0;
    while (tree->GetLocation(f, recorded).line >= 0) ++recorded;
    if (recorded > 0) map.set_location(path, to_location(tree->GetLocation(f, 0)));
    for (int k = 0; k < n; ++k) {
      const std::string element = path + "[" + std::to_string(k) + "]";
      if (recorded == n) {
        map.set_location(element, to_location(tree->GetLocation(f, k)));
      } else if (const auto it = walked.find(element); it != walked.end()) {
        map.set_location(element, it->second);
      }
      if (is_message) {
        if (const auto* nested = tree->GetTreeForNested(f, k)) {
          add_locations(map, r->GetRepeatedMessage(msg, f, k), nested, element, walked);
        }
      }
    }
  }
}

// Binary configs carry no names: unknown field numbers mean a newer schema or a corrupt file.
void find_unknown_fields(const pb::Message& msg, const std::string& prefix,
                         std::vector<std::string>& out) {
  const pb::Reflection* r = msg.GetReflection();
  const auto& unknown = r->GetUnknownFields(msg);
  for (int i = 0; i < unknown.field_count(); ++i) {
    out.push_back((prefix.empty() ? std::string("(top level)") : prefix) + ": unknown field number " +
                  std::to_string(unknown.field(i).number()));
  }
  std::vector<const pb::FieldDescriptor*> fields;
  r->ListFields(msg, &fields);
  for (const auto* f : fields) {
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const std::string path = join_path(prefix, f->name());
    if (f->is_repeated()) {
      for (int k = 0; k < r->FieldSize(msg, f); ++k) {
        find_unknown_fields(r->GetRepeatedMessage(msg, f, k), path + "[" + std::to_string(k) + "]",
                            out);
      }
    } else {
      find_unknown_fields(r->GetMessage(msg, f), path, out);
    }
  }
}

std::string accepted_extensions() {
  std::string s;
  for (auto e : kTextExtensions) s += std::string(e) + ", ";
  return s + std::string(kBinaryExtension);
}

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    const int err = ec ? ec.value() : ENOENT;
    throw ConfigError("cannot read config '" + path.string() + "': " + std::strerror(err));
  }
  if (std::filesystem::is_directory(status)) {
    throw ConfigError("cannot read config '" + path.string() + "': " + std::strerror(EISDIR));
  }
  refuse_special_file(path, "config");  // a FIFO would block the read
  if (std::filesystem::is_regular_file(status)) {
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxConfigBytes) {
      throw ConfigError("config '" + path.string() + "' is " + std::to_string(size) +
                        " bytes; configs larger than " + std::to_string(kMaxConfigBytes) +
                        " bytes are refused (is this a data file?)");
    }
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno ? errno : EACCES;
    throw ConfigError("cannot read config '" + path.string() + "': " + std::strerror(err));
  }
  std::string bytes;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    bytes.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (bytes.size() > kMaxConfigBytes) {
      throw ConfigError("config '" + path.string() + "' is larger than " +
                        std::to_string(kMaxConfigBytes) + " bytes; refused (is this a data file?)");
    }
  }
  if (in.bad()) {
    const int err = errno ? errno : EIO;
    throw ConfigError("cannot read config '" + path.string() + "': " + std::strerror(err));
  }
  return bytes;
}

}  // namespace

LoadedConfig parse_text_config(std::string_view text, const std::filesystem::path& display_path) {
  LoadedConfig out;
  out.path = display_path;
  out.source = SourceMap(display_path);
  if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw ConfigError("config '" + display_path.string() + "' is too large");
  }
  const pb::Descriptor* root = pemc::v1::RunConfig::descriptor();

  CollectingErrorCollector errors;
  pb::TextFormat::ParseInfoTree tree;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  parser.AllowUnknownField(false);
  parser.AllowFieldNumber(false);
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  const bool ok = parser.Parse(&input, &out.config);

  if (!ok || !errors.errors.empty()) {
    std::string msg = "cannot parse config '" + display_path.string() + "' (text format):";
    if (errors.errors.empty()) errors.errors.push_back(SyntaxError{-1, -1, "parse failed"});
    std::vector<std::string> lines;
    for (const auto& e : errors.errors) {
      std::string line = display_path.string();
      std::string path;
      if (e.line >= 0) {
        const auto w = TextWalker::walk(text, root, std::make_pair(e.line, e.column));
        path = w.path_at_stop;
        FieldLocation at{e.line + 1, e.column + 1};
        // Some errors are reported after the value was read ('Unknown enumeration value of "X"
        // for field "metric"') or at the ':' after an unknown name: name that field instead.
        const bool unknown_name = e.message.find("has no field named") != std::string::npos;
        const std::string for_field = "for field \"" + w.last_field_name + "\"";
        if (!w.last_field_name.empty() && e.message.find(for_field) != std::string::npos) {
          path = w.last_field_path;
        }
        if (unknown_name) {
          if (const auto it = w.locations.find(path); it != w.locations.end()) at = it->second;
        }
        line += ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
      }
      line += ": ";
      if (!path.empty()) line += path + ": ";
      line += explain(e, root, path);
      if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(line);
    }
    for (const auto& l : lines) msg += "\n  " + l;
    throw ConfigError(msg);
  }

  const auto walked = TextWalker::walk(text, root, std::nullopt);
  add_locations(out.source, out.config, &tree, "", walked.locations);
  out.source.freeze();
  return out;
}

LoadedConfig parse_binary_config(std::string_view bytes, const std::filesystem::path& display_path) {
  LoadedConfig out;
  out.path = display_path;
  out.source = SourceMap(display_path);
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      !out.config.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    throw ConfigError("config '" + display_path.string() +
                      "': not a valid binary RunConfig (protobuf wire format); text configs must "
                      "use one of the extensions " +
                      std::string(kTextExtensions[0]) + ", " + std::string(kTextExtensions[1]) +
                      ", " + std::string(kTextExtensions[2]));
  }
  std::vector<std::string> unknown;
  find_unknown_fields(out.config, "", unknown);
  if (!unknown.empty()) {
    std::string msg = "config '" + display_path.string() +
                      "': not a valid binary RunConfig: it holds fields this version of pemc does "
                      "not know (corrupt file, or written for another schema):";
    for (const auto& u : unknown) msg += "\n  " + display_path.string() + ": " + u;
    throw ConfigError(msg);
  }
  return out;
}

LoadedConfig load_config(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  const bool text = std::find(std::begin(kTextExtensions), std::end(kTextExtensions), ext) !=
                    std::end(kTextExtensions);
  if (!text && ext != kBinaryExtension) {
    throw ConfigError("config '" + path.string() + "': unknown extension '" + ext +
                      "'; accepted: " + accepted_extensions() +
                      " (text format for the first three, binary protobuf for .pb)");
  }
  const std::string bytes = read_file(path);
  return text ? parse_text_config(bytes, path) : parse_binary_config(bytes, path);
}

}  // namespace pemc::config
