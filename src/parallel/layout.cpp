#include "parallel/layout.hpp"

#include <algorithm>
#include <stdexcept>

namespace pemc::parallel {

Layout make_layout(int n_ranks, int ranks_per_chain) {
  if (n_ranks < 1) throw std::invalid_argument("make_layout: n_ranks must be >= 1");
  Layout l;
  l.n_ranks = n_ranks;
  l.coordinator = 0;
  if (n_ranks >= 4) {
    l.collector = n_ranks - 1;
    for (int r = 0; r < n_ranks - 1; ++r) l.workers.push_back(r);
  } else {
    l.collector = 0;
    for (int r = 0; r < n_ranks; ++r) l.workers.push_back(r);
  }
  const int k = std::clamp(ranks_per_chain, 1, static_cast<int>(l.workers.size()));
  for (std::size_t g = 0; (g + 1) * k <= l.workers.size(); ++g)
    l.groups.emplace_back(l.workers.begin() + static_cast<long>(g * k),
                          l.workers.begin() + static_cast<long>((g + 1) * k));
  return l;
}

int Layout::group_of(int rank) const {
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (std::find(groups[g].begin(), groups[g].end(), rank) != groups[g].end())
      return static_cast<int>(g);
  return -1;
}

bool Layout::is_group_leader(int rank) const {
  const int g = group_of(rank);
  return g >= 0 && groups[static_cast<std::size_t>(g)].front() == rank;
}

bool Layout::is_worker(int rank) const {
  return std::find(workers.begin(), workers.end(), rank) != workers.end();
}

std::vector<int> Layout::chains_of(int rank, int n_chains) const {
  std::vector<int> out;
  const int g = group_of(rank);
  if (g < 0) return out;
  for (int c = 0; c < n_chains; ++c)
    if (group_of_chain(c) == g) out.push_back(c);
  return out;
}

}  // namespace pemc::parallel
