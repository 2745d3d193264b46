#include "runner/input_files.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <map>
#include <set>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/sha256.hpp"
#include "stan_target/model_builder.hpp"

namespace pemc::runner {
namespace {

namespace pb = google::protobuf;

bool names_an_input(const std::string& field_name) {
  return field_name == "library" ||
         (field_name.size() > 5 && field_name.compare(field_name.size() - 5, 5, "_file") == 0);
}

// (field path, file) for every non-empty input field in `m` and the messages it holds.
void collect(const pb::Message& m, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  const auto* refl = m.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  refl->ListFields(m, &fields);
  for (const auto* f : fields) {
    const std::string path = prefix + "." + f->name();
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE && !f->is_map()) {
      if (!f->is_repeated()) {
        collect(refl->GetMessage(m, f), path, out);
        continue;
      }
      for (int i = 0; i < refl->FieldSize(m, f); ++i)
        collect(refl->GetRepeatedMessage(m, f, i), path + "[" + std::to_string(i) + "]", out);
    } else if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING && !f->is_repeated() &&
               names_an_input(f->name())) {
      const std::string file = refl->GetString(m, f);
      if (!file.empty()) out.emplace_back(path, file);
    }
  }
}

std::string short_hash(const std::string& hex) { return hex.substr(0, 16) + "..."; }

// Each file once: the first field naming it names it.
class InputList {
 public:
  void add(const std::string& field, const std::string& path, const std::string& sha256) {
    if (!seen_.insert(path).second) return;
    auto* f = files_.add_files();
    f->set_field(field);
    f->set_path(path);
    f->set_sha256(sha256);
  }
  bool has(const std::string& path) const { return seen_.count(path) > 0; }
  v1::InputFiles& files() { return files_; }

 private:
  v1::InputFiles files_;
  std::set<std::string> seen_;
};

std::string run_prefix(const std::vector<v1::RunConfig>& runs, const v1::RunConfig& run) {
  return runs.size() > 1 ? "run '" + run.name() + "': " : std::string();
}

void add_named(const std::vector<v1::RunConfig>& runs, InputList& list) {
  for (const auto& run : runs) {
    std::vector<std::pair<std::string, std::string>> named;
    collect(run.target(), "target", named);
    collect(run.sampler(), "sampler", named);
    collect(run.init(), "init", named);
    for (const auto& [field, path] : named)
      if (!list.has(path)) list.add(run_prefix(runs, run) + field, path, sha256_of_file(path, field));
  }
}

}  // namespace

v1::InputFiles named_input_files(const std::vector<v1::RunConfig>& runs) {
  InputList list;
  add_named(runs, list);
  return list.files();
}

v1::InputFiles input_files_of(const std::vector<v1::RunConfig>& runs) {
  InputList list;
  add_named(runs, list);
  for (const auto& run : runs) {
    if (!run.target().has_stan()) continue;
    stan_target::BuildRequest request;
    request.model_file = run.target().stan().model_file();
    request.cache_dir = run.target().stan().cache_dir();
    const auto built = stan_target::build_model(request);
    list.add(run_prefix(runs, run) + "target.stan (the compiled model)", built.library,
             built.sha256);
  }
  return list.files();
}

void check_input_files(const v1::InputFiles& checkpointed, const v1::InputFiles& now,
                       const std::filesystem::path& checkpoint, bool missing_is_error) {
  std::map<std::string, const v1::InputFile*> before;
  for (const auto& f : checkpointed.files()) before[f.field()] = &f;
  const std::string refused = checkpoint.string() + ": cannot resume: ";
  const std::string start_over = "; restore it, or start over with --overwrite";
  for (const auto& f : now.files()) {
    const auto it = before.find(f.field());
    if (it == before.end() && !missing_is_error) continue;
    if (it == before.end())
      throw ConfigError(refused + "the checkpoint records no content hash of " + f.field() +
                        " '" + f.path() +
                        "' (a checkpoint of a pemc-dist that did not record its inputs), so "
                        "whether the file changed cannot be told; start over with --overwrite");
    const v1::InputFile& then = *it->second;
    if (then.path() != f.path())
      throw ConfigError(refused + f.field() + " is now '" + f.path() +
                        "', but the checkpointed run read '" + then.path() + "'" + start_over);
    if (then.sha256() != f.sha256())
      throw ConfigError(refused + f.field() + " '" + f.path() +
                        "' is not the file the checkpointed run read: its content changed "
                        "(SHA-256 " + short_hash(then.sha256()) + " at the checkpoint, " +
                        short_hash(f.sha256()) +
                        " now), so the draws after the checkpoint would come from another "
                        "target" + start_over);
  }
}

}  // namespace pemc::runner
