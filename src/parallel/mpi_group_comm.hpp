#pragma once
// GroupComm over a Boost.MPI (sub-)communicator: allgatherv into global item order.
#include <boost/mpi/communicator.hpp>

#include "parallel/group_comm.hpp"

namespace pemc::parallel {

class MpiGroupComm final : public GroupComm {
 public:
  explicit MpiGroupComm(boost::mpi::communicator comm) : comm_(std::move(comm)) {}
  int size() const override { return comm_.size(); }
  int rank() const override { return comm_.rank(); }
  void allgather_blocks(std::span<const double> mine, int n_items, int values_per_item,
                        std::span<double> all) const override;
  void broadcast(std::span<double> values, int root) const override;
  const boost::mpi::communicator& communicator() const { return comm_; }

 private:
  boost::mpi::communicator comm_;
  mutable std::vector<int> counts_, displs_;
};

}  // namespace pemc::parallel
