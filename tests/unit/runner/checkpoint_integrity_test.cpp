// Issue 29, item 1: a damaged checkpoint is refused. Every single flipped byte of a checkpoint file
// (header and content), a truncated or extended file, a checkpoint of the old format (no header)
// and content that is inconsistent under a correct checksum are refused with a DataError that names
// the file and says why; the record file a checkpoint covers is checked by its crc32 before it is
// cut back. Also: the hash ignores output.path (a record file moved with its checkpoint resumes),
// and a refused resume can say which config fields differ.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "records/record_file.hpp"
#include "runner/checkpoint.hpp"

namespace pemc::runner {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("pemc-ckpt-integrity-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

// A checkpoint of realistic size (a few KB: kernel state with a metric and window sums).
v1::Checkpoint sample_checkpoint() {
  v1::Checkpoint c;
  c.set_format_version(kCheckpointFormatVersion);
  c.set_program_version("test");
  c.set_config_hash(0x1234567890abcdefull);
  c.set_record_bytes(4096);
  c.set_n_records(40);
  c.set_task_begin(0);
  c.set_task_end(4);
  c.set_n_ranks(3);
  c.set_group_size(1);
  c.set_sequence(2);
  c.set_wall_seconds(1.5);
  c.add_completed()->set_chain_id(1);
  for (int id : {0, 2}) {
    auto* k = c.add_in_progress();
    k->set_chain_id(id);
    k->set_next_iteration(500 + id);
    k->set_group_size(1);
    for (int i = 0; i < 20; ++i) {
      k->add_x(0.1 * i - id);
      k->add_grad(-0.3 * i);
    }
    k->set_potential(3.25);
    k->mutable_kernel()->set_kind("nuts");
    auto& reals = *k->mutable_kernel()->mutable_reals();
    for (int i = 0; i < 20; ++i) reals["inv_metric"].add_values(1.0 + 0.01 * i);
    for (int i = 0; i < 40; ++i) reals["welford_sums"].add_values(0.5 * i);
    reals["step_size"].add_values(0.125);
  }
  c.add_options("--iterations");
  c.add_options("90");
  return c;
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_bytes(const fs::path& p, const std::string& b) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << b;
}

std::string refusal(const fs::path& p) {
  try {
    read_checkpoint(p);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST(CheckpointIntegrity, RoundTripsThroughTheHeader) {
  TempDir dir;
  const auto path = dir.path / "run.pemc.ckpt";
  const auto c = sample_checkpoint();
  write_checkpoint(path, c);
  const auto bytes = read_bytes(path);
  ASSERT_EQ(bytes.substr(0, 8), "PEMCCKPT");
  EXPECT_GT(bytes.size(), 0x200u) << "the sample must reach the byte the issue flipped";
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(c, read_checkpoint(path)));
}

// The case: one flipped byte at offset 0x200 was accepted. Now every flipped byte, at every
// offset, is refused, and the message names the file.
TEST(CheckpointIntegrity, EveryFlippedByteIsRefused) {
  TempDir dir;
  const auto good = dir.path / "good.ckpt";
  const auto bad = dir.path / "bad.ckpt";
  write_checkpoint(good, sample_checkpoint());
  const auto bytes = read_bytes(good);
  // Every byte in memory (decode_checkpoint is what read_checkpoint applies to the file's bytes)
  // ...
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    for (const unsigned char mask : {0x01, 0x80, 0xff}) {
      auto b = bytes;
      b[at] = static_cast<char>(static_cast<unsigned char>(b[at]) ^ mask);
      try {
        decode_checkpoint(b, "bad.ckpt");
        FAIL() << "a flip of byte " << at << " (mask " << int(mask) << ") was accepted";
      } catch (const DataError& e) {
        ASSERT_NE(std::string(e.what()).find("bad.ckpt: "), std::string::npos) << e.what();
      }
    }
  }
  // ... and through files, in the header and in the content.
  for (const std::size_t at : {std::size_t{0}, std::size_t{9}, std::size_t{13}, std::size_t{20},
                               std::size_t{24}, std::size_t{0x200}, bytes.size() - 1}) {
    auto b = bytes;
    b[at] = static_cast<char>(b[at] ^ 0x01);
    write_bytes(bad, b);
    const auto msg = refusal(bad);
    ASSERT_FALSE(msg.empty()) << "a flip of byte " << at << " was accepted";
    ASSERT_NE(msg.find(bad.string()), std::string::npos) << msg;
  }
  auto b = bytes;
  b[0x200] = static_cast<char>(b[0x200] ^ 0x10);
  write_bytes(bad, b);
  EXPECT_NE(refusal(bad).find("damaged checkpoint: checksum mismatch (stored 0x"),
            std::string::npos)
      << refusal(bad);
}

TEST(CheckpointIntegrity, TruncatedExtendedEmptyAndOldFormatFilesAreRefused) {
  TempDir dir;
  const auto good = dir.path / "good.ckpt";
  const auto bad = dir.path / "bad.ckpt";
  const auto c = sample_checkpoint();
  write_checkpoint(good, c);
  const auto bytes = read_bytes(good);

  write_bytes(bad, bytes.substr(0, bytes.size() - 1));
  EXPECT_NE(refusal(bad).find("the header says " + std::to_string(bytes.size() - 24) +
                              " bytes of content but " + std::to_string(bytes.size() - 25) +
                              " follow (a truncated file, or a damaged header)"),
            std::string::npos)
      << refusal(bad);
  write_bytes(bad, bytes.substr(0, 20));
  EXPECT_NE(refusal(bad).find("the file ends inside its 24-byte header"), std::string::npos)
      << refusal(bad);
  write_bytes(bad, bytes + "x");
  EXPECT_NE(refusal(bad).find("but " + std::to_string(bytes.size() - 23) + " follow"),
            std::string::npos)
      << refusal(bad);
  write_bytes(bad, "");
  EXPECT_NE(refusal(bad).find("empty file, not a pemc checkpoint"), std::string::npos)
      << refusal(bad);
  // Format 1: the bare message.
  write_bytes(bad, c.SerializeAsString());
  EXPECT_NE(refusal(bad).find("not a pemc checkpoint (bad magic: expected \"PEMCCKPT\""),
            std::string::npos)
      << refusal(bad);
  // Another version in an intact header.
  auto v = bytes;
  v[8] = 7;
  write_bytes(bad, v);
  EXPECT_NE(refusal(bad).find("checkpoint format version 7, this pemc-dist reads 2"),
            std::string::npos)
      << refusal(bad);
}

// Content that the checksum vouches for but that cannot be a checkpoint pemc-dist wrote.
TEST(CheckpointIntegrity, InconsistentContentIsRefused) {
  const auto expect_refused = [](v1::Checkpoint c, const std::string& fragment) {
    try {
      decode_checkpoint(encode_checkpoint(c), "x.ckpt");
      ADD_FAILURE() << "accepted; expected: " << fragment;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find("x.ckpt: inconsistent checkpoint: " + fragment),
                std::string::npos)
          << e.what();
    }
  };
  auto c = sample_checkpoint();
  c.mutable_in_progress(1)->set_chain_id(7);
  expect_refused(c, "running chain 7 outside the task range 0..3");
  c = sample_checkpoint();
  c.mutable_completed(0)->set_chain_id(2);
  expect_refused(c, "chain 2 appears twice");
  c = sample_checkpoint();
  c.mutable_in_progress(0)->add_x(1.0);
  expect_refused(c, "chain 0: state of 21 coordinates with a gradient of 20");
  c = sample_checkpoint();
  c.set_record_bytes(3);
  expect_refused(c, "record_bytes 3 is less than the record file's magic");
  c = sample_checkpoint();
  c.set_n_records(1000);
  expect_refused(c, "1000 records cannot fit in 4096 bytes");
  c = sample_checkpoint();
  c.mutable_in_progress(0)->set_next_iteration(-1);
  expect_refused(c, "chain 0: next_iteration -1");
  c = sample_checkpoint();
  c.mutable_in_progress(0)->mutable_kernel()->clear_kind();
  expect_refused(c, "chain 0: no kernel state");
  c = sample_checkpoint();
  c.set_format_version(1);
  try {
    decode_checkpoint(encode_checkpoint(c), "x.ckpt");
    ADD_FAILURE() << "format 1 content accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("content of format version 1"), std::string::npos)
        << e.what();
  }
  // Bytes that do not parse at all, under a correct checksum.
  try {
    decode_checkpoint(checkpoint_file_bytes("\xff\xff\xff"), "x.ckpt");
    ADD_FAILURE() << "garbage content accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("the content does not parse"), std::string::npos)
        << e.what();
  }
}

// The record file is checked against the crc32 the checkpoint stores before it is cut back: another
// record file of the same length and record count (or a damaged one) is refused, and left as it
// was.
TEST(CheckpointIntegrity, RecordPrefixIsCheckedByItsCrc) {
  TempDir dir;
  const auto a = dir.path / "a.pemc";
  const auto b = dir.path / "b.pemc";
  std::int64_t bytes = 0, n = 0;
  std::uint32_t crc = 0;
  for (const auto& [path, value] : {std::pair{a, 1.0}, std::pair{b, 2.0}}) {
    records::RecordWriter w(path, {});
    v1::Record r;
    for (int i = 0; i < 10; ++i) {
      r.mutable_draw()->set_iteration(i);
      r.mutable_draw()->clear_state();
      r.mutable_draw()->add_state(value);
      w.write(r);
      if (i == 5 && path == a) {
        bytes = static_cast<std::int64_t>(w.bytes_written());
        n = w.records_written();
        crc = w.crc32();
      }
    }
    w.close();
  }
  EXPECT_EQ(fs::file_size(a), fs::file_size(b));
  EXPECT_NO_THROW(check_record_prefix(a, bytes, crc));
  try {
    check_record_prefix(b, bytes, crc);
    ADD_FAILURE() << "another record file was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("are not the records the checkpoint covers (crc32 0x"),
              std::string::npos)
        << e.what();
  }
  const auto before = read_bytes(b);
  EXPECT_THROW(reopen_record_file(b, bytes, n, crc), DataError);
  EXPECT_EQ(read_bytes(b), before);
  EXPECT_FALSE(fs::exists(b.string() + ".resume.tmp"));
  auto w = reopen_record_file(a, bytes, n, crc);
  EXPECT_EQ(w.crc32(), crc);
  EXPECT_EQ(w.records_written(), n);
  w.close();
}

TEST(CheckpointIntegrity, HashIgnoresTheOutputPathAndDifferencesAreNamed) {
  v1::RunConfig a;
  a.set_iterations(90);
  a.set_warmup(10);
  a.mutable_output()->set_path("out/run.pemc");
  a.mutable_sampler()->mutable_nuts()->set_step_size(0.1);
  auto moved = a;
  moved.mutable_output()->set_path("elsewhere/run.pemc");
  EXPECT_EQ(config_hash(a), config_hash(moved));
  auto changed = a;
  changed.set_iterations(91);
  changed.mutable_sampler()->mutable_nuts()->set_step_size(0.05);
  EXPECT_NE(config_hash(a), config_hash(changed));
  const auto d = describe_plan_differences(hashed_plan(a), hashed_plan(changed));
  std::string all;
  for (const auto& l : d) all += l + "\n";
  EXPECT_NE(all.find("iterations: checkpoint 90, now 91"), std::string::npos) << all;
  EXPECT_NE(all.find("sampler.nuts.step_size: checkpoint 0.1, now 0.05"), std::string::npos) << all;
  EXPECT_TRUE(describe_plan_differences(hashed_plan(a), hashed_plan(moved)).empty());
}

}  // namespace
}  // namespace pemc::runner
