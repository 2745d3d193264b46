#include "runner/checkpoint.hpp"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "records/frame.hpp"
#include "records/posix_io.hpp"

namespace pemc::runner {

// Messages name the file and the errno (records/posix_io.hpp), like the record files' errors.
using records::detail::io_message;

std::filesystem::path checkpoint_path(const v1::RunConfig& plan) {
  if (!plan.checkpoint().path().empty()) return plan.checkpoint().path();
  return plan.output().path() + ".ckpt";
}

std::uint64_t config_hash(const v1::RunConfig& plan) {
  v1::RunConfig copy = plan;
  copy.clear_checkpoint();
  copy.clear_logging();
  for (auto& r : *copy.mutable_runs()) {
    r.clear_checkpoint();
    r.clear_logging();
  }
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    copy.SerializeToCodedStream(&coded);
  }
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void fsync_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(io_message(path, "cannot open to sync", errno));
  const int rc = ::fsync(fd);
  const int e = errno;
  ::close(fd);
  if (rc != 0 && e != EINVAL && e != EROFS) throw IoError(io_message(path, "fsync failed", e));
}

void write_checkpoint(const std::filesystem::path& path, const v1::Checkpoint& checkpoint) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  std::string bytes;
  if (!checkpoint.SerializeToString(&bytes))
    throw IoError(path.string() + ": cannot serialise the checkpoint");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(io_message(tmp, "cannot create checkpoint file", errno));
  try {
    records::detail::write_all(fd, bytes.data(), bytes.size(), tmp);
    if (::fsync(fd) != 0) throw IoError(io_message(tmp, "fsync failed", errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) throw IoError(io_message(tmp, "close failed", errno));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw IoError(io_message(path, "cannot rename " + tmp.filename().string() + " over it", e));
  }
  records::detail::fsync_parent_directory(path);
}

v1::Checkpoint read_checkpoint(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(io_message(path, "cannot open checkpoint", errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw IoError(path.string() + ": error reading the checkpoint");
  v1::Checkpoint c;
  if (!c.ParseFromString(bytes)) throw DataError(path.string() + ": not a pemc checkpoint (parse failed)");
  if (c.format_version() != kCheckpointFormatVersion)
    throw DataError(path.string() + ": checkpoint format version " +
                    std::to_string(c.format_version()) + ", this pemc-dist reads " +
                    std::to_string(kCheckpointFormatVersion));
  return c;
}

records::RecordWriter reopen_record_file(const std::filesystem::path& path, std::int64_t bytes,
                                         std::int64_t n_records) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw IoError(path.string() + ": cannot resume: " + ec.message());
  const auto magic = static_cast<std::int64_t>(records::kMagic.size());
  if (bytes < magic || static_cast<std::int64_t>(size) < bytes)
    throw DataError(path.string() + ": cannot resume: the checkpoint covers " + std::to_string(bytes) +
                    " bytes of records but the file has " + std::to_string(size));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(io_message(path, "cannot open to resume", errno));
  std::string head(records::kMagic.size(), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (!in || head != records::kMagic)
    throw DataError(path.string() + ": cannot resume: not a pemc record file (bad magic)");

  const std::filesystem::path tmp = path.string() + ".resume.tmp";
  records::RecordWriter writer(tmp, records::RecordWriter::Options{/*overwrite=*/true});
  try {
    // Copy whole frames in chunks of about 8 MiB (write_frames takes whole frames only).
    std::int64_t pos = magic, copied = 0;
    std::string chunk;
    char header[records::kFrameHeaderBytes];
    while (pos < bytes) {
      chunk.clear();
      std::int64_t in_chunk = 0;
      while (pos < bytes && chunk.size() < (std::size_t{8} << 20)) {
        if (bytes - pos < static_cast<std::int64_t>(records::kFrameHeaderBytes) ||
            !in.read(header, sizeof header))
          throw DataError(path.string() + ": cannot resume: torn frame header at byte " + std::to_string(pos));
        const auto h = records::decode_frame_header(header);
        const auto frame = static_cast<std::int64_t>(records::kFrameHeaderBytes + h.payload_bytes);
        if (h.payload_bytes > records::kMaxFrameBytes || pos + frame > bytes)
          throw DataError(path.string() + ": cannot resume: frame at byte " + std::to_string(pos) +
                          " crosses the checkpoint's position " + std::to_string(bytes));
        const std::size_t at = chunk.size();
        chunk.append(header, sizeof header);
        chunk.resize(at + static_cast<std::size_t>(frame));
        if (!in.read(chunk.data() + at + sizeof header, h.payload_bytes))
          throw IoError(path.string() + ": cannot resume: read failed at byte " + std::to_string(pos));
        pos += frame;
        ++in_chunk;
      }
      // count_frames checks the CRCs: a damaged prefix is refused, not carried on.
      records::count_frames(chunk);
      writer.write_frames(chunk, in_chunk);
      copied += in_chunk;
    }
    if (copied != n_records)
      throw DataError(path.string() + ": cannot resume: the first " + std::to_string(bytes) +
                      " bytes hold " + std::to_string(copied) + " records, the checkpoint says " +
                      std::to_string(n_records));
    writer.flush();
    fsync_file(tmp);
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      throw IoError(io_message(path, "cannot rename " + tmp.filename().string() + " over it", errno));
  } catch (...) {
    // The original file is untouched; the partial copy goes.
    try {
      writer.close();
    } catch (const Error&) {
    }
    ::unlink(tmp.c_str());
    throw;
  }
  records::detail::fsync_parent_directory(path);
  return writer;
}

}  // namespace pemc::runner
