#pragma once
// Energy Bayesian fraction of missing information (E-BFMI; Betancourt 2016, "Diagnosing
// suboptimal cotangent disintegrations in Hamiltonian Monte Carlo") of one chain's post-warmup
// Hamiltonian energies E_1 .. E_n, accumulated one draw at a time, exactly as rstan::get_bfmi:
//   E-BFMI = (sum_{i>1} (E_i - E_{i-1})^2 / n) / var(E),   var with the n - 1 denominator.
// (CmdStan's diagnose divides both sums by n instead; the two differ by the factor (n - 1) / n.)
// Small values (below 0.3) say the momentum resampling moves the energy too little for the
// chain to explore the posterior's energy distribution (typically heavy tails).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace pemc::estimators {

class EbfmiAccumulator {
 public:
  // Adds the next draw's energy (in chain order). NumericalError for a non-finite energy.
  void add(double energy);
  // NaN with fewer than 2 draws or when every energy is equal.
  double value() const;
  std::int64_t count() const { return n_; }

  // The running sums (count, previous energy, sum of squared differences, mean, sum of squared
  // deviations), for chain checkpoints: restore(save()) continues exactly where it stopped.
  static constexpr std::size_t kSavedSize = 5;
  std::array<double, kSavedSize> save() const;
  // DataError for sums no accumulator holds (another length, a negative or fractional count, a
  // negative or non-finite sum).
  static EbfmiAccumulator restore(std::span<const double> sums);

 private:
  std::int64_t n_ = 0;
  double previous_ = 0.0;
  double sum_sq_diff_ = 0.0;
  double mean_ = 0.0, m2_ = 0.0;  // Welford's running mean and sum of squared deviations
};

}  // namespace pemc::estimators
