#pragma once
// Point-to-point byte messages over Boost.MPI: non-blocking sends with bounded in-flight buffers
// (back-pressure instead of unbounded memory), and polling receives for the single-threaded
// event loop every rank runs.
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/request.hpp>

#include <deque>
#include <optional>
#include <string>

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

class Messenger {
 public:
  explicit Messenger(boost::mpi::communicator comm, std::size_t max_in_flight = 16)
      : comm_(std::move(comm)), max_in_flight_(max_in_flight) {}
  ~Messenger();

  int rank() const { return comm_.rank(); }
  int size() const { return comm_.size(); }

  // Sends `bytes` without blocking unless max_in_flight sends are pending (then waits for the oldest).
  void send(int dest, int tag, std::string bytes);
  // A pending message, if any (non-blocking).
  std::optional<Message> poll();
  // Completes every pending send.
  void wait_all();

 private:
  void reap();

  struct Pending {
    boost::mpi::request request;
    std::string bytes;  // must outlive the send
  };
  boost::mpi::communicator comm_;
  std::size_t max_in_flight_;
  std::deque<Pending> in_flight_;
};

}  // namespace pemc::parallel
