#pragma once
// GroupComm over a Boost.MPI (sub-)communicator: allgatherv into global item order.
#include <boost/mpi/communicator.hpp>

#include <cstdint>

#include "parallel/group_comm.hpp"

namespace pemc::parallel {

class MpiGroupComm final : public GroupComm {
 public:
  // The group's collectives so far and their wall time (waiting for the slowest member included):
  // what spreading a chain over ranks costs in exchanges (runner/rank_stats.hpp).
  struct Stats {
    std::int64_t calls = 0;
    double seconds = 0.0;
  };

  explicit MpiGroupComm(boost::mpi::communicator comm) : comm_(std::move(comm)) {}
  int size() const override { return comm_.size(); }
  int rank() const override { return comm_.rank(); }
  void allgather_blocks(std::span<const double> mine, int n_items, int values_per_item,
                        std::span<double> all) const override;
  void broadcast(std::span<double> values, int root) const override;
  const boost::mpi::communicator& communicator() const { return comm_; }
  const Stats& stats() const { return stats_; }

 private:
  boost::mpi::communicator comm_;
  mutable std::vector<int> counts_, displs_;
  mutable Stats stats_;
};

}  // namespace pemc::parallel
