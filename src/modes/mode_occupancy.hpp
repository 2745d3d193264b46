#pragma once
// Did the chains find every mode, in the right proportions? (issue 36, item 4)
//
// ModeAssigner puts a point in the mode whose Laplace approximation N(m_k, H_k^{-1}), weighted by
// the mode's Laplace share w_k, gives it the highest density (log w_k - 0.5 |R_k'(x - m_k)|^2 +
// sum log R_k,ii), or "outside" (index K) when it lies beyond the 1 - 1e-6 quantile of the
// chi-square(d) distance of every mode: a region the search found nothing in.
//
// ModeOccupancy accumulates, per half of a chain's post-warmup draws, the weight that fell in each
// mode (every sample a draw stands for, with its weight: pseudo-samples normalised within their
// draw, global weights — CT, ST, AIS — across the chain, plain draws 1 each) and the Kish
// effective size of the draws' weights.
//
// check_mode_occupancy judges a run from its chains' occupancies. The run's estimates (and log Z)
// cannot be trusted when
//  - unvisited: a mode the search found, with a Laplace share of at least 0.001 and an expected
//    count of at least 10 effective draws over the run, got no weight at all; or
//  - disagree: the chains' halves disagree on some mode's share: split R-hat of the mode's
//    indicator above 1.05 (the halves as chains, their Kish sizes as lengths), the rule
//    ../shared/multimodal/check_multimodal.py applies. With one chain this compares its halves.
// "outside" takes part in the R-hat check; its pooled share is reported.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "modes/mode_set.hpp"

namespace pemc::v1 {
class ModeOccupancy;
}

namespace pemc::modes {

// The score of every mode costs O(d^2), and a run assigns every draw (every pseudo-sample), so
// with hundreds of modes (a Boltzmann relaxation's search finds 535 in 16 dimensions) the check
// would cost more than the sampler. assign() therefore bounds each mode's score from its Euclidean
// distance, |R'(x - m)|^2 >= lambda_min(H) |x - m|^2, and scores exactly only the modes whose bound
// can beat the best so far, starting from the mode the previous point went to (a chain stays in a
// mode for many draws). The result is the brute-force argmax (lowest index among equal scores).
class ModeAssigner {
 public:
  // Uses the set's modes, in order; with none, every point is outside.
  explicit ModeAssigner(const ModeSet& set);
  int n_modes() const { return static_cast<int>(r_upper_.size()); }  // K; K itself = outside
  int assign(ConstVectorRef x) const;
  // Every mode scored exactly (the definition assign() must agree with; for tests).
  int assign_exhaustively(ConstVectorRef x) const;
  // The highest-scoring mode whether or not x is inside its region (never "outside"); 0 without
  // modes. Every mode scored exactly.
  int best_mode(ConstVectorRef x) const;

 private:
  struct Scored {
    int best = 0;             // the highest score's mode (lowest index among equal scores)
    bool inside_any = false;  // x within some mode's chi-square(d) 1 - 1e-6 distance
  };
  Scored score_every_mode(ConstVectorRef x) const;
  double distance2(int k, ConstVectorRef x) const;  // |R_k'(x - m_k)|^2

  std::vector<Matrix> r_upper_;   // per mode R' (upper triangular), H = R R'
  Matrix means_;                  // d x K, the modes' locations
  Vector mean_norms2_;            // K: |m_k|^2
  Vector log_weight_norms_;       // K: log w_k + sum log R_ii
  Vector half_min_curvature_;     // K: 0.5 lambda_min(H_k), shrunk so that it is a safe bound
  double outside_distance2_ = 0.0;  // chi-square(d) quantile 1 - 1e-6
  mutable Vector scratch_;
  mutable Vector euclid_scratch_;
  mutable Vector lower_scratch_;
  mutable Vector bound_scratch_;
  mutable int last_ = 0;          // where the previous point went: the first mode scored
};

class ModeOccupancy {
 public:
  // n_draws: the post-warmup draws the chain will write (the first n_draws / 2 are its first
  // half). weights_within_draw: normalise each draw's log weights among its samples
  // (pseudo-extended) rather than across the chain.
  ModeOccupancy(const ModeSet& set, std::int64_t n_draws, bool weights_within_draw);

  // Post-warmup draw number `index` (0-based): its samples (columns, each a point of the set's
  // dimension) and their log weights (empty: one unweighted sample).
  void add(std::int64_t index, const Matrix& samples, std::span<const double> log_weights);
  void add(std::int64_t index, ConstVectorRef x);

  v1::ModeOccupancy to_record() const;
  // Checkpoints: the running sums, and their restoration into a freshly built accumulator.
  std::vector<double> save() const;
  void restore(std::span<const double> sums);

 private:
  struct Half {
    std::vector<double> weight;  // per mode, then outside
    double total = 0.0, total_sq = 0.0;
  };
  void add_weighted(std::int64_t index, int mode, double log_weight);
  void rescale(double new_log_scale);

  ModeAssigner assigner_;
  std::int64_t half_boundary_ = 0;
  bool within_draw_ = false;
  double log_scale_ = 0.0;  // sums are in units of exp(log_scale_) (global weights)
  bool scaled_ = false;
  Half halves_[2];
  // Per draw (global weights): the draw's total weight, added to the half's sums at the end.
  std::vector<double> draw_weight_scratch_;
  std::vector<int> assigned_scratch_;
};

// The run-level verdict (see the top of this file).
struct ModeCheck {
  int n_modes = 0;                    // K (Laplace modes)
  std::vector<double> pooled_share;   // K + 1 entries, outside last
  std::vector<double> rhat;           // K + 1
  std::vector<std::vector<double>> chain_share;  // per chain, K + 1
  std::vector<int> unvisited;         // modes (0-based) found but never visited
  int worst_rhat_mode = -1;           // index of the largest R-hat (K = outside)
  double max_rhat = 1.0;
  bool disagree = false;
  bool untrusted() const { return disagree || !unvisited.empty(); }
};

// chains: the occupancies of the run's chains that finished ("ok"); shares: the Laplace shares of
// the set's modes (ModeSet::laplace_shares or the record's log masses).
ModeCheck check_mode_occupancy(const std::vector<const v1::ModeOccupancy*>& chains,
                               const std::vector<double>& laplace_shares);

// The warning lines for an untrusted check (empty when trusted), naming modes #1, #2, ... as the
// search listed them.
std::vector<std::string> describe_mode_doubts(const ModeCheck& check);

// Split R-hat of an indicator from per-half shares p_h and sizes n_h (exposed for tests):
// sqrt(((n - 1)/n W + B/n) / W), W = mean p_h (1 - p_h) n_h/(n_h - 1), B = n var(p_h), n = mean
// n_h. 1 when every half agrees exactly; +inf when they differ but every half is pure. Shares
// within 1e-12 of 0 or 1 count as pure (a pure half's share is a ratio of sums that rounding can
// leave a few ulps off, even above 1).
double split_rhat_of_shares(const std::vector<double>& shares, const std::vector<double>& sizes);

}  // namespace pemc::modes
