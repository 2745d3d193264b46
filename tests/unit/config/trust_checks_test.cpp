// Config checks of issue 37: the files pemc-dist creates may not coincide; a study's run count is
// limited and its validation linear (a run's copy of the file's source map does not grow with the
// study); a --set list and a pair of bounds are located at the command line; warmup + iterations
// names the larger of the two; a FIFO is refused where a file is read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <string>

#include "config/created_files.hpp"
#include "config/limits.hpp"
#include "config/study.hpp"
#include "config_test_support.hpp"

namespace pemc::config {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::config_error;
using testing::TempDir;

const std::string kRun =
    "target { gaussian { mean: [0, 0] } }\nsampler { hmc { step_size: 0.2 n_leapfrog: 10 } }\n"
    "iterations: 100\nseeds { values: [1] }\n";

std::string validate_text(const std::string& text, const CommandLineOverrides& o = {}) {
  auto c = parse_text_config(text, "case.pbtxt");
  apply_overrides(c, o);
  apply_defaults(c);
  return config_error([&] { validate(c); });
}

TEST(CreatedFiles, NamesFollowOneConvention) {
  v1::RunConfig c;
  c.mutable_output()->set_path("out/r.pemc");
  auto files = created_files(c);
  ASSERT_EQ(files.size(), 5u);
  EXPECT_EQ(files[1].path, "out/r.pemc.lock");
  EXPECT_EQ(files[2].path, "out/r.pemc.resume.tmp");
  EXPECT_EQ(files[3].path, "out/r.pemc.ckpt");
  EXPECT_EQ(files[4].path, "out/r.pemc.ckpt.tmp");
  c.mutable_checkpoint()->set_path("ck/r.ckpt");
  files = created_files(c);
  ASSERT_EQ(files.size(), 6u);
  EXPECT_EQ(files[5].path, "ck/r.ckpt.lock");
  EXPECT_EQ(checkpoint_file(c), "ck/r.ckpt");
}

TEST(CreatedFiles, CheckpointMayNotBeTheLockOrACopy) {
  TempDir dir;
  const std::string out = (dir.path() / "r.pemc").string();
  const std::string base = kRun + "output { path: \"" + out + "\" }\n";
  CommandLineOverrides o;
  o.sets = {"checkpoint.path=" + out + ".lock"};
  EXPECT_THAT(validate_text(base, o),
              HasSubstr("checkpoint.path: pemc-dist would create the output's lock file and the "
                        "checkpoint as the same file '" + out + ".lock'"));
  // The same file under another spelling.
  o.sets = {"checkpoint.path=" + dir.path().string() + "/./r.pemc.resume.tmp"};
  EXPECT_THAT(validate_text(base, o), HasSubstr("the resume's copy of the record file and the "
                                                "checkpoint as the same file"));
  // The output as the checkpoint's temporary copy.
  o.sets = {"checkpoint.path=" + (dir.path() / "x").string()};
  o.output = (dir.path() / "x.tmp").string();
  EXPECT_THAT(validate_text(base, o), HasSubstr("as the same file"));
  o.output.reset();
  o.sets = {"checkpoint.path=" + (dir.path() / "elsewhere.ckpt").string()};
  EXPECT_EQ(validate_text(base, o), "<no ConfigError>");
}

TEST(StudyLimits, RunCountIsLimitedBeforeAnythingIsRead) {
  v1::RunConfig study;
  for (int i = 0; i <= kMaxRuns; ++i) study.add_runs()->set_name("r" + std::to_string(i));
  EXPECT_THAT(config_error([&] { expand_runs(study); }),
              HasSubstr("runs: the study has 10001 runs (runs and run_files), more than the limit "
                        "10000"));
}

TEST(StudyLimits, TasksOfAllRunsAreLimited) {
  std::vector<v1::RunConfig> runs(3);
  for (auto& r : runs) {
    r.mutable_seeds()->set_count(kMaxSeeds);
  }
  EXPECT_THAT(config_error([&] { enumerate_tasks(runs); }),
              HasSubstr("the study has 30000000 tasks (runs x seeds x chains_per_seed), more than "
                        "the limit 10000000"));
}

// A run's copy of its file's source map costs what is set on it, not the file's size: copying
// the map of a study of 4000 runs 4000 times stays far below a second.
TEST(SourceMapSharing, CopiesShareTheFilesLocations) {
  std::string text = kRun + "output { path: \"s.pemc\" }\n";
  for (int i = 0; i < 4000; ++i)
    text += "runs { name: \"r" + std::to_string(i) + "\" sampler { hmc { step_size: 0.3 } } }\n";
  const auto loaded = parse_text_config(text, "study.pbtxt");
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 4000; ++i) {
    LoadedConfig copy{loaded.config.runs(i), loaded.path, loaded.source};
    copy.source.set_origin("iterations", "command line");
    ASSERT_EQ(copy.source.where("iterations"), "command line");
    ASSERT_EQ(copy.source.where("runs[3999].name"), "study.pbtxt:4005:8");
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 1.0);
  EXPECT_EQ(loaded.source.where("iterations"), "study.pbtxt:3:1");  // the original is unchanged
}

TEST(CommandLineLocations, ABoxMadeWrongBySetIsLocatedAtTheCommandLine) {
  const std::string text =
      kRun + "init { uniform_box { lower: [0, -5] upper: [1, 5] } }\noutput { path: \"o.pemc\" }\n";
  CommandLineOverrides o;
  o.sets = {"init.uniform_box.lower=[0, 7]"};
  const auto msg = validate_text(text, o);
  EXPECT_THAT(msg, HasSubstr("command line (--set init.uniform_box.lower=[0, 7]): "
                             "init.uniform_box.upper[1]: lower must be < upper (got lower 7, upper 5)"));
  // The same pair wrong in the file is located in the file.
  EXPECT_THAT(validate_text(kRun +
                            "init { uniform_box { lower: [0, 7] upper: [1, 5] } }\n"
                            "output { path: \"o.pemc\" }\n"),
              HasSubstr("case.pbtxt:5:"));
}

TEST(CommandLineLocations, WarmupPlusIterationsNamesTheLargerOne) {
  CommandLineOverrides o;
  o.iterations = 1'000'000'000'000;
  const auto msg = validate_text(kRun + "warmup: 1000\noutput { path: \"o.pemc\" }\n", o);
  EXPECT_THAT(msg, HasSubstr("command line (--iterations 1000000000000): iterations: warmup + "
                             "iterations is more than the limit 1000000000000 (warmup 1000, "
                             "iterations 1000000000000)"));
  EXPECT_THAT(msg, Not(HasSubstr(": warmup:")));
}

TEST(SpecialFiles, AFifoAsADataFileIsRefusedWithoutReadingIt) {
  TempDir dir;
  const auto fifo = dir.path() / "data.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto msg = validate_text("target { radon { data_file: \"" + fifo.string() +
                                 "\" } }\nsampler { hmc { step_size: 0.2 n_leapfrog: 10 } }\n"
                                 "iterations: 10\nseeds { values: [1] }\noutput { path: \"o.pemc\" }\n");
  EXPECT_THAT(msg, HasSubstr("target.radon.data_file: is a FIFO (named pipe), not a regular file"));
  const auto config_fifo = dir.path() / "c.pbtxt";
  ASSERT_EQ(::mkfifo(config_fifo.c_str(), 0600), 0);
  try {
    load_config(config_fifo);
    ADD_FAILURE() << "a FIFO config was read";
  } catch (const UntrustedInputError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("is a FIFO (named pipe), not a regular file"));
  }
}

}  // namespace
}  // namespace pemc::config
