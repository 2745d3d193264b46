#pragma once
// Which rank plays which role, and which worker runs which chain.
//
//   n = 1      rank 0: coordinator + collector + worker
//   n = 2, 3   rank 0: coordinator + collector + worker; the others: workers
//   n >= 4     rank 0: coordinator + worker; ranks 1..n-2: workers; rank n-1: dedicated collector
//
// The coordinator's work for independent chains is light (progress, summaries), so rank 0 also
// samples; writing is I/O bound and gets its own rank once there are enough ranks.
// Samplers whose chain spans several ranks (pseudo-sample blocks, PT replicas) run each chain on a
// group of `ranks_per_chain` consecutive workers; workers left over when the count does not divide
// stay idle. With fewer workers than ranks_per_chain the group shrinks to all workers (a chain's
// draws do not depend on its group size).
// Chains are dealt round-robin over groups by global chain id; a chain's draws never depend on
// this assignment (random streams are keyed by global chain id), only the wall time does.
#include <vector>

namespace pemc::parallel {

struct Layout {
  int n_ranks = 1;
  int coordinator = 0;
  int collector = 0;
  std::vector<int> workers;
  std::vector<std::vector<int>> groups;  // each a list of worker ranks; groups[g][0] leads

  bool is_worker(int rank) const;
  // The group `rank` belongs to, or -1 (not a worker, or a left-over idle worker).
  int group_of(int rank) const;
  bool is_group_leader(int rank) const;
  // Global chain ids run by `rank`'s group, ascending (empty for idle ranks).
  std::vector<int> chains_of(int rank, int n_chains) const;
  int group_of_chain(int chain_id) const { return chain_id % static_cast<int>(groups.size()); }
  // The rank that leads chain_id's group (with ranks_per_chain = 1: the worker that runs it).
  int worker_of_chain(int chain_id) const {
    return groups[static_cast<std::size_t>(group_of_chain(chain_id))].front();
  }
};

Layout make_layout(int n_ranks, int ranks_per_chain = 1);

}  // namespace pemc::parallel
