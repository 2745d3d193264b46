#include "parallel/idle_wait.hpp"

#include <algorithm>
#include <string>
#include <thread>

#include "core/error.hpp"

namespace pemc::parallel {

void IdleBackoff::sleep() {
  std::this_thread::sleep_for(next_);
  next_ = std::min(next_ * 2, longest_);
}

void wait_idle(MPI_Request& request) {
  IdleBackoff backoff;
  for (;;) {
    int done = 0;
    if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      throw IoError("MPI_Test failed while waiting for a message");
    if (done) return;
    backoff.sleep();
  }
}

void broadcast_idle(const boost::mpi::communicator& comm, int& value, int root) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (MPI_Ibcast(&value, 1, MPI_INT, root, static_cast<MPI_Comm>(comm), &request) != MPI_SUCCESS)
    throw IoError("MPI_Ibcast from rank " + std::to_string(root) + " failed");
  wait_idle(request);
}

}  // namespace pemc::parallel
