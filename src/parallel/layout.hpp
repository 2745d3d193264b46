#pragma once
// Which rank plays which role, and which worker runs which chain.
//
//   n = 1      rank 0: coordinator + collector + worker
//   n = 2, 3   rank 0: coordinator + collector + worker; the others: workers
//   n >= 4     rank 0: coordinator + worker; ranks 1..n-2: workers; rank n-1: dedicated collector
//
// The coordinator's work for independent chains is light (progress, summaries), so rank 0 also
// samples; writing is I/O bound and gets its own rank once there are enough ranks.
// Chains are dealt round-robin over workers by global chain id; a chain's draws never depend on
// this assignment (random streams are keyed by global chain id), only the wall time does.
#include <vector>

namespace pemc::parallel {

struct Layout {
  int n_ranks = 1;
  int coordinator = 0;
  int collector = 0;
  std::vector<int> workers;

  bool is_worker(int rank) const;
  // Global chain ids run by `rank`, ascending.
  std::vector<int> chains_of(int rank, int n_chains) const;
  int worker_of_chain(int chain_id) const;
};

Layout make_layout(int n_ranks);

}  // namespace pemc::parallel
