// Issue 29, item 2: one writer per output file. flock locks belong to open file descriptions, so a
// second OutputLock in this process conflicts with the first exactly as a second job would.
#include "runner/output_lock.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"

namespace pemc::runner {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("pemc-lock-test-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

TEST(OutputLock, SecondHolderIsRefusedNamingTheFirst) {
  TempDir dir;
  const auto out = dir.path / "run.pemc";
  std::string warning;
  auto first = OutputLock::acquire(out, &warning);
  ASSERT_TRUE(first) << warning;
  EXPECT_EQ(first->lock_path(), dir.path / "run.pemc.lock");
  EXPECT_TRUE(fs::exists(dir.path / "run.pemc.lock"));
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  const std::string pid = "pid " + std::to_string(::getpid()) + " on host " + host;
  try {
    OutputLock::acquire(out, &warning);
    ADD_FAILURE() << "a second lock on the same output was granted";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(out.string() + " is in use by another pemc-dist job (" + pid + " since "),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("lock file " + (dir.path / "run.pemc.lock").string()), std::string::npos)
        << msg;
  }
  const auto who = OutputLock::holder(out);
  ASSERT_TRUE(who.has_value());
  EXPECT_NE(who->find(pid), std::string::npos) << *who;
  // Another output is independent.
  EXPECT_TRUE(OutputLock::acquire(dir.path / "other.pemc", &warning));
  first.reset();
  EXPECT_FALSE(fs::exists(dir.path / "run.pemc.lock")) << "a released lock leaves its file behind";
  EXPECT_FALSE(OutputLock::holder(out).has_value());
  EXPECT_TRUE(OutputLock::acquire(out, &warning));
}

// A lock file left by a killed job (kill -9: the kernel released its lock) does not block a new
// run.
TEST(OutputLock, StaleLockFileIsTakenOver) {
  TempDir dir;
  const auto out = dir.path / "run.pemc";
  std::ofstream(dir.path / "run.pemc.lock") << "pid 1 on host gone since 2000-01-01 00:00:00 UTC\n";
  EXPECT_FALSE(OutputLock::holder(out).has_value());
  std::string warning;
  auto lock = OutputLock::acquire(out, &warning);
  ASSERT_TRUE(lock);
  std::ifstream in(dir.path / "run.pemc.lock");
  std::string line;
  std::getline(in, line);
  EXPECT_NE(line.find("pid " + std::to_string(::getpid())), std::string::npos) << line;
}

TEST(OutputLock, UnwritableDirectoryIsAConfigError) {
  EXPECT_THROW(OutputLock::acquire("/nonexistent-dir-pemc/run.pemc", nullptr), ConfigError);
}

// A link or a second name at the lock's name: refused, the file it leads to unwritten.
TEST(OutputLock, LinksAndHardLinksAtTheLockAreRefused) {
  TempDir dir;
  const auto out = dir.path / "run.pemc";
  const auto victim = dir.path / "victim.txt";
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, dir.path / "run.pemc.lock");
  std::string warning;
  EXPECT_THROW(OutputLock::acquire(out, &warning), UntrustedInputError);
  fs::remove(dir.path / "run.pemc.lock");
  fs::create_hard_link(victim, dir.path / "run.pemc.lock");
  try {
    OutputLock::acquire(out, &warning);
    ADD_FAILURE() << "a hard link at the lock's name was taken";
  } catch (const UntrustedInputError& e) {
    EXPECT_NE(std::string(e.what()).find("run.pemc.lock has 2 names (hard links)"),
              std::string::npos)
        << e.what();
  }
  std::ifstream in(victim);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "precious");
}

}  // namespace
}  // namespace pemc::runner
