#include "runner/direct_writes.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <cstring>
#include <fstream>
#include <map>
#include <vector>

#include "core/error.hpp"

namespace pemc::runner {
namespace {

namespace mpi = boost::mpi;

// File systems whose clients on different hosts see each other's writes to one file at once
// (statfs's f_type; linux/magic.h has the first, the others are the projects' own).
constexpr long kLustreMagic = 0x0BD00BD0;
constexpr long kGpfsMagic = 0x47504653;
constexpr long kBeegfsMagic = 0x19830326;

std::string host_name() {
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  MPI_Get_processor_name(name, &length);
  return std::string(name, static_cast<std::size_t>(length));
}

// Which kernel this rank runs on (so which page cache it writes through): the boot id, which
// containers on one host share and different hosts never do, whatever their host names; the host
// name where there is none.
std::string kernel_identity() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (in && std::getline(in, id) && !id.empty()) return id;
  return "host " + host_name();
}

// "ranks 1, 2, 5" (at most 8 named).
std::string rank_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size() && i < 8; ++i)
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > 8) out += fmt::format(" and {} more", ranks.size() - 8);
  return out;
}

// statfs's f_type of `path`, or -1 when it cannot be queried.
long file_system_type(const std::string& path) {
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) != 0) return -1;
  return static_cast<long>(fs.f_type);
}

// What the collector tells every rank.
struct CollectorFile {
  records::FilePrefix prefix;
  bool usable = false;  // a regular file whose first bytes could be read
};

}  // namespace

std::string RecordRange::encode() const {
  std::string out(3 * sizeof(std::int64_t), '\0');
  const std::int64_t v[3] = {static_cast<std::int64_t>(bytes), records, crc32};
  std::memcpy(out.data(), v, sizeof v);
  return out;
}

RecordRange RecordRange::decode(const std::string& in) {
  std::int64_t v[3];
  if (in.size() != sizeof v)
    throw IoError("malformed record range message (" + std::to_string(in.size()) + " bytes)");
  std::memcpy(v, in.data(), sizeof v);
  if (v[0] <= 0 || v[1] <= 0 || v[2] < 0 || v[2] > 0xffffffffLL)
    throw IoError("malformed record range message (bytes " + std::to_string(v[0]) + ", records " +
                  std::to_string(v[1]) + ")");
  return {static_cast<std::uint64_t>(v[0]), v[1], static_cast<std::uint32_t>(v[2])};
}

std::string direct_write_refusal(bool enabled, bool regular_file, bool same_kernel,
                                 long fs_type, const std::string& host,
                                 const std::string& collector_host) {
  if (!enabled) return "output.direct_writes is false";
  if (!regular_file) return "the output is not a regular file";
  if (same_kernel || fs_type == kLustreMagic || fs_type == kGpfsMagic || fs_type == kBeegfsMagic)
    return "";
  const std::string why =
      fs_type < 0 ? std::string("its file system cannot be queried")
                  : fmt::format("its file system (type {:#x}) is not one known to take writes "
                                "from several hosts (Lustre, GPFS, BeeGFS)",
                                static_cast<unsigned long>(fs_type));
  return "on " + host + ", not the collector's host " + collector_host + ", and " + why;
}

std::string encode_offset(std::uint64_t offset) {
  std::string out(sizeof offset, '\0');
  std::memcpy(out.data(), &offset, sizeof offset);
  return out;
}

std::uint64_t decode_offset(const std::string& in) {
  std::uint64_t offset;
  if (in.size() != sizeof offset)
    throw IoError("malformed record offset message (" + std::to_string(in.size()) + " bytes)");
  std::memcpy(&offset, in.data(), sizeof offset);
  return offset;
}

std::string encode_fill(std::uint64_t offset, const std::string& frames) {
  return encode_offset(offset) + frames;
}

std::uint64_t decode_fill(const std::string& bytes, std::string_view& frames) {
  if (bytes.size() <= sizeof(std::uint64_t))
    throw IoError("malformed record fill message (" + std::to_string(bytes.size()) + " bytes)");
  frames = std::string_view(bytes).substr(sizeof(std::uint64_t));
  return decode_offset(bytes.substr(0, sizeof(std::uint64_t)));
}

std::unique_ptr<records::FrameRangeWriter> set_up_direct_writes(const mpi::communicator& world,
                                                                const parallel::Layout& layout,
                                                                bool enabled,
                                                                const std::string& output) {
  const int rank = world.rank();
  CollectorFile file;
  std::int64_t prefix[3] = {0, 0, 0};  // usable, bytes, crc32
  std::string collector_host, collector_kernel;
  if (rank == layout.collector) {
    collector_host = host_name();
    collector_kernel = kernel_identity();
    struct stat st {};
    if (enabled && ::stat(output.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      try {
        const auto p = records::read_file_prefix(output);
        prefix[0] = 1;
        prefix[1] = static_cast<std::int64_t>(p.bytes);
        prefix[2] = p.crc32;
      } catch (const Error& e) {
        spdlog::warn("direct writes are off: {}", e.what());
      }
    }
  }
  mpi::broadcast(world, prefix, 3, layout.collector);
  mpi::broadcast(world, collector_host, layout.collector);
  mpi::broadcast(world, collector_kernel, layout.collector);
  file.usable = prefix[0] != 0;
  file.prefix = {static_cast<std::uint64_t>(prefix[1]), static_cast<std::uint32_t>(prefix[2])};

  // Each group leader but the collector's own rank decides; "-" marks ranks that lead no group.
  std::unique_ptr<records::FrameRangeWriter> writer;
  std::string outcome = "-";
  if (layout.is_group_leader(rank) && rank != layout.collector) {
    const bool same_kernel = kernel_identity() == collector_kernel;
    std::string why = direct_write_refusal(enabled, file.usable, same_kernel,
                                           same_kernel ? 0 : file_system_type(output),
                                           host_name(), collector_host);
    if (why.empty()) writer = records::FrameRangeWriter::open(output, file.prefix, why);
    outcome = writer ? "" : why;
  }
  std::vector<std::string> outcomes;
  mpi::all_gather(world, outcome, outcomes);
  if (rank == 0) {
    int leaders = 0, direct = 0;
    std::map<std::string, std::vector<int>> by_reason;
    for (std::size_t r = 0; r < outcomes.size(); ++r) {
      if (outcomes[r] == "-") continue;
      ++leaders;
      if (outcomes[r].empty())
        ++direct;
      else
        by_reason[outcomes[r]].push_back(static_cast<int>(r));
    }
    std::string others;
    for (const auto& [reason, ranks] : by_reason)
      others += fmt::format("; {} send{} them to the collector: {}", rank_list(ranks),
                            ranks.size() == 1 ? "s" : "", reason);
    if (leaders > 0)
      spdlog::info("direct writes: {} of {} chain leaders (besides the collector's rank) write "
                   "their record batches into {} themselves{}",
                   direct, leaders, output, others);
  }
  return writer;
}

}  // namespace pemc::runner
