#pragma once
// Framing of records in a pemc record file (format: see record_file.hpp).
// A frame is [u32 payload length LE][u32 zlib crc32 of payload LE][payload = serialized pemc.v1.Record].
// Workers frame records with append_frame and ship the bytes; the collector counts them with
// count_frames and writes them unchanged, so the byte layout here is the file format.
#include <cstdint>
#include <string>
#include <string_view>

#include "pemc/v1/records.pb.h"

namespace pemc::records {

inline constexpr std::string_view kMagic = "PEMCREC1";
// A frame longer than this is damage (e.g. a corrupted length field), not a record: no legitimate
// record comes near it, and trusting a corrupted length would make a reader allocate gigabytes.
inline constexpr std::uint32_t kMaxFrameBytes = 256u << 20;
inline constexpr std::size_t kFrameHeaderBytes = 8;  // u32 length + u32 crc32

struct FrameHeader {
  std::uint32_t payload_bytes;
  std::uint32_t crc32;
};

// Decodes the 8 header bytes at `p` (little-endian regardless of host order).
FrameHeader decode_frame_header(const char* p);

// zlib crc32 of `payload` (handles payloads longer than zlib's uInt in one call's worth of chunks).
std::uint32_t payload_crc32(std::string_view payload);

// Appends one frame (length, crc, payload) for `record` to `out`.
// Throws IoError if the record serializes to more than kMaxFrameBytes.
void append_frame(const pemc::v1::Record& record, std::string& out);

// Counts the complete, well-formed frames in a byte buffer of frames, checking each frame's length
// bound and checksum but not parsing payloads. Throws IoError (with the byte offset and frame index)
// if the buffer is not a whole number of valid frames. An empty buffer holds 0 frames.
std::int64_t count_frames(std::string_view frames);

}  // namespace pemc::records
