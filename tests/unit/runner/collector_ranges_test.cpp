// The collector's side of direct writes (runner/direct_writes.hpp): ranges asked for before a
// leader's checkpoint part are reserved at once and lie before the checkpoint's position; ranges
// asked for after it wait until the checkpoint is written and lie after it; the checkpoint's crc32
// is the file's; the finished file reads back whole.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "records/frame_range_writer.hpp"
#include "records/record_file.hpp"
#include "runner/collector.hpp"

namespace pemc::runner {
namespace {

namespace fs = std::filesystem;

std::string frames(int chain, int first, int n) {
  std::string out;
  for (int i = first; i < first + n; ++i) {
    v1::Record r;
    r.mutable_draw()->set_run_id("run");
    r.mutable_draw()->set_chain_id(chain);
    r.mutable_draw()->set_iteration(i);
    r.mutable_draw()->add_state(0.5 * i + chain);
    records::append_frame(r, out);
  }
  return out;
}

RecordRange range_of(const std::string& f) {
  return {f.size(), records::count_frames(f), records::payload_crc32(f)};
}

std::uint32_t crc_of_prefix(const fs::path& p, std::int64_t n) {
  std::ifstream in(p, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(n), '\0');
  in.read(bytes.data(), n);
  return static_cast<std::uint32_t>(
      ::crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n)));
}

TEST(CollectorRanges, RangesAfterALeadersPartWaitForTheCheckpoint) {
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("pemc_collector_ranges_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "out.pemc";
  Collector c(out, /*overwrite=*/false);
  Collector::CheckpointSetup setup;
  setup.path = dir / "out.pemc.ckpt";
  setup.leaders = {1, 2};
  setup.started = std::chrono::steady_clock::now();
  c.set_checkpointing(setup);
  v1::Header h;
  h.set_program_version("test");
  c.write_header(h);
  c.flush();
  std::string why;
  auto leader1 = records::FrameRangeWriter::open(out, records::read_file_prefix(out), why);
  auto leader2 = records::FrameRangeWriter::open(out, records::read_file_prefix(out), why);
  ASSERT_TRUE(leader1 && leader2) << why;

  const std::string a = frames(1, 0, 3), b = frames(1, 3, 2), d = frames(2, 0, 4);
  const auto at_a = c.on_record_range(1, range_of(a));
  ASSERT_TRUE(at_a.has_value());
  leader1->write_at(*at_a, a);
  v1::CheckpointPart part;
  part.set_epoch(1);
  EXPECT_FALSE(c.on_checkpoint_part(1, part).has_value());  // leader 2 has not answered
  // Leader 1's next batch is past its boundary: held. Leader 2's is before its own.
  EXPECT_FALSE(c.on_record_range(1, range_of(b)).has_value());
  const auto at_d = c.on_record_range(2, range_of(d));
  ASSERT_TRUE(at_d.has_value());
  EXPECT_TRUE(c.take_granted().empty());
  leader2->write_at(*at_d, d);
  ASSERT_EQ(c.on_checkpoint_part(2, part), std::optional<std::int64_t>(1));
  ASSERT_TRUE(c.last_checkpoint_error().empty()) << c.last_checkpoint_error();

  const auto& ck = c.last_checkpoint();
  EXPECT_EQ(ck.n_records(), 1 + 3 + 4);
  EXPECT_EQ(static_cast<std::uint64_t>(ck.record_bytes()), *at_d + d.size());
  const auto granted = c.take_granted();
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].first, 1);
  EXPECT_EQ(granted[0].second, static_cast<std::uint64_t>(ck.record_bytes()));
  leader1->write_at(granted[0].second, b);
  EXPECT_EQ(ck.records_crc32(), crc_of_prefix(out, ck.record_bytes()));

  c.finish(1.0);
  const auto all = records::read_all(out);
  EXPECT_FALSE(all.problem.has_value()) << all.problem->message;
  ASSERT_EQ(all.records.size(), 1u + 3 + 4 + 2 + 1);  // header, a, d, b, footer
  EXPECT_EQ(all.records[4].draw().chain_id(), 2);
  EXPECT_EQ(all.records[8].draw().iteration(), 3);
  EXPECT_TRUE(all.records.back().has_footer());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pemc::runner
