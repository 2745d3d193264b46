#pragma once
// Exact moments of a Boltzmann machine P(s) ∝ exp(0.5 s'Ws + s'b), s in {-1,+1}^{d_b}, by summing
// over all 2^{d_b} states (pseudo-extended supplement eq. (10); CT paper eq. (44)).
#include "core/types.hpp"

namespace pemc::targets {

struct BoltzmannTruth {
  double log_z_b = 0.0;     // log sum_s exp(0.5 s'Ws + s'b), W's diagonal included (a constant)
  Vector mean_s;            // E[s]
  Matrix second_moment_s;   // E[ss'] (unit diagonal)
};

struct EnumerationOptions {
  // Worker threads; 0 = std::thread::hardware_concurrency(). The result is bitwise identical for
  // every thread count: the work is cut into a fixed set of chunks merged in chunk order.
  int n_threads = 1;
};

// Largest d_b accepted (2^40 states is about a day of one core).
inline constexpr int kMaxEnumerationUnits = 40;

// Sums over all states. Cost: about 2^{d_b} exponentials plus a few additions per state, i.e. E[ss']
// does not cost d_b^2 per state (d_b = 28: ~1.5 s, d_b = 30: ~4.5 s on one core). Method:
// s = (s_lo, s_hi) with k = min(d_b, 12) low units. For each s_hi (visited in Gray-code order, so
// the high energy and the field on the low units are updated in O(d_b) per step) the 2^k low
// energies are base(s_lo) + f's_lo + c(s_hi), with the low units split again in two halves so that
// f's_lo is two table look-ups. From the weights w(s_hi, s_lo):
//   * the block total Z(s_hi) and the block's row/column sums give sum_lo w s_lo in O(2^{k/2} k);
//   * sum_{s_hi} w(s_hi, s_lo) is accumulated per low state, and the low-low block of E[ss'] is
//     formed once at the end from these 2^k totals;
//   * the high-high and high-low blocks of E[ss'] are rank-one updates per s_hi (cost d_b^2 / 2^k
//     per state).
// Stability: weights are exp(energy - shift), with a per-chunk shift raised (and the accumulators
// rescaled) whenever a block's maximum energy exceeds it by more than 64 nats; chunks are merged
// with the log-sum-exp rule. Throws NumericalError on bad shapes/values or d_b > kMaxEnumerationUnits.
BoltzmannTruth enumerate_boltzmann(const Matrix& W, const Vector& b,
                                   const EnumerationOptions& options = {});

}  // namespace pemc::targets
