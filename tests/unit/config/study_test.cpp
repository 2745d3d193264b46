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

// Runs of 3, 4 and 2 chains: the first and last pool their warmup.
std::vector<v1::RunConfig> runs_for_blocks() {
  std::vector<v1::RunConfig> runs(3);
  const char* names[] = {"pooled_a", "alone", "pooled_b"};
  const int seeds[] = {3, 4, 2};
  for (int r = 0; r < 3; ++r) {
    runs[r].set_name(names[r]);
    runs[r].set_chains_per_seed(1);
    for (int s = 0; s < seeds[r]; ++s) runs[r].mutable_seeds()->add_values(10 * r + s);
    auto& a = *runs[r].mutable_sampler()->mutable_nuts()->mutable_adaptation();
    a.set_pooled(r != 1);
  }
  return runs;
}

TEST(TaskBlocks, APooledRunIsOneBlock) {
  const auto blocks = task_blocks(runs_for_blocks());
  ASSERT_EQ(blocks.size(), 6u);  // [0,3) 3 4 5 6 [7,9)
  EXPECT_EQ(blocks[0].begin, 0);
  EXPECT_EQ(blocks[0].end, 3);
  EXPECT_EQ(blocks[1].begin, 3);
  EXPECT_EQ(blocks[1].end, 4);
  EXPECT_EQ(blocks[5].begin, 7);
  EXPECT_EQ(blocks[5].end, 9);
}

TEST(TaskBlocks, RangesHoldWholePooledRuns) {
  const auto runs = runs_for_blocks();
  EXPECT_NO_THROW(check_range_keeps_blocks({0, 3}, runs, "--task-range 0:3"));
  EXPECT_NO_THROW(check_range_keeps_blocks({3, 5}, runs, "--task-range 3:5"));
  EXPECT_NO_THROW(check_range_keeps_blocks({0, 9}, runs, "--task-range 0:9"));
  const std::string msg =
      config_error([&] { check_range_keeps_blocks({2, 5}, runs, "--task-range 2:5"); });
  EXPECT_THAT(msg, HasSubstr("--task-range 2:5 holds 1 of the 3 chains of run 'pooled_a' "
                             "(tasks 0..2)"));
  EXPECT_THAT(msg, HasSubstr("--task-range 0:3"));
  EXPECT_THAT(msg, HasSubstr("pooled: false"));
  EXPECT_THAT(config_error([&] { check_range_keeps_blocks({6, 8}, runs, "x"); }),
              HasSubstr("run 'pooled_b'"));
}

// An array task runs K blocks: a pooled run counts as one task.
TEST(TaskBlocks, ArrayTasksCountAPooledRunAsOneTask) {
  const auto blocks = task_blocks(runs_for_blocks());
  const auto first = array_task_range(0, 1, blocks);
  EXPECT_EQ(first.begin, 0);
  EXPECT_EQ(first.end, 3);
  const auto second = array_task_range(1, 2, blocks);  // blocks 2, 3: tasks 4, 5
  EXPECT_EQ(second.begin, 4);
  EXPECT_EQ(second.end, 6);
  const auto last = array_task_range(2, 2, blocks);  // blocks 4, 5: task 6 and run pooled_b
  EXPECT_EQ(last.begin, 6);
  EXPECT_EQ(last.end, 9);
  EXPECT_THAT(config_error([&] { array_task_range(3, 2, blocks); }),
              HasSubstr("the array needs 3 array tasks"));
  EXPECT_THAT(config_error([&] { array_task_range(0, 0, blocks); }),
              HasSubstr("--array-task-size must be >= 1"));
}

}  // namespace
}  // namespace pemc::config
