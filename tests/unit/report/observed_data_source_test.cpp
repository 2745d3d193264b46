// Tests of where observed_data comes from (src/report/observed_data_source.hpp): the run's data
// file resolved against the header's working directory and read only when its content is the
// recorded one; a changed or missing file refused naming the run, the file and the way out;
// --data trusted with a note when it differs; no group for other targets or older files.
#include "report/observed_data_source.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/sha256.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Kind = ObservedDataSource::Kind;

struct TempDir {
  fs::path path =
      fs::temp_directory_path() / ("pemc-observed-test-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return path / name;
  }
};

const std::string kData = R"({"N": 2, "y": [1.5, 2]})";

// A run reading `data_file` (as its config names it) and a header recording kData's hash for it,
// with `dir` as the working directory.
struct Recorded {
  v1::Header header;
  v1::RunConfig run;
  Recorded(const std::string& data_file, const fs::path& dir, bool record = true) {
    run.set_name("r");
    run.mutable_target()->mutable_stan()->set_model_file("m.stan");
    run.mutable_target()->mutable_stan()->set_data_file(data_file);
    header.set_working_directory(dir.string());
    if (!record) return;
    auto* f = header.mutable_inputs()->add_files();
    f->set_field("target.stan.data_file");
    f->set_path(data_file);
    f->set_sha256(sha256_hex(kData));
  }
};

std::string refusal(const Recorded& r, const fs::path& data_override = {}) {
  try {
    (void)observed_data_source(r.header, r.run, "r", data_override);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ObservedDataSource, ReadsTheRecordedFileRelativeToTheRunsDirectory) {
  TempDir dir;
  dir.write("d.json", kData);
  const Recorded r("d.json", dir.path);  // relative: found in the header's working directory
  const auto s = observed_data_source(r.header, r.run, "r", {});
  EXPECT_EQ(s.kind, Kind::kRead);
  EXPECT_EQ(s.path, dir.path / "d.json");
  EXPECT_EQ(s.text, kData);
  EXPECT_EQ(s.sha256, sha256_hex(kData));
  EXPECT_EQ(s.recorded_sha256, s.sha256);
  EXPECT_EQ(s.note, "");
  // An absolute path is used as it is, wherever the run was.
  const Recorded abs((dir.path / "d.json").string(), "/nonexistent");
  EXPECT_EQ(observed_data_source(abs.header, abs.run, "r", {}).kind, Kind::kRead);
}

TEST(ObservedDataSource, AChangedOrMissingFileIsRefused) {
  TempDir dir;
  const auto file = dir.write("d.json", R"({"N": 2, "y": [1.5, 2.5]})");
  const Recorded r("d.json", dir.path);
  const std::string changed = refusal(r);
  EXPECT_THAT(changed, HasSubstr("run 'r': target.stan.data_file " + file.string() +
                                 " changed since the run (sha256 " +
                                 sha256_hex(kData).substr(0, 16) + "... recorded, " +
                                 sha256_hex(R"({"N": 2, "y": [1.5, 2.5]})").substr(0, 16) +
                                 "... now); pass --data FILE with the run's data or "
                                 "--no-observed-data"));
  fs::remove(file);
  EXPECT_THAT(refusal(r), HasSubstr("run 'r': target.stan.data_file " + file.string() +
                                    " cannot be read for observed_data"));
  EXPECT_THAT(refusal(r), HasSubstr("pass --data FILE with the run's data or --no-observed-data"));
}

TEST(ObservedDataSource, DataOptionIsTrustedWithANoteWhenItDiffers) {
  TempDir dir;
  const auto same = dir.write("same.json", kData);
  const auto other = dir.write("other.json", R"({"N": 1})");
  const Recorded r("moved/d.json", dir.path);  // the run's file is gone
  const auto s = observed_data_source(r.header, r.run, "r", same);
  EXPECT_EQ(s.kind, Kind::kRead);
  EXPECT_EQ(s.path, same);
  EXPECT_EQ(s.note, "");
  const auto o = observed_data_source(r.header, r.run, "r", other);
  EXPECT_EQ(o.text, R"({"N": 1})");
  EXPECT_THAT(o.note, HasSubstr("run 'r': observed_data is from --data " + other.string() +
                                ", whose content is not the run's target.stan.data_file "
                                "moved/d.json"));
  EXPECT_THAT(refusal(r, dir.path / "absent.json"), HasSubstr("export --data: cannot open"));
}

TEST(ObservedDataSource, NoDataNoGroupAndOlderFilesNoCheck) {
  TempDir dir;
  dir.write("d.json", kData);
  Recorded r("d.json", dir.path);
  const Recorded old("d.json", dir.path, /*record=*/false);
  EXPECT_EQ(observed_data_source(old.header, old.run, "r", {}).kind, Kind::kNotRecorded);
  // --data with a file that records nothing: read, with a note that it cannot be compared.
  const auto given = observed_data_source(old.header, old.run, "r", dir.path / "d.json");
  EXPECT_EQ(given.kind, Kind::kRead);
  EXPECT_THAT(given.note, HasSubstr("does not record its data files' hashes"));
  r.run.mutable_target()->mutable_stan()->clear_data_file();
  EXPECT_EQ(observed_data_source(r.header, r.run, "r", {}).kind, Kind::kNone);
  r.run.mutable_target()->mutable_gaussian();
  EXPECT_EQ(observed_data_source(r.header, r.run, "r", {}).kind, Kind::kNone);
}

}  // namespace
}  // namespace pemc::report
