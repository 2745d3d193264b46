#pragma once
// Waiting without spinning. Open MPI's blocking calls poll the network at full speed: a rank with
// nothing left to do (a worker whose chains are done, waiting for the collector to end the run)
// burnt a whole core. These waits test a request and sleep between tests, backing off from
// kFirstSleep to kLongestSleep, so an idle rank costs a few wake-ups per second and answers within
// kLongestSleep of the message.
#include <chrono>

#include <boost/mpi/communicator.hpp>
#include <mpi.h>

namespace pemc::parallel {

constexpr std::chrono::microseconds kFirstSleep{50};
constexpr std::chrono::microseconds kLongestSleep{5000};

// The sleeps of successive idle polls: doubling from kFirstSleep up to `longest`; reset() when
// there was work.
class IdleBackoff {
 public:
  explicit IdleBackoff(std::chrono::microseconds longest = kLongestSleep) : longest_(longest) {}
  void sleep();
  void reset() { next_ = kFirstSleep; }
  std::chrono::microseconds next() const { return next_; }

 private:
  std::chrono::microseconds longest_;
  std::chrono::microseconds next_ = kFirstSleep;
};

// Completes `request`, sleeping (IdleBackoff) between tests.
void wait_idle(MPI_Request& request);

// MPI_Bcast of one int from `root`, waited for with wait_idle.
void broadcast_idle(const boost::mpi::communicator& comm, int& value, int root);

}  // namespace pemc::parallel
