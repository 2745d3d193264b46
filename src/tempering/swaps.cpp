#include "tempering/swaps.hpp"

#include "adapt/state_io.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/numerics.hpp"

namespace pemc::tempering {

double swap_log_ratio(double beta_lo, double beta_hi, double v_lo, double v_hi) {
  const double r = (beta_hi - beta_lo) * (v_hi - v_lo);
  return std::isnan(r) ? -kInf : r;
}

SwapOutcome swap_round(const std::vector<double>& betas, const std::vector<double>& v,
                       std::vector<int>& replica_at, std::vector<int>& level_of, SwapScheme scheme,
                       std::int64_t round, rng::Stream& stream) {
  return swap_round(betas, v, v, static_cast<int>(betas.size()) - 1, replica_at, level_of, scheme,
                    round, stream);
}

SwapOutcome swap_round(const std::vector<double>& betas, const std::vector<double>& v,
                       const std::vector<double>& v_fixed, int first_fixed_pair,
                       std::vector<int>& replica_at, std::vector<int>& level_of, SwapScheme scheme,
                       std::int64_t round, rng::Stream& stream) {
  const int k = static_cast<int>(betas.size());
  if (k < 2 || static_cast<int>(replica_at.size()) != k || static_cast<int>(level_of.size()) != k ||
      static_cast<int>(v.size()) != k || static_cast<int>(v_fixed.size()) != k)
    throw std::invalid_argument("swap_round: sizes of betas, v, replica_at, level_of differ");
  SwapOutcome out;
  out.accept_prob.assign(k - 1, 0.0);
  out.proposed.assign(k - 1, 0);
  out.accepted.assign(k - 1, 0);
  std::vector<double> log_alpha(k - 1);
  for (int i = 0; i + 1 < k; ++i) {
    const auto& path_v = i < first_fixed_pair ? v : v_fixed;
    log_alpha[i] = swap_log_ratio(betas[i], betas[i + 1], path_v[replica_at[i]],
                                  path_v[replica_at[i + 1]]);
    out.accept_prob[i] = log_alpha[i] >= 0.0 ? 1.0 : std::exp(log_alpha[i]);
  }
  const int parity = scheme == SwapScheme::kDeterministicEvenOdd
                         ? static_cast<int>(round % 2)
                         : (stream.uniform() < 0.5 ? 0 : 1);
  // Proposed pairs are disjoint, so deciding them one after the other is the same as at once.
  for (int i = parity; i + 1 < k; i += 2) {
    out.proposed[i] = 1;
    if (std::log(stream.uniform()) < log_alpha[i]) {
      out.accepted[i] = 1;
      const int a = replica_at[i], b = replica_at[i + 1];
      replica_at[i] = b;
      replica_at[i + 1] = a;
      level_of[a] = i + 1;
      level_of[b] = i;
    }
  }
  return out;
}

void RoundTripCounter::reset(int n_replicas) {
  phase_.assign(static_cast<std::size_t>(n_replicas), 0);
  per_replica_.assign(static_cast<std::size_t>(n_replicas), 0);
  trips_ = 0;
}

void RoundTripCounter::observe(const std::vector<int>& level_of, int n_levels) {
  for (std::size_t r = 0; r < phase_.size() && r < level_of.size(); ++r) {
    if (level_of[r] == 0) {
      if (phase_[r] == 2) {
        ++trips_;
        ++per_replica_[r];
      }
      phase_[r] = 1;
    } else if (level_of[r] == n_levels - 1 && phase_[r] == 1) {
      phase_[r] = 2;
    }
  }
}


std::int64_t RoundTripCounter::min_replica_round_trips() const {
  return per_replica_.empty() ? 0 : *std::min_element(per_replica_.begin(), per_replica_.end());
}

void RoundTripCounter::save_state(pemc::v1::KernelState& s) const {
  s.set_kind("round_trip_counter");
  adapt::put_ints(s, "phase", phase_);
  adapt::put_int(s, "trips", trips_);
  adapt::put_ints(s, "per_replica", per_replica_);
}

void RoundTripCounter::restore_state(const pemc::v1::KernelState& s) {
  adapt::expect_kind(s, "round_trip_counter");
  phase_ = adapt::get_int_vector<char>(s, "phase");
  trips_ = adapt::get_int(s, "trips");
  per_replica_ = adapt::get_int_vector<std::int64_t>(s, "per_replica");
  if (per_replica_.size() != phase_.size())
    adapt::state_error(s, "per_replica", "not one count per replica");
}

}  // namespace pemc::tempering
