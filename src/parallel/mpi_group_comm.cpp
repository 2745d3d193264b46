#include "parallel/mpi_group_comm.hpp"

#include <mpi.h>

#include <chrono>
#include <stdexcept>

namespace pemc::parallel {
namespace {

// Adds a collective's wall time to `stats` (two clock reads; a collective costs microseconds).
class Timed {
 public:
  explicit Timed(MpiGroupComm::Stats& stats)
      : stats_(stats), t0_(std::chrono::steady_clock::now()) {}
  ~Timed() {
    ++stats_.calls;
    stats_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  MpiGroupComm::Stats& stats_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace

void MpiGroupComm::allgather_blocks(std::span<const double> mine, int n_items, int values_per_item,
                                    std::span<double> all) const {
  const int k = size();
  counts_.resize(static_cast<std::size_t>(k));
  displs_.resize(static_cast<std::size_t>(k));
  for (int m = 0; m < k; ++m) {
    const Block b = block_of(m, n_items);
    counts_[m] = (b.end - b.begin) * values_per_item;
    displs_[m] = b.begin * values_per_item;
  }
  if (static_cast<int>(mine.size()) != counts_[rank()] ||
      all.size() != static_cast<std::size_t>(n_items) * values_per_item)
    throw std::invalid_argument("MpiGroupComm::allgather_blocks: buffer sizes do not match");
  // Blocks land at fixed displacements: the assembled array is the same on every member.
  const Timed timed(stats_);
  MPI_Allgatherv(mine.data(), counts_[rank()], MPI_DOUBLE, all.data(), counts_.data(),
                 displs_.data(), MPI_DOUBLE, static_cast<MPI_Comm>(comm_));
}

void MpiGroupComm::broadcast(std::span<double> values, int root) const {
  const Timed timed(stats_);
  MPI_Bcast(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, root,
            static_cast<MPI_Comm>(comm_));
}

}  // namespace pemc::parallel
