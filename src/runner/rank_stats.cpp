#include "runner/rank_stats.hpp"

#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <type_traits>

#include "parallel/messenger.hpp"
#include "runner/rank_messages.hpp"

namespace pemc::runner {
namespace {

// Every field in one order, for encode() and decode().
template <class Stats, class F>
void visit(Stats& s, F&& f) {
  f(s.roles);
  for (auto* r : {&s.coordinator, &s.collector, &s.worker}) {
    f(r->messages);
    f(r->bytes);
    f(r->cpu_seconds);
  }
  f(s.max_drain);
  f(s.task_waits);
  f(s.task_wait_seconds);
  f(s.sends);
  f(s.sum_in_flight);
  f(s.max_in_flight);
  f(s.window_waits);
  f(s.max_inbox);
  f(s.window_wait_seconds);
  f(s.group_calls);
  f(s.group_seconds);
  f(s.records);
  f(s.record_bytes);
  f(s.cpu_seconds);
  f(s.direct_batches);
  f(s.direct_bytes);
  f(s.direct_cpu_seconds);
}

}  // namespace

RankStats::Role& RankStats::role_of(int tag) {
  switch (tag) {
    case parallel::kTagRecords:
    case parallel::kTagDone:
    case kTagCkptPart:
    case kTagRecordRange:
    case kTagRecordFill:
      return collector;
    case parallel::kTagTaskAssign:
    case kTagCkptBegin:
    case kTagRoundBroadcast:
    case kTagRecordOffset:
      return worker;
    default:  // task requests, progress, stop requests, checkpoint written, round reports
      return coordinator;
  }
}

void RankStats::count(int tag, std::size_t n_bytes, double cpu) {
  Role& r = role_of(tag);
  ++r.messages;
  r.bytes += static_cast<std::int64_t>(n_bytes);
  r.cpu_seconds += cpu;
}

std::vector<double> RankStats::encode() const {
  std::vector<double> v;
  visit(*this, [&](const auto& x) { v.push_back(static_cast<double>(x)); });
  return v;
}

RankStats RankStats::decode(const std::vector<double>& values) {
  RankStats s;
  std::size_t i = 0;
  visit(s, [&](auto& x) {
    x = static_cast<std::remove_reference_t<decltype(x)>>(i < values.size() ? values[i] : 0.0);
    ++i;
  });
  return s;
}

std::string RankStats::line(int rank) const {
  std::string r;
  if (roles & kCoordinator) r += "C";
  if (roles & kCollector) r += "L";
  if (roles & kWorker) r += "W";
  if (r.empty()) r = "-";
  return fmt::format(
      "rank stats: rank={} roles={} cpu_s={:.4f} coord_msgs={} coord_bytes={} coord_cpu_s={:.6f} "
      "coll_msgs={} coll_bytes={} coll_cpu_s={:.6f} worker_msgs={} worker_cpu_s={:.6f} "
      "records={} record_bytes={} max_drain={} task_waits={} task_wait_s={:.6f} sends={} "
      "mean_in_flight={:.3f} max_in_flight={} window_waits={} window_wait_s={:.6f} max_inbox={} "
      "group_calls={} group_wait_s={:.6f} direct_batches={} direct_bytes={} direct_cpu_s={:.6f}",
      rank, r, cpu_seconds, coordinator.messages, coordinator.bytes, coordinator.cpu_seconds,
      collector.messages, collector.bytes, collector.cpu_seconds, worker.messages,
      worker.cpu_seconds, records, record_bytes, max_drain, task_waits, task_wait_seconds, sends,
      sends ? static_cast<double>(sum_in_flight) / static_cast<double>(sends) : 0.0,
      max_in_flight, window_waits, window_wait_seconds, max_inbox, group_calls, group_seconds,
      direct_batches, direct_bytes, direct_cpu_seconds);
}

double process_cpu_seconds() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0.0;
  const auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * t.tv_usec; };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

void log_rank_stats(const boost::mpi::communicator& world, const RankStats& mine) {
  const std::vector<double> v = mine.encode();
  const std::size_t n = v.size();  // the same on every rank
  std::vector<double> all(world.rank() == 0 ? n * static_cast<std::size_t>(world.size()) : 0);
  MPI_Gather(v.data(), static_cast<int>(n), MPI_DOUBLE, all.data(), static_cast<int>(n),
             MPI_DOUBLE, 0, static_cast<MPI_Comm>(world));
  if (world.rank() != 0) return;
  for (int r = 0; r < world.size(); ++r) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(r));
    spdlog::debug("{}", RankStats::decode(std::vector<double>(first, first + static_cast<std::ptrdiff_t>(n))).line(r));
  }
}

}  // namespace pemc::runner
