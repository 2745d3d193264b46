#include "runner/checkpoint.hpp"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/message_differencer.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/created_files.hpp"
#include "core/error.hpp"
#include "records/frame.hpp"
#include "records/no_follow.hpp"
#include "records/posix_io.hpp"

namespace pemc::runner {

// Messages name the file and the errno (records/posix_io.hpp), like the record files' errors.
using records::detail::io_message;

std::filesystem::path checkpoint_path(const v1::RunConfig& plan) {
  return config::checkpoint_file(plan);
}

namespace {

void store_le(std::uint64_t v, int n, char* p) {
  for (int i = 0; i < n; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint64_t load_le(const char* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// Largest content protobuf parses in one message.
constexpr std::uint64_t kMaxContentBytes =
    static_cast<std::uint64_t>(std::numeric_limits<int>::max());

}  // namespace

v1::RunConfig hashed_plan(const v1::RunConfig& plan) {
  v1::RunConfig copy = plan;
  copy.clear_checkpoint();
  copy.clear_logging();
  copy.mutable_output()->clear_path();
  copy.mutable_output()->clear_direct_writes();  // who writes the bytes, not which
  for (auto& r : *copy.mutable_runs()) {
    r.clear_checkpoint();
    r.clear_logging();
    r.mutable_output()->clear_path();
    r.mutable_output()->clear_direct_writes();
  }
  return copy;
}

std::uint64_t config_hash(const v1::RunConfig& plan) {
  const v1::RunConfig copy = hashed_plan(plan);
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

std::vector<std::string> describe_plan_differences(const v1::RunConfig& checkpointed,
                                                   const v1::RunConfig& now,
                                                   std::size_t max_lines) {
  std::string report;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&report);
  // proto3 scalars: a field at its default and an unset one are the same config.
  d.set_message_field_comparison(google::protobuf::util::MessageDifferencer::EQUIVALENT);
  std::vector<std::string> lines;
  if (d.Compare(checkpointed, now)) return lines;
  std::istringstream in(report);
  std::string line;
  std::size_t total = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    // The differencer's "modified: a.b: X -> Y", "added: a.b: Y", "deleted: a.b: X".
    std::string out = line;
    if (line.rfind("modified: ", 0) == 0) {
      const auto body = line.substr(10);
      const auto colon = body.find(": ");
      const auto arrow = body.rfind(" -> ");
      if (colon != std::string::npos && arrow != std::string::npos && arrow > colon)
        out = body.substr(0, colon) + ": checkpoint " + body.substr(colon + 2, arrow - colon - 2) +
              ", now " + body.substr(arrow + 4);
    } else if (line.rfind("added: ", 0) == 0) {
      out = line.substr(7) + " (not in the checkpoint's config)";
    } else if (line.rfind("deleted: ", 0) == 0) {
      out = line.substr(9) + " (in the checkpoint's config, not in this one)";
    }
    if (++total <= max_lines) lines.push_back(out);
  }
  if (total > max_lines) lines.push_back("... and " + std::to_string(total - max_lines) + " more");
  if (lines.empty()) lines.push_back("(the configs differ, but no field difference was found)");
  return lines;
}

std::string encode_checkpoint(const v1::Checkpoint& checkpoint) {
  std::string content;
  if (checkpoint.ByteSizeLong() > kMaxContentBytes || !checkpoint.SerializeToString(&content))
    throw IoError("cannot serialise the checkpoint (" + std::to_string(checkpoint.ByteSizeLong()) +
                  " bytes; protobuf's limit is 2 GiB)");
  return checkpoint_file_bytes(content);
}

std::string checkpoint_file_bytes(std::string_view content) {
  std::string bytes(kCheckpointHeaderBytes, '\0');
  std::copy(kCheckpointMagic.begin(), kCheckpointMagic.end(), bytes.begin());
  store_le(kCheckpointFormatVersion, 4, bytes.data() + 8);
  store_le(records::payload_crc32(content), 4, bytes.data() + 12);
  store_le(content.size(), 8, bytes.data() + 16);
  bytes += content;
  return bytes;
}

namespace {

// The header's checks; returns the content length it announces.
std::uint64_t check_header(std::string_view header, std::uint64_t file_bytes,
                           const std::string& name) {
  if (file_bytes == 0) throw DataError(name + ": empty file, not a pemc checkpoint");
  if (header.size() < kCheckpointMagic.size() ||
      header.substr(0, kCheckpointMagic.size()) != kCheckpointMagic)
    throw DataError(name + ": not a pemc checkpoint (bad magic: expected \"" +
                    std::string(kCheckpointMagic) +
                    "\"; checkpoints of pemc-dist before format 2 have none and cannot be resumed: "
                    "start over with --overwrite)");
  if (header.size() < kCheckpointHeaderBytes)
    throw DataError(name + ": damaged checkpoint: the file ends inside its " +
                    std::to_string(kCheckpointHeaderBytes) + "-byte header (" +
                    std::to_string(file_bytes) + " bytes)");
  const auto version = static_cast<std::uint32_t>(load_le(header.data() + 8, 4));
  if (version != kCheckpointFormatVersion)
    throw DataError(name + ": checkpoint format version " + std::to_string(version) +
                    ", this pemc-dist reads " + std::to_string(kCheckpointFormatVersion) +
                    " (a damaged header, or a checkpoint of another pemc version: start over with "
                    "--overwrite)");
  const std::uint64_t length = load_le(header.data() + 16, 8);
  const std::uint64_t follow = file_bytes - kCheckpointHeaderBytes;
  if (length != follow)
    throw DataError(name + ": damaged checkpoint: the header says " + std::to_string(length) +
                    " bytes of content but " + std::to_string(follow) + " follow" +
                    (length > follow ? " (a truncated file, or a damaged header)" : ""));
  if (length > kMaxContentBytes)
    throw DataError(name + ": damaged checkpoint: " + std::to_string(length) +
                    " bytes of content, more than a checkpoint can hold (2 GiB)");
  return length;
}

}  // namespace

v1::Checkpoint decode_checkpoint(std::string_view bytes, const std::string& name) {
  const std::uint64_t length =
      check_header(bytes.substr(0, kCheckpointHeaderBytes), bytes.size(), name);
  const std::string_view content = bytes.substr(kCheckpointHeaderBytes, length);
  const auto stored = static_cast<std::uint32_t>(load_le(bytes.data() + 12, 4));
  const std::uint32_t computed = records::payload_crc32(content);
  if (stored != computed)
    throw DataError(name + ": damaged checkpoint: checksum mismatch (stored " + hex32(stored) +
                    ", computed " + hex32(computed) + " over " + std::to_string(length) +
                    " bytes of content)");
  v1::Checkpoint c;
  if (!c.ParseFromArray(content.data(), static_cast<int>(content.size())))
    throw DataError(name +
                    ": damaged checkpoint: the content does not parse (checksum correct: written "
                    "by a faulty program?)");
  if (c.format_version() != kCheckpointFormatVersion)
    throw DataError(name + ": inconsistent checkpoint: content of format version " +
                    std::to_string(c.format_version()) + " in a version " +
                    std::to_string(kCheckpointFormatVersion) + " file");
  check_checkpoint_content(c, name);
  return c;
}

void check_checkpoint_content(const v1::Checkpoint& c, const std::string& name) {
  const auto bad = [&](const std::string& what) {
    throw DataError(name + ": inconsistent checkpoint: " + what);
  };
  const auto magic = static_cast<std::int64_t>(records::kMagic.size());
  if (c.record_bytes() < magic)
    bad("record_bytes " + std::to_string(c.record_bytes()) +
        " is less than the record file's magic");
  if (c.n_records() < 0 ||
      c.n_records() >
          (c.record_bytes() - magic) / static_cast<std::int64_t>(records::kFrameHeaderBytes))
    bad(std::to_string(c.n_records()) + " records cannot fit in " +
        std::to_string(c.record_bytes()) + " bytes");
  if (c.task_begin() < 0 || c.task_end() < c.task_begin())
    bad("task range " + std::to_string(c.task_begin()) + ".." + std::to_string(c.task_end()));
  if (c.group_size() < 1 || c.n_ranks() < 1)
    bad("group size " + std::to_string(c.group_size()) + ", ranks " + std::to_string(c.n_ranks()));
  if (c.sequence() < 1) bad("sequence " + std::to_string(c.sequence()));
  if (!std::isfinite(c.wall_seconds()) || c.wall_seconds() < 0)
    bad("wall_seconds " + std::to_string(c.wall_seconds()));
  std::set<int> ids;
  const auto check_id = [&](int id, const char* what) {
    if (id < c.task_begin() || id >= c.task_end())
      bad(std::string(what) + " chain " + std::to_string(id) + " outside the task range " +
          std::to_string(c.task_begin()) + ".." + std::to_string(c.task_end() - 1));
    if (!ids.insert(id).second) bad("chain " + std::to_string(id) + " appears twice");
  };
  for (const auto& s : c.completed()) check_id(s.chain_id(), "finished");
  for (const auto& k : c.in_progress()) {
    check_id(k.chain_id(), "running");
    const std::string chain = "chain " + std::to_string(k.chain_id());
    if (k.next_iteration() < 0)
      bad(chain + ": next_iteration " + std::to_string(k.next_iteration()));
    if (k.x_size() == 0 || k.x_size() != k.grad_size())
      bad(chain + ": state of " + std::to_string(k.x_size()) + " coordinates with a gradient of " +
          std::to_string(k.grad_size()));
    if (k.group_size() < 1) bad(chain + ": group size " + std::to_string(k.group_size()));
    if (k.kernel().kind().empty()) bad(chain + ": no kernel state");
    for (const auto v :
         {k.n_divergent(), k.n_nonfinite(), k.n_written(), k.warmup_evals(), k.grad_evals()})
      if (v < 0) bad(chain + ": a negative count");
    if (!std::isfinite(k.sum_accept()) || !std::isfinite(k.wall_seconds()))
      bad(chain + ": non-finite totals");
    for (const double v : k.x())
      if (!std::isfinite(v)) bad(chain + ": non-finite state");
    for (const auto& m : k.model_messages())
      if (m.count() < 1 || !v1::ModelMessage::Kind_IsValid(m.kind()) ||
          m.kind() == v1::ModelMessage::KIND_UNSPECIFIED)
        bad(chain + ": a model message with count " + std::to_string(m.count()));
  }
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
  const std::filesystem::path tmp = path.string() + std::string(config::kTemporarySuffix);
  std::string bytes;
  try {
    bytes = encode_checkpoint(checkpoint);
  } catch (const Error& e) {
    throw IoError(path.string() + ": " + e.what());
  }
  // Created afresh, never through a link planted at the temporary name (records/no_follow.hpp).
  const int fd = records::create_fresh_file(tmp, 0644, "checkpoint file");
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
  // O_NONBLOCK: a FIFO at the checkpoint's name must not block the open (it is refused below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw IoError(io_message(path, "cannot open checkpoint", errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw IoError(io_message(path, "cannot stat checkpoint", errno));
  if (!S_ISREG(st.st_mode))
    throw DataError(path.string() + ": not a regular file, not a pemc checkpoint");
  (void)::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  // The header first: its length must match the file's before the content is read.
  std::string bytes(static_cast<std::size_t>(std::min<std::uint64_t>(size, kCheckpointHeaderBytes)),
                    '\0');
  bytes.resize(records::detail::read_some(fd, bytes.data(), bytes.size(), path));
  check_header(bytes, size, path.string());
  bytes.resize(static_cast<std::size_t>(size));
  const std::size_t got = kCheckpointHeaderBytes +
                          records::detail::read_some(fd, bytes.data() + kCheckpointHeaderBytes,
                                                     bytes.size() - kCheckpointHeaderBytes, path);
  if (got != bytes.size())
    throw DataError(path.string() + ": damaged checkpoint: the file shrank while being read");
  return decode_checkpoint(bytes, path.string());
}

void check_record_prefix(const std::filesystem::path& path, std::int64_t bytes,
                         std::uint32_t crc32) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw IoError(path.string() + ": cannot resume: " + ec.message());
  if (static_cast<std::int64_t>(size) < bytes)
    throw DataError(path.string() + ": cannot resume: the checkpoint covers " +
                    std::to_string(bytes) + " bytes of records but the file has " +
                    std::to_string(size));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(io_message(path, "cannot open to resume", errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  std::string chunk(std::size_t{4} << 20, '\0');
  uLong crc = ::crc32(0L, Z_NULL, 0);
  std::int64_t left = bytes;
  while (left > 0) {
    const auto want = static_cast<std::size_t>(
        std::min<std::int64_t>(left, static_cast<std::int64_t>(chunk.size())));
    const std::size_t n = records::detail::read_some(fd, chunk.data(), want, path);
    if (n == 0)
      throw DataError(path.string() + ": cannot resume: the file shrank while being read");
    crc = ::crc32(crc, reinterpret_cast<const Bytef*>(chunk.data()), static_cast<uInt>(n));
    left -= static_cast<std::int64_t>(n);
  }
  if (static_cast<std::uint32_t>(crc) != crc32)
    throw DataError(path.string() + ": cannot resume: its first " + std::to_string(bytes) +
                    " bytes are not the records the checkpoint covers (crc32 " +
                    hex32(static_cast<std::uint32_t>(crc)) + ", the checkpoint says " +
                    hex32(crc32) + "): another record file, or a damaged one");
}

records::RecordWriter reopen_record_file(const std::filesystem::path& path, std::int64_t bytes,
                                         std::int64_t n_records,
                                         std::optional<std::uint32_t> crc32,
                                         const RecordDropFilter& drop) {
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

  // A copy made afresh: a stale copy or a link at its name is removed, never written through.
  const std::filesystem::path tmp = path.string() + std::string(config::kResumeCopySuffix);
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT)
    throw IoError(io_message(tmp, "cannot remove the old copy", errno));
  records::RecordWriter writer(tmp, records::RecordWriter::Options{/*overwrite=*/false});
  try {
    // Copy whole frames in chunks of about 8 MiB (write_frames takes whole frames only). `read_crc`
    // is the crc32 of the file as it was (the copy's differs when records are dropped).
    std::int64_t pos = magic, copied = 0;
    std::uint32_t read_crc = static_cast<std::uint32_t>(
        ::crc32(0L, reinterpret_cast<const Bytef*>(head.data()), static_cast<uInt>(head.size())));
    v1::Record record;
    std::string chunk;
    char header[records::kFrameHeaderBytes];
    while (pos < bytes) {
      chunk.clear();
      std::int64_t in_chunk = 0, kept_in_chunk = 0;
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
        // A damaged prefix is refused, not carried on.
        if (records::payload_crc32(
                std::string_view(chunk).substr(at + sizeof header, h.payload_bytes)) != h.crc32)
          throw DataError(path.string() +
                          ": cannot resume: the records the checkpoint covers are damaged: "
                          "record " +
                          std::to_string(copied + in_chunk) + " at byte " + std::to_string(pos) +
                          ": checksum mismatch (pemc-report verify shows the damage)");
        pos += frame;
        ++in_chunk;
        read_crc = static_cast<std::uint32_t>(
            ::crc32(read_crc, reinterpret_cast<const Bytef*>(chunk.data() + at),
                    static_cast<uInt>(frame)));
        if (drop) {
          if (!record.ParseFromArray(chunk.data() + at + sizeof header, h.payload_bytes))
            throw DataError(path.string() + ": cannot resume: record " +
                            std::to_string(copied + in_chunk - 1) + " at byte " +
                            std::to_string(pos - frame) + " does not parse");
          if (drop(record)) chunk.resize(at);
          else ++kept_in_chunk;
        }
      }
      writer.write_frames(chunk, drop ? kept_in_chunk : in_chunk);
      copied += in_chunk;
    }
    if (copied != n_records)
      throw DataError(path.string() + ": cannot resume: the first " + std::to_string(bytes) +
                      " bytes hold " + std::to_string(copied) + " records, the checkpoint says " +
                      std::to_string(n_records));
    if (crc32 && read_crc != *crc32)
      throw DataError(path.string() + ": cannot resume: its first " + std::to_string(bytes) +
                      " bytes are not the records the checkpoint covers (crc32 " +
                      hex32(read_crc) + ", the checkpoint says " + hex32(*crc32) +
                      "): another record file, or a damaged one");
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
