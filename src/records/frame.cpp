#include "records/frame.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>

#include "core/error.hpp"

namespace pemc::records {

namespace {

void store_u32_le(std::uint32_t v, char* p) {
  p[0] = static_cast<char>(v & 0xffu);
  p[1] = static_cast<char>((v >> 8) & 0xffu);
  p[2] = static_cast<char>((v >> 16) & 0xffu);
  p[3] = static_cast<char>((v >> 24) & 0xffu);
}

std::uint32_t load_u32_le(const char* p) {
  const auto b = [p](int i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(p[i])); };
  return b(0) | (b(1) << 8) | (b(2) << 16) | (b(3) << 24);
}

}  // namespace

FrameHeader decode_frame_header(const char* p) { return FrameHeader{load_u32_le(p), load_u32_le(p + 4)}; }

std::uint32_t payload_crc32(std::string_view payload) {
  uLong crc = ::crc32(0L, Z_NULL, 0);
  const auto* data = reinterpret_cast<const Bytef*>(payload.data());
  std::size_t left = payload.size();
  constexpr std::size_t kChunk = std::numeric_limits<uInt>::max();
  while (left > 0) {
    const std::size_t n = std::min(left, kChunk);
    crc = ::crc32(crc, data, static_cast<uInt>(n));
    data += n;
    left -= n;
  }
  return static_cast<std::uint32_t>(crc);
}

void append_frame(const pemc::v1::Record& record, std::string& out) {
  const std::size_t size = record.ByteSizeLong();
  if (size > kMaxFrameBytes) {
    throw IoError("record of " + std::to_string(size) + " bytes exceeds the frame limit of " +
                  std::to_string(kMaxFrameBytes) + " bytes");
  }
  const std::size_t start = out.size();
  out.resize(start + kFrameHeaderBytes + size);
  char* header = out.data() + start;
  auto* payload = reinterpret_cast<std::uint8_t*>(header + kFrameHeaderBytes);
  // ByteSizeLong() above cached the sizes, so this serializes without recomputing them.
  record.SerializeWithCachedSizesToArray(payload);
  const std::uint32_t crc =
      payload_crc32(std::string_view(header + kFrameHeaderBytes, size));
  store_u32_le(static_cast<std::uint32_t>(size), header);
  store_u32_le(crc, header + 4);
}

std::int64_t count_frames(std::string_view frames) {
  std::int64_t n = 0;
  std::size_t pos = 0;
  const auto fail = [&](const std::string& why) {
    throw IoError("frame buffer of " + std::to_string(frames.size()) + " bytes: frame " + std::to_string(n) +
                  " at byte " + std::to_string(pos) + ": " + why);
  };
  while (pos < frames.size()) {
    const std::size_t remaining = frames.size() - pos;
    if (remaining < kFrameHeaderBytes) {
      fail("torn frame: only " + std::to_string(remaining) + " of " + std::to_string(kFrameHeaderBytes) +
           " header bytes remain");
    }
    const FrameHeader h = decode_frame_header(frames.data() + pos);
    if (h.payload_bytes > kMaxFrameBytes) {
      fail("frame length " + std::to_string(h.payload_bytes) + " exceeds the limit of " +
           std::to_string(kMaxFrameBytes) + " bytes (damaged length field)");
    }
    if (h.payload_bytes > remaining - kFrameHeaderBytes) {
      fail("torn frame: header says " + std::to_string(h.payload_bytes) + " bytes but only " +
           std::to_string(remaining - kFrameHeaderBytes) + " remain");
    }
    const std::string_view payload = frames.substr(pos + kFrameHeaderBytes, h.payload_bytes);
    if (payload_crc32(payload) != h.crc32) fail("checksum mismatch");
    pos += kFrameHeaderBytes + h.payload_bytes;
    ++n;
  }
  return n;
}

}  // namespace pemc::records
