#include "extended/pseudo_extended_blocks.hpp"

#include <memory>

namespace pemc::extended {
namespace {

parallel::GroupCommPtr or_serial(parallel::GroupCommPtr group) {
  return group ? std::move(group) : std::make_shared<parallel::SerialGroup>();
}

}  // namespace

PseudoSampleBlocks::PseudoSampleBlocks(Layout layout, parallel::GroupCommPtr group)
    : PseudoSampleBlocks(layout, or_serial(group),
                         or_serial(group)->my_block(layout.n_items)) {}

PseudoSampleBlocks::PseudoSampleBlocks(Layout layout, parallel::GroupCommPtr group,
                                       parallel::GroupComm::Block b)
    : hmc::Partition(layout, b.begin, b.end, group->size()), group_(std::move(group)) {
  all_.assign(2 * static_cast<std::size_t>(layout.n_items), 0.0);
}

void PseudoSampleBlocks::gather_items(std::span<const double> local, int m,
                                      std::span<double> all) const {
  if (group_->size() == 1) {
    if (local.data() != all.data()) std::copy(local.begin(), local.end(), all.begin());
    return;
  }
  group_->allgather_blocks(local, n_items(), m, all);
}

const double* PseudoSampleBlocks::allgather_items(std::span<const double> local, int m) const {
  const std::size_t n = static_cast<std::size_t>(n_items()) * static_cast<std::size_t>(m);
  if (all_.size() < n) all_.resize(n);
  group_->allgather_blocks(local, n_items(), m, std::span<double>(all_.data(), n));
  return all_.data();
}

void PseudoSampleBlocks::gather(VectorRef v) const {
  if (group_->size() == 1) return;
  const int n = n_items(), first = first_item(), end = end_item();
  const Eigen::Index b = block_dim(), stride = b + (has_tail() ? 1 : 0);
  const std::size_t n_all = static_cast<std::size_t>(n) * stride;
  const std::size_t n_mine = static_cast<std::size_t>(end - first) * stride;
  // Packed: [local items | all items], each item (x_i, eta_i).
  state_.resize(n_mine + n_all);
  for (int i = first; i < end; ++i) {
    double* item = state_.data() + static_cast<std::size_t>(i - first) * stride;
    Eigen::Map<Vector>(item, b) = v.segment(block_begin(i), b);
    if (has_tail()) item[b] = v[tail_index(i)];
  }
  double* all = state_.data() + n_mine;
  group_->allgather_blocks(std::span<const double>(state_.data(), n_mine), n,
                           static_cast<int>(stride), std::span<double>(all, n_all));
  for (int i = 0; i < n; ++i) {
    if (i >= first && i < end) continue;
    const double* item = all + static_cast<std::size_t>(i) * stride;
    v.segment(block_begin(i), b) = Eigen::Map<const Vector>(item, b);
    if (has_tail()) v[tail_index(i)] = item[b];
  }
}

}  // namespace pemc::extended
