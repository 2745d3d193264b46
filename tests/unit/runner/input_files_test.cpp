// The content of what a run reads (runner/input_files.hpp): every file a config names, found by
// field name, hashed once; a resume refused for changed content, another path or a missing hash.
#include "runner/input_files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/sha256.hpp"

namespace pemc::runner {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("pemc-inputs-test-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

std::string refusal(const v1::InputFiles& before, const v1::InputFiles& now,
                    bool missing_is_error = true) {
  try {
    check_input_files(before, now, "r.pemc.ckpt", missing_is_error);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(InputFiles, EveryNamedFileOnceWithItsHash) {
  TempDir dir;
  const auto data = dir.write("d.csv", "y,x\n1,2\n");
  const auto mean = dir.write("m.txt", "0 0\n");
  std::vector<v1::RunConfig> runs(2);
  for (auto& r : runs) r.mutable_target()->mutable_radon()->set_data_file(data);
  runs[0].set_name("a");
  runs[1].set_name("b");
  runs[1]
      .mutable_sampler()
      ->mutable_simulated_tempering()
      ->mutable_reference()
      ->set_mean_file(mean);
  const auto inputs = named_input_files(runs);
  ASSERT_EQ(inputs.files_size(), 2);
  EXPECT_EQ(inputs.files(0).field(), "run 'a': target.radon.data_file");
  EXPECT_EQ(inputs.files(0).path(), data);
  EXPECT_EQ(inputs.files(0).sha256(), sha256_hex("y,x\n1,2\n"));
  EXPECT_EQ(inputs.files(1).field(), "run 'b': sampler.simulated_tempering.reference.mean_file");
  // A plain run's fields have no run prefix.
  runs.resize(1);
  EXPECT_EQ(named_input_files(runs).files(0).field(), "target.radon.data_file");
}

TEST(InputFiles, AChangedFileIsRefusedNamingIt) {
  TempDir dir;
  const auto data = dir.write("d.csv", "y,x\n1,2\n");
  std::vector<v1::RunConfig> runs(1);
  runs[0].mutable_target()->mutable_radon()->set_data_file(data);
  const auto before = named_input_files(runs);
  EXPECT_EQ(refusal(before, named_input_files(runs)), "");
  dir.write("d.csv", "y,x\n0,2\n");  // one label flipped, same size
  EXPECT_THAT(refusal(before, named_input_files(runs)),
              HasSubstr("r.pemc.ckpt: cannot resume: target.radon.data_file '" + data +
                        "' is not the file the checkpointed run read: its content changed (SHA-256 " +
                        sha256_hex("y,x\n1,2\n").substr(0, 16) + "... at the checkpoint, " +
                        sha256_hex("y,x\n0,2\n").substr(0, 16) + "... now)"));
  // Another path under the same field.
  auto moved = before;
  moved.mutable_files(0)->set_path("elsewhere.csv");
  EXPECT_THAT(refusal(moved, before),
              HasSubstr("target.radon.data_file is now '" + data +
                        "', but the checkpointed run read 'elsewhere.csv'"));
  // A checkpoint without hashes: refused, unless only the named files are compared early.
  EXPECT_THAT(refusal(v1::InputFiles(), before),
              HasSubstr("the checkpoint records no content hash of target.radon.data_file"));
  EXPECT_EQ(refusal(v1::InputFiles(), before, /*missing_is_error=*/false), "");
}

}  // namespace
}  // namespace pemc::runner
