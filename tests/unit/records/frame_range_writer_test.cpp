// Ranges of a record file reserved by its RecordWriter and written by FrameRangeWriter (what a
// chain's leader does with direct writes, runner/direct_writes.hpp): the file is byte for byte the
// one the writer makes alone, its crc32 is combined right, a range never written is a gap readers
// report and read past, the file's writer can fill a range itself, and a range writer refuses a
// file that is not the one it was told about.
#include "records/frame_range_writer.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "records/record_file.hpp"

namespace pemc::records {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::uint32_t crc_of(const std::string& bytes) {
  return static_cast<std::uint32_t>(
      ::crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

v1::Record draw(int i, int dim) {
  v1::Record r;
  auto* d = r.mutable_draw();
  d->set_run_id("run");
  d->set_chain_id(i % 3);
  d->set_iteration(i);
  for (int k = 0; k < dim; ++k) d->add_state(0.25 * i - k);
  d->set_potential(0.5 * i);
  return r;
}

v1::Record header() {
  v1::Record r;
  r.mutable_header()->set_program_version("test");
  r.mutable_header()->set_dim(3);
  return r;
}

// Batch b: records [first, first + n) framed.
std::string frames(int first, int n, int dim = 3) {
  std::string out;
  for (int i = first; i < first + n; ++i) append_frame(draw(i, dim), out);
  return out;
}

class FrameRangeWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("pemc_ranges_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(FrameRangeWriterTest, ReservedRangesMakeTheSameFileAsTheWriterAlone) {
  // The reference: one writer writes header, batches A, B, C, D and a footer-like draw in order.
  const std::vector<std::string> batches{frames(0, 5), frames(5, 1), frames(6, 7, 40),
                                         frames(13, 3)};
  const fs::path alone = dir_ / "alone.pemc", shared = dir_ / "shared.pemc";
  {
    RecordWriter w(alone, {});
    w.write(header());
    for (const auto& b : batches) w.write_frames(b, count_frames(b));
    w.write(draw(99, 2));
    w.close();
  }
  // The same stream where batches A and C are ranges another writer fills in, in reverse order,
  // and B and D go through the writer's buffer between them.
  std::uint32_t combined = 0;
  std::int64_t records = 0;
  {
    RecordWriter w(shared, {});
    w.write(header());
    w.flush();
    std::string why;
    auto ranges = FrameRangeWriter::open(shared, read_file_prefix(shared), why);
    ASSERT_TRUE(ranges) << why;
    const auto a = w.reserve(batches[0].size(), 5, payload_crc32(batches[0]));
    w.write_frames(batches[1], 1);
    const auto c = w.reserve(batches[2].size(), 7, payload_crc32(batches[2]));
    w.write_frames(batches[3], 3);
    w.write(draw(99, 2));
    ranges->write_at(c, batches[2]);
    ranges->write_at(a, batches[0]);
    ranges->sync();
    combined = w.crc32();
    records = w.records_written();
    EXPECT_EQ(w.bytes_written(), fs::file_size(alone));
    w.close();
  }
  const std::string want = read_bytes(alone), got = read_bytes(shared);
  EXPECT_EQ(got, want);
  EXPECT_EQ(combined, crc_of(want));
  EXPECT_EQ(records, 1 + 5 + 1 + 7 + 3 + 1);
  const auto v = verify(shared);
  EXPECT_FALSE(v.problem.has_value());
  EXPECT_EQ(v.n_records, records);
}

// A rank killed between being given a range and writing it leaves zeros: readers report the gap
// as damage where it starts and read the records after it; zeros to the end stop them.
TEST_F(FrameRangeWriterTest, ARangeNeverWrittenIsAGapThatReadersReportAndSkip) {
  const fs::path p = dir_ / "hole.pemc";
  // After the first gap, a frame whose length field begins with a zero byte (a 512-byte record:
  // 00 02 00 00), so the gap's zeros run into the frame's header.
  v1::Record round = draw(6, 60);
  for (int n = 0; round.ByteSizeLong() % 256 != 0; ++n) round.mutable_draw()->set_run_id(std::string(n, 'r'));
  std::string c;
  append_frame(round, c);
  ASSERT_EQ(c[0], 0);
  c += frames(7, 2);
  const std::string a = frames(0, 4), hole = frames(4, 2), hole2 = frames(9, 1);
  std::uint64_t hole_at = 0, hole2_at = 0;
  {
    RecordWriter w(p, {});
    w.write(header());
    w.write_frames(a, 4);
    hole_at = w.reserve(hole.size(), 2, payload_crc32(hole));
    const auto c_at = w.reserve(c.size(), 3, payload_crc32(c));
    hole2_at = w.reserve(hole2.size(), 1, payload_crc32(hole2));
    w.write(draw(10, 1));
    std::string why;
    auto ranges = FrameRangeWriter::open(p, read_file_prefix(p), why);
    ASSERT_TRUE(ranges) << why;
    ranges->write_at(c_at, c);  // the holes' writers never write (they were killed)
    w.close();
  }
  const auto v = verify(p);
  ASSERT_TRUE(v.problem.has_value());
  EXPECT_EQ(v.problem->offset, hole_at);
  EXPECT_EQ(v.problem->record_index, 1 + 4);
  EXPECT_NE(v.problem->message.find("zero-filled gap of " + std::to_string(hole.size()) + " bytes"),
            std::string::npos) << v.problem->message;
  EXPECT_NE(v.problem->message.find("gap of " + std::to_string(hole2.size()) + " bytes at byte " +
                                    std::to_string(hole2_at)),
            std::string::npos) << v.problem->message;
  EXPECT_EQ(v.n_records, 1 + 4 + 3 + 1);  // the two gaps' 3 records are missing
  const auto all = read_all(p);
  ASSERT_EQ(all.records.size(), 9u);
  EXPECT_EQ(all.records[5].draw().iteration(), 6);
  EXPECT_EQ(all.records[8].draw().iteration(), 10);

  // Zeros to the end of the file (a range at the end never written): reading stops there.
  const fs::path tail = dir_ / "tail.pemc";
  {
    RecordWriter w(tail, {});
    w.write(header());
    w.write_frames(a, 4);
    w.flush();
    const auto at = w.reserve(hole.size(), 2, payload_crc32(hole));
    ASSERT_EQ(::truncate(tail.c_str(), static_cast<off_t>(at + hole.size())), 0);
    w.close();
  }
  const auto t = verify(tail);
  ASSERT_TRUE(t.problem.has_value());
  EXPECT_EQ(t.n_records, 5);
  EXPECT_NE(t.problem->message.find("zero-length frame"), std::string::npos) << t.problem->message;
}

TEST_F(FrameRangeWriterTest, RefusesAFileThatIsNotTheWritersOne) {
  const fs::path p = dir_ / "out.pemc";
  {
    RecordWriter w(p, {});
    w.write(header());
    w.close();
  }
  const FilePrefix prefix = read_file_prefix(p);
  EXPECT_EQ(prefix.bytes, fs::file_size(p));
  std::string why;
  EXPECT_TRUE(FrameRangeWriter::open(p, prefix, why)) << why;

  // Another file of the same name: same magic, another header.
  const fs::path other = dir_ / "other" / "out.pemc";
  fs::create_directories(other.parent_path());
  {
    RecordWriter w(other, {});
    v1::Record h = header();
    h.mutable_header()->set_dim(4);
    w.write(h);
    w.close();
  }
  why.clear();
  EXPECT_FALSE(FrameRangeWriter::open(other, prefix, why));
  EXPECT_NE(why.find("begins differently"), std::string::npos) << why;

  // A shorter file (the prefix cannot be read), a missing file, a link and a FIFO.
  const fs::path shorter = dir_ / "short.pemc";
  { std::ofstream(shorter, std::ios::binary) << "PEMCREC1"; }
  why.clear();
  EXPECT_FALSE(FrameRangeWriter::open(shorter, prefix, why));
  EXPECT_NE(why.find("begins differently"), std::string::npos) << why;
  why.clear();
  EXPECT_FALSE(FrameRangeWriter::open(dir_ / "missing.pemc", prefix, why));
  EXPECT_NE(why.find("missing.pemc"), std::string::npos) << why;
  const fs::path link = dir_ / "link.pemc";
  fs::create_symlink(p, link);
  why.clear();
  EXPECT_FALSE(FrameRangeWriter::open(link, prefix, why));
  EXPECT_NE(why.find("link.pemc"), std::string::npos) << why;
  const fs::path fifo = dir_ / "fifo.pemc";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  why.clear();
  EXPECT_FALSE(FrameRangeWriter::open(fifo, prefix, why));
  EXPECT_NE(why.find("not a regular file"), std::string::npos) << why;
}

// A leader that cannot write its range sends the frames to the collector, which fills the range.
TEST_F(FrameRangeWriterTest, TheWriterFillsARangeItsOwnerCouldNotWrite) {
  const fs::path p = dir_ / "fill.pemc";
  const std::string a = frames(0, 4), b = frames(4, 3);
  {
    RecordWriter w(p, {});
    w.write(header());
    const auto at = w.reserve(a.size(), 4, payload_crc32(a));
    w.write_frames(b, 3);
    // Not whole frames, or not within a reserved range: refused, and the writer stays usable.
    EXPECT_THROW(w.fill(at, std::string_view(a).substr(0, a.size() - 1), 4), IoError);
    EXPECT_THROW(w.fill(w.bytes_written() + 64, a, 4), IoError);
    EXPECT_THROW(w.fill(2, a, 4), IoError);
    w.fill(at, a, 4);
    w.close();
  }
  const auto v = verify(p);
  EXPECT_FALSE(v.problem.has_value()) << v.problem->message;
  EXPECT_EQ(v.n_records, 1 + 4 + 3);
}

TEST_F(FrameRangeWriterTest, ADeviceTakesNoRanges) {
  RecordWriter w("/dev/null", {true});
  EXPECT_THROW(w.reserve(100, 1, 0), IoError);
}

}  // namespace
}  // namespace pemc::records
