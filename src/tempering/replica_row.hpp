#pragma once
// One replica's row in parallel tempering's per-round allgather (parallel_tempering.hpp): every
// member of the group receives every replica's row and from them makes the same swap decisions and
// statistics. A row is, in this order on the wire:
//   the replica's round report (ReplicaRoundReport::kSize values, below);
//   during warmup only: the acceptance statistic of each of its n_local_steps local steps, then its
//   x (dim values), so that every member replays the same adaptation of every level's kernel and a
//   resized ladder can seed new replicas from any old one.

namespace pemc::tempering {

struct ReplicaRoundReport {
  double v = 0.0;               // V = phi - psi at the replica's state after its local steps
  double gradient_evals = 0.0;  // target evaluations its local steps cost
  double sum_accept = 0.0;      // its local steps' acceptance statistics, summed
  double leapfrogs = 0.0;       // leapfrog steps taken
  double divergent = 0.0;       // local steps that diverged
  double nonfinite = 0.0;       // local steps that met a non-finite potential or gradient
  double phi = 0.0;             // phi: V on the power path (stabilised PT's fixed leg)

  static constexpr int kSize = 7;  // values on the wire

  void write(double* row) const {
    row[0] = v;
    row[1] = gradient_evals;
    row[2] = sum_accept;
    row[3] = leapfrogs;
    row[4] = divergent;
    row[5] = nonfinite;
    row[6] = phi;
  }
  static ReplicaRoundReport read(const double* row) {
    return {row[0], row[1], row[2], row[3], row[4], row[5], row[6]};
  }
};

// Offsets within a row.
struct ReplicaRowLayout {
  int n_local_steps = 1;
  int dim = 0;
  bool warmup = false;

  int size() const { return ReplicaRoundReport::kSize + (warmup ? n_local_steps + dim : 0); }
  // Warmup only: local step s's acceptance statistic, and the replica's x.
  int accept_stat(int step) const { return ReplicaRoundReport::kSize + step; }
  int x() const { return ReplicaRoundReport::kSize + n_local_steps; }
};

}  // namespace pemc::tempering
