#pragma once
// The pseudo-sample blocks of one pseudo-extended chain over the members of a GroupComm (issue 4,
// "Distribution"): item i = pseudo-sample i = (x_i, eta_i), member r owns the contiguous items
// GroupComm::my_block(N). The hmc::Partition the Hamiltonian reduces over (kinetic energy, U-turn
// dot products) and the chain driver gathers the state with; the pseudo-extended target
// exchanges its per-item terms through gather_items.
//
// Every reduction gathers the per-item values in item order and sums them in item order on every
// member (with one member: the same sums, no copy), so results do not depend on the group size.
#include <span>
#include <vector>

#include "hmc/partition.hpp"
#include "parallel/group_comm.hpp"

namespace pemc::extended {

class PseudoSampleBlocks final : public hmc::Partition {
 public:
  // group = nullptr: this rank alone.
  PseudoSampleBlocks(Layout layout, parallel::GroupCommPtr group);

  void gather(VectorRef v) const override;

  // Collective: m values per local item (item-major) -> all n m values in item order on every
  // member. With one member `local` is `all` (the same storage) and nothing is copied.
  void gather_items(std::span<const double> local, int m, std::span<double> all) const;
  const parallel::GroupComm& group() const { return *group_; }

 protected:
  const double* allgather_items(std::span<const double> local, int m) const override;

 private:
  PseudoSampleBlocks(Layout layout, parallel::GroupCommPtr group, parallel::GroupComm::Block b);

  parallel::GroupCommPtr group_;
  mutable std::vector<double> all_;    // allgather_items
  mutable std::vector<double> state_;  // gather: packed items (x_i, eta_i), local then all
};

}  // namespace pemc::extended
