#pragma once
// Regenerative standard error of the log of a ratio of two sums, log(sum_t a_t / sum_t b_t), over
// the observations (a_t, b_t) >= 0 of a Markov chain that regenerates: at some steps the chain's
// future is independent of its past (simulated tempering at level 0 with an exact draw from the
// reference: the next x forgets everything before it). The observations from one regeneration up to
// the next form a tour; tours are independent and identically distributed (Mykland, Tierney & Yu
// 1995, "Regeneration in Markov chain samplers", JASA 90).
//
// With T complete tours of sums A_i = sum a_t, B_i = sum b_t over tour i and their means Abar,
// Bbar, the estimator over the complete tours is g(Abar, Bbar) = log Abar - log Bbar of T i.i.d.
// pairs, and the delta method gives (as for batch means, log_ratio_batch_means.hpp, but over tours
// that are independent by construction rather than batches assumed long enough to be)
//   SE^2 = (1 / T) sum_i (A_i / Abar - B_i / Bbar)^2 / (T - 1).
// A tour never cuts through an excursion of the chain: an excursion to the far end of the ladder
// that holds the chain for a long time is one tour, however long, and counts as the one draw it is.
//
// That SE needs a finite variance of the tour sums. Where a rare kind of tour (one that finds a
// mode and stays there) carries much of the sums, their distribution has a heavy tail and the SE
// (any SE from the chain's own tours) means nothing, as for AIS's run weights: tour_pareto_k() is
// the Pareto k-hat (pareto_tail.hpp) of the tours' sums, the heavier of A's and B's upper tails.
//
// The observations before the first regeneration and after the last start a partial tour; they
// enter the estimate (the caller's) but not the SE, which is scaled by sqrt(n_in_tours / n): the
// variance of the ratio falls as 1/n. Each complete tour's two log sums are kept (16 bytes a tour:
// the tail fit needs them).
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace pemc::estimators {

class RegenerativeLogRatio {
 public:
  // One observation, as logs (-inf is a zero; the caller rejects NaN and +inf). starts_tour: the
  // chain regenerated at this step, so this observation is the first of a new tour (and the tour
  // before it, if it began at a regeneration, is complete).
  void add(double log_a, double log_b, bool starts_tour);

  std::int64_t count() const { return count_; }
  // Complete tours (each from one regeneration to the next).
  std::int64_t n_tours() const { return static_cast<std::int64_t>(log_a_.size()); }
  // The delta-method SE over the complete tours (above), scaled to all observations; NaN with
  // fewer than 2 complete tours or while a mean tour sum is 0.
  double log_ratio_se() const;
  // max(k-hat of the tours' A_i, k-hat of their B_i); NaN when neither is defined (fewer than 25
  // tours with a positive sum).
  double tour_pareto_k() const;

  // [count, in_tours, open, open_n, open_log_a, open_log_b, then per complete tour: log A, log B]
  std::vector<double> serialize() const;
  // Throws DataError for numbers that are not such a layout.
  static RegenerativeLogRatio deserialize(std::span<const double> data);

 private:
  static constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  std::int64_t count_ = 0;
  std::int64_t in_tours_ = 0;  // observations in the complete tours
  bool open_ = false;          // a tour that began at a regeneration is in progress
  // The tour in progress (or the observations before the first regeneration).
  std::int64_t open_n_ = 0;
  double open_log_a_ = kNegInf, open_log_b_ = kNegInf;
  std::vector<double> log_a_, log_b_;  // the complete tours' log sums
};

}  // namespace pemc::estimators
