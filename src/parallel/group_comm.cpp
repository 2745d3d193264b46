#include "parallel/group_comm.hpp"

#include <algorithm>
#include <stdexcept>

namespace pemc::parallel {

GroupComm::Block GroupComm::block_of(int member, int n_items) const {
  const int k = size();
  const int base = n_items / k, extra = n_items % k;
  Block b;
  b.begin = member * base + std::min(member, extra);
  b.end = b.begin + base + (member < extra ? 1 : 0);
  return b;
}

void SerialGroup::allgather_blocks(std::span<const double> mine, int n_items, int values_per_item,
                                   std::span<double> all) const {
  const std::size_t n = static_cast<std::size_t>(n_items) * static_cast<std::size_t>(values_per_item);
  if (mine.size() != n || all.size() != n)
    throw std::invalid_argument("SerialGroup::allgather_blocks: buffer sizes do not match");
  std::copy(mine.begin(), mine.end(), all.begin());
}

}  // namespace pemc::parallel
