#pragma once
// The ranks that run one chain together (pseudo-sample blocks of one PE chain, the replicas of one
// PT run). Every collective returns identical results on every member, assembled in global index
// order, so a chain's arithmetic — and hence its draws — does not depend on the group size.
#include <memory>
#include <span>
#include <vector>

namespace pemc::parallel {

class GroupComm {
 public:
  virtual ~GroupComm() = default;
  virtual int size() const = 0;
  virtual int rank() const = 0;  // 0 = the group's leader (writes the chain's records)

  // The contiguous block [begin, end) of n_items owned by `member` (balanced, lower ranks get the
  // remainder first). The same split on every member.
  struct Block {
    int begin = 0;
    int end = 0;
  };
  Block block_of(int member, int n_items) const;
  Block my_block(int n_items) const { return block_of(rank(), n_items); }

  // Every member contributes the values of its block of n_items items (values_per_item doubles
  // each, item-major); `all` receives all n_items * values_per_item values in item order.
  virtual void allgather_blocks(std::span<const double> mine, int n_items, int values_per_item,
                                std::span<double> all) const = 0;
  // Root's buffer is copied to every member.
  virtual void broadcast(std::span<double> values, int root) const = 0;
};

// A group of one: collectives are copies. Used for k = 1 and in unit tests.
class SerialGroup final : public GroupComm {
 public:
  int size() const override { return 1; }
  int rank() const override { return 0; }
  void allgather_blocks(std::span<const double> mine, int n_items, int values_per_item,
                        std::span<double> all) const override;
  void broadcast(std::span<double> values, int root) const override {}
};

using GroupCommPtr = std::shared_ptr<const GroupComm>;

}  // namespace pemc::parallel
