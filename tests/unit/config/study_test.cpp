// Studies: run_files entries are loaded relative to the study file and appended to `runs`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "config/study.hpp"
#include "config_test_support.hpp"

namespace pemc::config {
namespace {

using ::testing::HasSubstr;
using testing::config_error;
using testing::TempDir;

void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

const char* kCell =
    "target { gaussian { mean: [0, 0] } }\n"
    "sampler { hmc { step_size: 0.2 n_leapfrog: 10 } }\n"
    "iterations: 100\nseeds { values: [1, 2] }\n"
    "output { path: \"ignored.pemc\" }\nlogging { progress_interval_seconds: 9 }\n";

TEST(IncludeRunFiles, AppendsEachFileAfterTheInlineRunsRelativeToTheStudy) {
  TempDir dir;
  write(dir.path() / "cells" / "a.pbtxt", std::string("name: \"cell_a\"\n") + kCell);
  write(dir.path() / "cells" / "b.pbtxt", kCell);  // no name: the stem
  write(dir.path() / "studies" / "s.pbtxt",
        "iterations: 5\noutput { path: \"s.pemc\" }\n"
        "runs { name: \"inline\" target { banana {} } sampler { nuts { step_size: 0.1 } } "
        "seeds { values: [3] } }\n"
        "run_files: \"../cells/a.pbtxt\"\nrun_files: \"" + (dir.path() / "cells" / "b.pbtxt").string() + "\"\n");
  auto study = load_config(dir.path() / "studies" / "s.pbtxt");
  const auto included = include_run_files(study);
  ASSERT_EQ(included.size(), 2u);
  EXPECT_EQ(study.config.run_files_size(), 0);
  ASSERT_EQ(study.config.runs_size(), 3);
  EXPECT_EQ(study.config.runs(0).name(), "inline");
  EXPECT_EQ(study.config.runs(1).name(), "cell_a");
  EXPECT_EQ(study.config.runs(2).name(), "b");
  EXPECT_FALSE(study.config.runs(1).has_output());
  EXPECT_FALSE(study.config.runs(1).has_logging());
  EXPECT_EQ(included[0].path, dir.path() / "studies" / ".." / "cells" / "a.pbtxt");
  const auto runs = expand_runs(study.config);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[1].iterations(), 100);  // the file's own setting replaces the study's
  EXPECT_EQ(runs[1].output().path(), "s.pemc");  // the study's output
  EXPECT_EQ(runs[1].seeds().values_size(), 2);
}

TEST(IncludeRunFiles, ErrorsNameTheEntryAndTheFile) {
  TempDir dir;
  write(dir.path() / "s.pbtxt", "output { path: \"s.pemc\" }\nrun_files: \"missing.pbtxt\"\n");
  auto study = load_config(dir.path() / "s.pbtxt");
  const std::string msg = config_error([&] { include_run_files(study); });
  EXPECT_THAT(msg, HasSubstr("run_files[0] (" + (dir.path() / "s.pbtxt").string() + ":2:"));
  EXPECT_THAT(msg, HasSubstr("missing.pbtxt"));

  write(dir.path() / "nested.pbtxt", "runs { name: \"x\" }\n");
  write(dir.path() / "s2.pbtxt", "run_files: \"nested.pbtxt\"\n");
  auto study2 = load_config(dir.path() / "s2.pbtxt");
  EXPECT_THAT(config_error([&] { include_run_files(study2); }), HasSubstr("is itself a study"));

  // Two files with the same name: expand_runs refuses the duplicate.
  write(dir.path() / "c.pbtxt", std::string("name: \"same\"\n") + kCell);
  write(dir.path() / "s3.pbtxt", "run_files: \"c.pbtxt\"\nrun_files: \"c.pbtxt\"\n");
  auto study3 = load_config(dir.path() / "s3.pbtxt");
  include_run_files(study3);
  EXPECT_THAT(config_error([&] { expand_runs(study3.config); }), HasSubstr("duplicate run name 'same'"));
}

}  // namespace
}  // namespace pemc::config
