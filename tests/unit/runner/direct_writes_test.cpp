// Direct writes' rule for who may write (runner/direct_writes.hpp) and its message encodings.
#include "runner/direct_writes.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace pemc::runner {
namespace {

constexpr long kNfs = 0x6969, kExt4 = 0xEF53, kLustre = 0x0BD00BD0, kGpfs = 0x47504653,
               kBeegfs = 0x19830326;

// On the collector's host any file system will do (one page cache); from another host only a
// file system whose clients see each other's writes (never NFS or a node-local disk).
TEST(DirectWrites, ALeaderOnAnotherHostWritesOnlyOnAParallelFileSystem) {
  for (long fs : {kNfs, kExt4, kLustre, kGpfs, kBeegfs, -1L})
    EXPECT_EQ(direct_write_refusal(true, true, /*same_kernel=*/true, fs, "n1", "n1"), "") << fs;
  for (long fs : {kLustre, kGpfs, kBeegfs})
    EXPECT_EQ(direct_write_refusal(true, true, false, fs, "n2", "n1"), "") << fs;
  const std::string nfs = direct_write_refusal(true, true, false, kNfs, "n2", "n1");
  EXPECT_NE(nfs.find("on n2, not the collector's host n1"), std::string::npos) << nfs;
  EXPECT_NE(nfs.find("type 0x6969"), std::string::npos) << nfs;
  EXPECT_NE(direct_write_refusal(true, true, false, kExt4, "n2", "n1"), "");
  EXPECT_NE(direct_write_refusal(true, true, false, -1, "n2", "n1").find("cannot be queried"),
            std::string::npos);
  // Switched off, or an output that is a device: nobody, wherever.
  EXPECT_EQ(direct_write_refusal(false, true, true, kLustre, "n1", "n1"),
            "output.direct_writes is false");
  EXPECT_EQ(direct_write_refusal(true, false, true, kLustre, "n1", "n1"),
            "the output is not a regular file");
}

TEST(DirectWrites, MessagesRoundTripAndMalformedOnesAreRefused) {
  const RecordRange r{123456789012ULL, 64, 0xdeadbeefU};
  const RecordRange d = RecordRange::decode(r.encode());
  EXPECT_EQ(d.bytes, r.bytes);
  EXPECT_EQ(d.records, r.records);
  EXPECT_EQ(d.crc32, r.crc32);
  EXPECT_THROW(RecordRange::decode(r.encode().substr(1)), IoError);
  EXPECT_THROW(RecordRange::decode(RecordRange{0, 1, 0}.encode()), IoError);  // no bytes
  EXPECT_THROW(RecordRange::decode(RecordRange{10, 0, 0}.encode()), IoError);  // no records

  EXPECT_EQ(decode_offset(encode_offset(987654321)), 987654321u);
  EXPECT_THROW(decode_offset("1234"), IoError);
  std::string_view frames;
  EXPECT_EQ(decode_fill(encode_fill(4096, "frames"), frames), 4096u);
  EXPECT_EQ(frames, "frames");
  EXPECT_THROW(decode_fill(encode_offset(8), frames), IoError);  // an offset and no frames
}

}  // namespace
}  // namespace pemc::runner
