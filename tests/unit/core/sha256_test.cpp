// SHA-256 content hashes (core/sha256.hpp) and the regular-file checks they rely on
// (core/regular_file.hpp): known digests, files hashed in pieces, special files refused without
// blocking.
#include "core/sha256.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/regular_file.hpp"

namespace pemc {
namespace {

namespace fs = std::filesystem;

class Sha256Test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pemc-sha256-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(Sha256Test, KnownDigests) {
  // FIPS 180-2 examples.
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_F(Sha256Test, FileDigestEqualsBytesDigestAcrossBufferBoundaries) {
  // 3 MiB + 7 bytes: read in several 1 MiB pieces.
  std::string bytes((std::size_t{3} << 20) + 7, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 131) % 251);
  const fs::path p = dir_ / "data.bin";
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EXPECT_EQ(sha256_of_file(p, "data file"), sha256_hex(bytes));
  // One changed byte changes the digest.
  bytes[1 << 20] ^= 1;
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EXPECT_EQ(sha256_of_file(p, "data file"), sha256_hex(bytes));
}

TEST_F(Sha256Test, FifoAndDirectoryRefusedWithoutBlocking) {
  const fs::path fifo = dir_ / "pipe.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    sha256_of_file(fifo, "target.radon.data_file");
    ADD_FAILURE() << "FIFO not refused";
  } catch (const UntrustedInputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "target.radon.data_file '" + fifo.string() +
                  "' is a FIFO (named pipe), not a regular file (pemc reads regular files only: a "
                  "FIFO would block the run)");
  }
  EXPECT_THROW(refuse_special_file(fifo, "x"), UntrustedInputError);
  EXPECT_THROW(refuse_special_file(dir_, "x"), UntrustedInputError);
  EXPECT_THROW(open_regular_file(dir_, "x"), UntrustedInputError);
  // A missing file is the caller's to report; a regular file passes.
  EXPECT_NO_THROW(refuse_special_file(dir_ / "missing", "x"));
  EXPECT_THROW(sha256_of_file(dir_ / "missing", "data file"), IoError);
}

}  // namespace
}  // namespace pemc
