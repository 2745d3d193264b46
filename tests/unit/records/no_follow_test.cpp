// Files pemc-dist creates are never opened through a link (records/no_follow.hpp, the record
// writer): a link planted at one of their names is refused and its target left untouched.
#include "records/no_follow.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/error.hpp"
#include "records/record_writer.hpp"

namespace pemc::records {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class NoFollowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pemc-no-follow-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    victim_ = dir_ / "victim.txt";
    std::ofstream(victim_) << "precious\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_, victim_;
};

TEST_F(NoFollowTest, RefusesLinkAndSpecialFilesAtCreatedNames) {
  const fs::path link = dir_ / "run.pemc.lock";
  fs::create_symlink(victim_, link);
  try {
    refuse_link_at(link, "the output's lock file");
    ADD_FAILURE() << "link not refused";
  } catch (const UntrustedInputError& e) {
    EXPECT_EQ(std::string(e.what()),
              link.string() + " is a symbolic link (to " + victim_.string() +
                  "): pemc-dist creates the output's lock file itself and never follows a link "
                  "there; remove the link");
  }
  // A dangling link is refused too (following it would create its target).
  fs::create_symlink(dir_ / "nowhere", dir_ / "dangling");
  EXPECT_THROW(refuse_link_at(dir_ / "dangling", "the checkpoint"), UntrustedInputError);
  const fs::path fifo = dir_ / "run.pemc.ckpt.tmp";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(refuse_link_at(fifo, "the checkpoint's temporary copy"), UntrustedInputError);
  // Nothing there, a regular file, and (where allowed) a device pass.
  EXPECT_NO_THROW(refuse_link_at(dir_ / "new.pemc", "the record file"));
  EXPECT_NO_THROW(refuse_link_at(victim_, "the record file"));
  EXPECT_NO_THROW(refuse_link_at("/dev/null", "the record file", /*allow_devices=*/true));
  EXPECT_THROW(refuse_link_at("/dev/null", "the checkpoint"), UntrustedInputError);
  EXPECT_EQ(read_text(victim_), "precious\n");
}

TEST_F(NoFollowTest, CreateFreshFileReplacesALinkWithoutFollowingIt) {
  const fs::path tmp = dir_ / "run.pemc.ckpt.tmp";
  fs::create_symlink(victim_, tmp);
  const int fd = create_fresh_file(tmp, 0644, "the checkpoint's temporary copy");
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "new", 3), 3);
  ::close(fd);
  EXPECT_FALSE(fs::is_symlink(tmp));
  EXPECT_EQ(read_text(tmp), "new");
  EXPECT_EQ(read_text(victim_), "precious\n");
}

TEST_F(NoFollowTest, RecordWriterRefusesLinkFifoAndKeepsTargets) {
  const fs::path link = dir_ / "run.pemc";
  fs::create_symlink(victim_, link);
  for (const bool overwrite : {false, true}) {
    try {
      RecordWriter w(link, RecordWriter::Options{overwrite});
      ADD_FAILURE() << "link not refused (overwrite " << overwrite << ")";
    } catch (const UntrustedInputError& e) {
      EXPECT_NE(std::string(e.what()).find("is a symbolic link"), std::string::npos) << e.what();
    } catch (const ConfigError& e) {
      // Without --overwrite an existing name (the link) is "already exists" first.
      EXPECT_FALSE(overwrite) << e.what();
    }
  }
  EXPECT_EQ(read_text(victim_), "precious\n");
  const fs::path fifo = dir_ / "fifo.pemc";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(RecordWriter(fifo, RecordWriter::Options{true}), UntrustedInputError);
}

}  // namespace
}  // namespace pemc::records
