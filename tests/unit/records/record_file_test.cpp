// Tests of the record file format, writer and reader (src/records/).
#include "records/record_file.hpp"

#include <gtest/gtest.h>
#include <google/protobuf/util/message_differencer.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace pemc::records {
namespace {

namespace fs = std::filesystem;
using google::protobuf::util::MessageDifferencer;
using pemc::v1::Record;

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << p;
}

std::uint32_t u32_at(const std::string& bytes, std::size_t pos) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[pos + i]);
  return v;
}

Record make_header(int dim) {
  Record r;
  auto* h = r.mutable_header();
  h->set_program_version("test");
  h->set_dim(dim);
  h->set_n_chains(4);
  h->set_target_name("gaussian");
  h->set_sampler_name("nuts");
  h->mutable_config()->set_name("run-42");
  return r;
}

Record make_draw(int i, int dim) {
  Record r;
  auto* d = r.mutable_draw();
  d->set_run_id("run-42");
  d->set_chain_id(i % 4);
  d->set_iteration(i);
  d->set_seed(1234567890123ull + static_cast<unsigned>(i));
  for (int k = 0; k < dim; ++k) d->add_state(0.001 * i - 0.5 * k);
  d->set_potential(1.5 * i);
  d->set_accept_stat(0.8);
  d->set_accepted(i % 3 != 0);
  d->set_n_leapfrog(i % 17);
  return r;
}

Record make_footer(std::int64_t n_records) {
  Record r;
  auto* f = r.mutable_footer();
  f->set_n_records(n_records);
  f->set_status("ok");
  f->add_chains()->set_chain_id(0);
  return r;
}

// header + n_draws draws + footer.
std::vector<Record> make_run(int n_draws, int dim) {
  std::vector<Record> rs{make_header(dim)};
  for (int i = 0; i < n_draws; ++i) rs.push_back(make_draw(i, dim));
  rs.push_back(make_footer(n_draws + 1));
  return rs;
}

void expect_same_records(const std::vector<Record>& got, const std::vector<Record>& want, std::size_t n) {
  ASSERT_EQ(got.size(), n);
  ASSERT_LE(n, want.size());
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(MessageDifferencer::Equals(got[i], want[i])) << "record " << i;
  }
}

// Byte offsets of each frame start in a file's bytes, plus the end offset.
std::vector<std::size_t> frame_offsets(const std::string& bytes) {
  std::vector<std::size_t> offsets;
  std::size_t pos = kMagic.size();
  while (pos < bytes.size()) {
    offsets.push_back(pos);
    pos += kFrameHeaderBytes + u32_at(bytes, pos);
  }
  offsets.push_back(pos);
  return offsets;
}

class RecordFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("pemc_records_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path write_run(const std::string& name, const std::vector<Record>& rs) {
    const fs::path p = dir_ / name;
    RecordWriter w(p, {});
    for (const auto& r : rs) w.write(r);
    w.close();
    return p;
  }
  fs::path dir_;
};

// ---- round trip -------------------------------------------------------------------------------

TEST_F(RecordFileTest, RoundTripHeaderDrawsFooter) {
  // 3000 draws of ~850 bytes: several writer buffer drains and reader refills.
  const auto rs = make_run(3000, 100);
  const fs::path p = dir_ / "run.pemc";
  std::uint64_t bytes_written = 0;
  {
    RecordWriter w(p, {});
    EXPECT_EQ(w.path(), p);
    EXPECT_EQ(w.bytes_written(), kMagic.size());
    for (const auto& r : rs) w.write(r);
    EXPECT_EQ(w.records_written(), static_cast<std::int64_t>(rs.size()));
    bytes_written = w.bytes_written();
    w.close();
    w.close();  // idempotent
  }
  EXPECT_EQ(fs::file_size(p), bytes_written);

  const ReadAllResult all = read_all(p);
  EXPECT_FALSE(all.problem.has_value());
  expect_same_records(all.records, rs, rs.size());

  RecordReader reader(p);
  Record r;
  std::int64_t n = 0;
  while (reader.next(r)) ++n;
  EXPECT_EQ(n, static_cast<std::int64_t>(rs.size()));
  EXPECT_EQ(reader.records_read(), n);
  EXPECT_EQ(reader.offset(), bytes_written);
  EXPECT_FALSE(reader.problem().has_value());
  EXPECT_FALSE(reader.next(r));  // stays at end
}

TEST_F(RecordFileTest, ByteLayoutIsMagicThenLengthCrcPayload) {
  const auto rs = make_run(3, 5);
  const fs::path p = write_run("layout.pemc", rs);
  const std::string bytes = read_bytes(p);
  ASSERT_EQ(bytes.substr(0, 8), "PEMCREC1");
  std::size_t pos = 8;
  for (const auto& r : rs) {
    const std::string payload = r.SerializeAsString();
    ASSERT_EQ(u32_at(bytes, pos), payload.size());
    const auto crc = ::crc32(0L, reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size()));
    ASSERT_EQ(u32_at(bytes, pos + 4), static_cast<std::uint32_t>(crc));
    ASSERT_EQ(bytes.substr(pos + 8, payload.size()), payload);
    pos += 8 + payload.size();
  }
  EXPECT_EQ(pos, bytes.size());
}

TEST_F(RecordFileTest, FrameLargerThanReadBufferRoundTrips) {
  std::vector<Record> rs{make_header(1), make_draw(0, 300000), make_draw(1, 3)};  // 2.4 MB middle frame
  const fs::path p = write_run("big.pemc", rs);
  const ReadAllResult all = read_all(p);
  EXPECT_FALSE(all.problem.has_value());
  expect_same_records(all.records, rs, rs.size());
}

TEST_F(RecordFileTest, MagicOnlyFileHasNoRecords) {
  const fs::path p = write_run("empty_run.pemc", {});
  EXPECT_EQ(read_bytes(p), "PEMCREC1");
  const ReadAllResult all = read_all(p);
  EXPECT_TRUE(all.records.empty());
  EXPECT_FALSE(all.problem.has_value());
}

TEST_F(RecordFileTest, DestructorFlushesAndCloses) {
  const auto rs = make_run(10, 3);
  const fs::path p = dir_ / "dtor.pemc";
  { RecordWriter w(p, {}); for (const auto& r : rs) w.write(r); }
  expect_same_records(read_all(p).records, rs, rs.size());
}

TEST_F(RecordFileTest, WriteAfterCloseThrows) {
  RecordWriter w(dir_ / "closed.pemc", {});
  w.close();
  EXPECT_THROW(w.write(make_draw(0, 1)), IoError);
  EXPECT_THROW(w.flush(), IoError);
}

TEST_F(RecordFileTest, MovedWriterKeepsWriting) {
  const auto rs = make_run(4, 2);
  const fs::path p = dir_ / "moved.pemc";
  RecordWriter a(p, {});
  a.write(rs[0]);
  RecordWriter b(std::move(a));
  for (std::size_t i = 1; i < rs.size(); ++i) b.write(rs[i]);
  EXPECT_EQ(b.records_written(), static_cast<std::int64_t>(rs.size()));
  b.close();
  expect_same_records(read_all(p).records, rs, rs.size());
}

// ---- append_frame / count_frames / write_frames ------------------------------------------------

TEST(Frames, AppendFrameAndCountFrames) {
  EXPECT_EQ(count_frames(""), 0);
  const auto rs = make_run(20, 7);
  std::string frames;
  for (std::size_t i = 0; i < rs.size(); ++i) {
    append_frame(rs[i], frames);
    EXPECT_EQ(count_frames(frames), static_cast<std::int64_t>(i + 1));
  }
  // An empty Record is a valid zero-length frame.
  std::string empty;
  append_frame(Record{}, empty);
  EXPECT_EQ(empty.size(), kFrameHeaderBytes);
  EXPECT_EQ(count_frames(empty), 1);
}

TEST(Frames, CountFramesRejectsDamage) {
  const auto rs = make_run(5, 4);
  std::string frames;
  for (const auto& r : rs) append_frame(r, frames);
  for (std::size_t cut : {std::size_t{1}, std::size_t{5}, std::size_t{9}, frames.size() - 1}) {
    EXPECT_THROW(count_frames(std::string_view(frames).substr(0, cut)), IoError) << "cut at " << cut;
  }
  std::string flipped = frames;
  flipped[frames.size() - 3] ^= 0x20;
  try {
    count_frames(flipped);
    ADD_FAILURE() << "flipped byte not detected";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("frame 6"), std::string::npos) << e.what();
  }
  std::string huge = frames;
  huge[0] = huge[1] = huge[2] = huge[3] = '\xff';
  EXPECT_THROW(count_frames(huge), IoError);
}

TEST_F(RecordFileTest, WriteFramesMatchesWrite) {
  const auto rs = make_run(50, 6);
  const fs::path a = write_run("a.pemc", rs);
  const fs::path b = dir_ / "b.pemc";
  {
    RecordWriter w(b, {});
    std::string batch;
    append_frame(rs[0], batch);
    w.write_frames(batch, 1);
    batch.clear();
    for (std::size_t i = 1; i < rs.size(); ++i) append_frame(rs[i], batch);
    w.write_frames(batch, count_frames(batch));
    w.write_frames("", 0);
    EXPECT_EQ(w.records_written(), static_cast<std::int64_t>(rs.size()));
    EXPECT_EQ(w.bytes_written(), fs::file_size(a));
    w.close();
  }
  EXPECT_EQ(read_bytes(a), read_bytes(b));
}

TEST_F(RecordFileTest, WriteFramesLargerThanBuffer) {
  const auto rs = make_run(2000, 100);  // ~1.7 MB batch, written past the buffer
  std::string batch;
  for (const auto& r : rs) append_frame(r, batch);
  const fs::path p = dir_ / "batch.pemc";
  {
    RecordWriter w(p, {});
    w.write(rs[0]);
    w.write_frames(batch, static_cast<std::int64_t>(rs.size()));
    w.close();
  }
  std::vector<Record> want{rs[0]};
  want.insert(want.end(), rs.begin(), rs.end());
  expect_same_records(read_all(p).records, want, want.size());
}

TEST_F(RecordFileTest, WriteFramesRejectsWrongCountOrBrokenFrames) {
  std::string batch;
  append_frame(make_draw(0, 3), batch);
  append_frame(make_draw(1, 3), batch);
  RecordWriter w(dir_ / "wf.pemc", {});
  EXPECT_THROW(w.write_frames(batch, 3), IoError);
  EXPECT_THROW(w.write_frames(std::string_view(batch).substr(0, batch.size() - 1), 2), IoError);
  EXPECT_EQ(w.records_written(), 0);
  EXPECT_EQ(w.bytes_written(), kMagic.size());
  w.write_frames(batch, 2);  // still usable: nothing was written
  w.close();
  EXPECT_EQ(read_all(dir_ / "wf.pemc").records.size(), 2u);
}

// ---- damaged files --------------------------------------------------------------------------------

TEST_F(RecordFileTest, TruncatedFileReturnsEarlierRecordsAndReportsTear) {
  const auto rs = make_run(10, 8);
  const fs::path full = write_run("full.pemc", rs);
  const std::string bytes = read_bytes(full);
  const auto offsets = frame_offsets(bytes);
  ASSERT_EQ(offsets.size(), rs.size() + 1);
  const std::size_t k = 5;  // cut inside frame k
  const std::size_t start = offsets[k];
  const std::size_t payload = offsets[k + 1] - start - kFrameHeaderBytes;
  struct Cut {
    std::size_t at;
    const char* where;
  };
  const Cut cuts[] = {{start + 1, "inside the length"},
                      {start + 3, "inside the length"},
                      {start + 4, "between length and crc"},
                      {start + 6, "inside the crc"},
                      {start + 8, "after the header"},
                      {start + 8 + payload / 2, "inside the payload"},
                      {offsets[k + 1] - 1, "last payload byte missing"}};
  for (const Cut& cut : cuts) {
    SCOPED_TRACE(std::string(cut.where) + " (cut at " + std::to_string(cut.at) + ")");
    const fs::path p = dir_ / "cut.pemc";
    write_bytes(p, std::string_view(bytes).substr(0, cut.at));
    const ReadAllResult all = read_all(p);
    expect_same_records(all.records, rs, k);
    ASSERT_TRUE(all.problem.has_value());
    EXPECT_EQ(all.problem->offset, start);
    EXPECT_EQ(all.problem->record_index, static_cast<std::int64_t>(k));
    EXPECT_NE(all.problem->message.find("torn frame"), std::string::npos) << all.problem->message;

    const VerifyResult v = verify(p);
    EXPECT_EQ(v.n_records, static_cast<std::int64_t>(k));
    EXPECT_EQ(v.n_bytes, start);
    EXPECT_TRUE(v.has_header);
    EXPECT_FALSE(v.has_footer);
    ASSERT_TRUE(v.problem.has_value());
    EXPECT_EQ(v.problem->offset, start);
  }
  {
    const fs::path p = dir_ / "cut.pemc";
    write_bytes(p, std::string_view(bytes).substr(0, start + 4));
    const ReadAllResult all = read_all(p);
    ASSERT_TRUE(all.problem.has_value());
    EXPECT_EQ(all.problem->message, "torn frame: only 4 of 8 header bytes remain");
    write_bytes(p, std::string_view(bytes).substr(0, start + 8 + 10));
    const ReadAllResult torn = read_all(p);
    ASSERT_TRUE(torn.problem.has_value());
    EXPECT_EQ(torn.problem->message,
              "torn frame: header says " + std::to_string(payload) + " bytes but only 10 remain");
  }
}

TEST_F(RecordFileTest, CutAtFrameBoundaryIsCleanEnd) {
  const auto rs = make_run(10, 8);
  const std::string bytes = read_bytes(write_run("full.pemc", rs));
  const auto offsets = frame_offsets(bytes);
  for (std::size_t k : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
    const fs::path p = dir_ / "boundary.pemc";
    write_bytes(p, std::string_view(bytes).substr(0, offsets[k]));
    const ReadAllResult all = read_all(p);
    EXPECT_FALSE(all.problem.has_value()) << "k=" << k;
    expect_same_records(all.records, rs, k);
  }
}

TEST_F(RecordFileTest, FlippedPayloadByteIsChecksumMismatchAtThatRecord) {
  const auto rs = make_run(10, 8);
  std::string bytes = read_bytes(write_run("full.pemc", rs));
  const auto offsets = frame_offsets(bytes);
  const std::size_t k = 6;
  bytes[offsets[k] + kFrameHeaderBytes + 11] ^= 0x01;
  const fs::path p = dir_ / "flipped.pemc";
  write_bytes(p, bytes);

  const ReadAllResult all = read_all(p);
  expect_same_records(all.records, rs, k);
  ASSERT_TRUE(all.problem.has_value());
  EXPECT_EQ(all.problem->offset, offsets[k]);
  EXPECT_EQ(all.problem->record_index, static_cast<std::int64_t>(k));
  EXPECT_EQ(all.problem->message.rfind("checksum mismatch", 0), 0u) << all.problem->message;

  RecordReader reader(p);
  Record r;
  while (reader.next(r)) {
  }
  EXPECT_EQ(reader.records_read(), static_cast<std::int64_t>(k));
  EXPECT_EQ(reader.offset(), offsets[k]);
  EXPECT_FALSE(reader.next(r));  // stays stopped

  const VerifyResult v = verify(p);
  EXPECT_EQ(v.n_records, static_cast<std::int64_t>(k));
  EXPECT_EQ(v.n_bytes, offsets[k]);
  EXPECT_TRUE(v.has_header);
  EXPECT_FALSE(v.has_footer);
  ASSERT_TRUE(v.problem.has_value());
  EXPECT_EQ(v.problem->record_index, static_cast<std::int64_t>(k));
}

TEST_F(RecordFileTest, DamagedLengthFieldIsReportedNotAllocated) {
  const auto rs = make_run(4, 3);
  std::string bytes = read_bytes(write_run("full.pemc", rs));
  const auto offsets = frame_offsets(bytes);
  for (int i = 0; i < 4; ++i) bytes[offsets[2] + i] = '\xff';
  const fs::path p = dir_ / "len.pemc";
  write_bytes(p, bytes);
  const ReadAllResult all = read_all(p);
  expect_same_records(all.records, rs, 2);
  ASSERT_TRUE(all.problem.has_value());
  EXPECT_EQ(all.problem->offset, offsets[2]);
  EXPECT_NE(all.problem->message.find("exceeds the limit"), std::string::npos) << all.problem->message;
}

TEST_F(RecordFileTest, UnparsablePayloadWithValidChecksum) {
  const auto rs = make_run(2, 3);
  std::string bytes = read_bytes(write_run("full.pemc", rs));
  const std::size_t end = bytes.size();
  // A truncated varint tag: never a valid protobuf message.
  const std::string junk = "\xff\xff\xff";
  const auto crc = static_cast<std::uint32_t>(
      ::crc32(0L, reinterpret_cast<const Bytef*>(junk.data()), static_cast<uInt>(junk.size())));
  for (std::uint32_t v : {static_cast<std::uint32_t>(junk.size()), crc}) {
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  bytes += junk;
  const fs::path p = dir_ / "junk.pemc";
  write_bytes(p, bytes);
  const ReadAllResult all = read_all(p);
  expect_same_records(all.records, rs, rs.size());
  ASSERT_TRUE(all.problem.has_value());
  EXPECT_EQ(all.problem->offset, end);
  EXPECT_EQ(all.problem->message, "payload does not parse as a Record");
  // count_frames checks framing and checksums only, so it counts the junk frame.
  EXPECT_EQ(count_frames(std::string_view(bytes).substr(kMagic.size())), static_cast<std::int64_t>(rs.size() + 1));
}

// ---- bad inputs to the reader --------------------------------------------------------------------

void expect_io_error(const std::function<void()>& f, const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "no IoError";
  } catch (const IoError& e) {
    for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

TEST_F(RecordFileTest, ReaderRejectsBadMagicEmptyMissingAndDirectory) {
  const fs::path bad = dir_ / "bad.pemc";
  write_bytes(bad, "PEMCREC2 and then some bytes");
  expect_io_error([&] { RecordReader r(bad); }, {bad.string(), "not a pemc record file", "bad magic"});
  expect_io_error([&] { read_all(bad); }, {"bad magic"});
  expect_io_error([&] { verify(bad); }, {"bad magic"});

  const fs::path empty = dir_ / "empty.pemc";
  write_bytes(empty, "");
  expect_io_error([&] { RecordReader r(empty); }, {empty.string(), "empty file"});

  const fs::path short_file = dir_ / "short.pemc";
  write_bytes(short_file, "PEMC");
  expect_io_error([&] { RecordReader r(short_file); }, {short_file.string(), "not a pemc record file"});

  const fs::path missing = dir_ / "missing.pemc";
  expect_io_error([&] { RecordReader r(missing); }, {missing.string(), "No such file or directory"});

  // Not a regular file: refused when opened, without reading (a FIFO would block the reader).
  const auto expect_refused = [](const fs::path& p, const std::string& kind) {
    try {
      RecordReader r(p);
      ADD_FAILURE() << p << " not refused";
    } catch (const UntrustedInputError& e) {
      EXPECT_EQ(std::string(e.what()), p.string() + " is " + kind +
                                           ", not a record file (pemc-report reads regular files "
                                           "only)");
    }
  };
  expect_refused(dir_, "a directory");
  const fs::path fifo = dir_ / "fifo.pemc";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(fifo, "a FIFO (named pipe)");
}

// ---- writer refusals and errors ------------------------------------------------------------------

TEST_F(RecordFileTest, RefusesExistingFileAndLeavesItUnchanged) {
  const fs::path p = dir_ / "existing.pemc";
  const std::string precious = "results of a week-long run";
  write_bytes(p, precious);
  try {
    RecordWriter w(p, {});
    ADD_FAILURE() << "existing file not refused";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              p.string() + ": output file already exists (use --overwrite to replace it, or --resume)");
  }
  EXPECT_EQ(read_bytes(p), precious);
}

TEST_F(RecordFileTest, OverwriteReplacesExistingFile) {
  const fs::path p = dir_ / "existing.pemc";
  write_bytes(p, std::string(100000, 'x'));  // longer than the new file: must be truncated
  const auto rs = make_run(3, 2);
  {
    RecordWriter w(p, {.overwrite = true});
    for (const auto& r : rs) w.write(r);
    w.close();
  }
  const ReadAllResult all = read_all(p);
  EXPECT_FALSE(all.problem.has_value());
  expect_same_records(all.records, rs, rs.size());
}

TEST_F(RecordFileTest, MissingDirectoryIsAnErrorNamingThePath) {
  const fs::path p = dir_ / "no" / "such" / "dir" / "run.pemc";
  expect_io_error([&] { RecordWriter w(p, {}); },
                  {p.string(), "No such file or directory", "does not exist"});
  EXPECT_FALSE(fs::exists(dir_ / "no"));
}

TEST_F(RecordFileTest, ParentThatIsAFileIsAnError) {
  const fs::path file = dir_ / "plain";
  write_bytes(file, "x");
  const fs::path p = file / "run.pemc";
  expect_io_error([&] { RecordWriter w(p, {}); }, {p.string(), "Not a directory"});
}

TEST_F(RecordFileTest, UnwritableDirectoryIsAnError) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: directory permissions are not enforced";
  const fs::path ro = dir_ / "readonly";
  fs::create_directories(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  const fs::path p = ro / "run.pemc";
  expect_io_error([&] { RecordWriter w(p, {}); }, {p.string(), "Permission denied"});
  fs::permissions(ro, fs::perms::owner_all);
}

TEST_F(RecordFileTest, DiskFullOnDevFull) {
  const fs::path dev_full = "/dev/full";
  if (!fs::exists(dev_full)) GTEST_SKIP() << "/dev/full not available";
  // The magic is written at construction, so a full device is reported there.
  expect_io_error([&] { RecordWriter w(dev_full, {.overwrite = true}); },
                  {"/dev/full", "disk full (ENOSPC)"});
  EXPECT_TRUE(fs::is_character_file(dev_full));
}

// A file-size limit in a forked child (SIGXFSZ ignored so write() fails with EFBIG) stands in for a
// disk that fills up mid-run: the flush must fail with an IoError naming the path, the writer must
// refuse further writes, close() must not throw, and the file must read back as a good prefix.
TEST_F(RecordFileTest, FileSizeLimitMidRunIsAnIoError) {
  const fs::path p = dir_ / "limited.pemc";
  const auto rs = make_run(300, 100);  // ~250 KB, beyond the 64 KiB limit
  auto child = [&]() {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit lim{64 * 1024, 64 * 1024};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) std::_Exit(10);
    RecordWriter w(p, {});
    for (const auto& r : rs) w.write(r);  // all buffered (< 1 MiB)
    try {
      w.flush();
      std::_Exit(11);
    } catch (const IoError& e) {
      const std::string m = e.what();
      if (m.find(p.string()) == std::string::npos || m.find("EFBIG") == std::string::npos) {
        std::cerr << "bad message: " << m;
        std::_Exit(12);
      }
      std::cerr << m << "\n";
    }
    try {
      w.write(rs[0]);
      std::_Exit(13);
    } catch (const IoError&) {
    }
    try {
      w.close();
    } catch (...) {
      std::_Exit(14);
    }
    if (fs::file_size(p) != 64 * 1024) std::_Exit(15);
    const VerifyResult v = verify(p);
    if (!v.problem || !v.has_header || v.has_footer || v.n_records < 10) std::_Exit(16);
    if (v.problem->message.find("torn frame") == std::string::npos) std::_Exit(17);
    std::_Exit(0);
  };
  EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "limited.pemc: write failed: File too large \\(EFBIG\\)");
}

// Many frames through the reader's refill path: verify counts all of them.
TEST_F(RecordFileTest, VerifyGoodFile) {
  const auto rs = make_run(5000, 30);
  const fs::path p = write_run("good.pemc", rs);
  const VerifyResult v = verify(p);
  EXPECT_EQ(v.n_records, static_cast<std::int64_t>(rs.size()));
  EXPECT_EQ(v.n_bytes, fs::file_size(p));
  EXPECT_FALSE(v.problem.has_value());
  EXPECT_TRUE(v.has_header);
  EXPECT_TRUE(v.has_footer);
}

}  // namespace
}  // namespace pemc::records
