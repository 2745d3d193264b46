#pragma once
// Point-to-point byte messages over MPI: non-blocking sends with bounded in-flight buffers, and
// polling receives for the single-threaded event loop every rank runs.
//
// Back-pressure. Bulk data (record batches) is sent in synchronous mode (MPI_Issend): a send
// completes only once the receiver has matched it, so a sender with max_in_flight batches
// outstanding waits for the collector instead of piling batches into the collector's
// unexpected-message queue (with eager sends a fast sampler on a small target flooded the
// collector: memory grew without bound and, worse, the collector's loop never got to its control
// messages - a stop signal's checkpoint never started). Control messages use standard sends.
// While a sender waits for a free slot it keeps receiving, into an inbox that poll() hands out
// first, so two ranks that send to each other can never both block.
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include <boost/mpi/communicator.hpp>
#include <mpi.h>

namespace pemc::parallel {

enum Tag : int {
  kTagRecords = 11,   // worker -> collector: framed records
  kTagDone = 12,      // worker -> collector: serialized Footer with the worker's chain summaries
  kTagProgress = 13,  // worker -> coordinator: two int64 (iterations done, finished flag)
  kTagTaskRequest = 14,  // group leader -> coordinator: give me a task
  kTagTaskAssign = 15,   // coordinator -> group leader: one int (task index, -1 = none left)
};

struct Message {
  int source = -1;
  int tag = -1;
  std::string bytes;
};

enum class SendMode {
  kStandard,     // control messages: complete locally when small (eager)
  kSynchronous,  // bulk data: complete when the receiver matched them (flow control)
};

// What the sends of one rank met (for the end-of-run rank statistics, runner/rank_stats.hpp):
// the sends still unmatched at each send are the queue at the receivers; a send that found
// max_in_flight pending waited for a receiver (for record batches: the collector).
struct SendStats {
  std::int64_t sends = 0;
  std::int64_t sum_in_flight = 0;  // pending sends before each send, summed (mean = / sends)
  std::int64_t max_in_flight = 0;
  std::int64_t window_waits = 0;        // sends that waited for a free slot
  double window_wait_seconds = 0.0;     // wall time of those waits
  std::int64_t max_inbox = 0;           // messages received while waiting, held at once
};

class Messenger {
 public:
  explicit Messenger(boost::mpi::communicator comm, std::size_t max_in_flight = 16)
      : comm_(std::move(comm)), max_in_flight_(max_in_flight) {}
  ~Messenger();
  Messenger(const Messenger&) = delete;
  Messenger& operator=(const Messenger&) = delete;

  int rank() const { return comm_.rank(); }
  int size() const { return comm_.size(); }

  // Sends `bytes` without blocking unless max_in_flight sends are pending; then it waits for the
  // oldest, receiving meanwhile (see the header comment).
  void send(int dest, int tag, std::string bytes, SendMode mode = SendMode::kStandard);
  // A pending message, if any (non-blocking): the inbox first, then the network.
  std::optional<Message> poll();
  // Completes every pending send (receiving meanwhile).
  void wait_all();
  std::size_t in_flight() const { return in_flight_.size(); }
  const SendStats& stats() const { return stats_; }

 private:
  void reap();
  std::optional<Message> receive_one();
  // Waits for the oldest pending send; incoming messages go to the inbox meanwhile.
  void wait_oldest();

  struct Pending {
    MPI_Request request = MPI_REQUEST_NULL;
    std::string bytes;  // must outlive the send
  };
  boost::mpi::communicator comm_;
  std::size_t max_in_flight_;
  std::deque<Pending> in_flight_;
  std::deque<Message> inbox_;
  SendStats stats_;
};

}  // namespace pemc::parallel
