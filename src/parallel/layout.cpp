#include "parallel/layout.hpp"

#include <algorithm>
#include <stdexcept>

namespace pemc::parallel {

Layout make_layout(int n_ranks) {
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
  return l;
}

bool Layout::is_worker(int rank) const {
  return std::find(workers.begin(), workers.end(), rank) != workers.end();
}

int Layout::worker_of_chain(int chain_id) const {
  return workers[static_cast<std::size_t>(chain_id) % workers.size()];
}

std::vector<int> Layout::chains_of(int rank, int n_chains) const {
  std::vector<int> out;
  for (int c = 0; c < n_chains; ++c)
    if (worker_of_chain(c) == rank) out.push_back(c);
  return out;
}

}  // namespace pemc::parallel
