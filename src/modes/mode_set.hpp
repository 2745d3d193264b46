#pragma once
// The modes a search found (mode_search.hpp), on the sampler's scale (a Stan model's unconstrained
// parameters): what the mixture references and bases are built from, what pseudo-extended
// normalises by, and what the mode check (mode_occupancy.hpp) assigns draws to.
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace pemc::v1 {
class ModeSearchResult;
}

namespace pemc::modes {

// A local maximum of the density: an optimum where the Hessian H of the potential is positive
// definite. Optima with a singular or indefinite Hessian (saddles, ridges of unidentified
// directions, such as a mixture whose two components coincide) are not modes; the set only counts
// them (ModeSet::n_degenerate).
struct Mode {
  Vector location;
  double log_density = 0.0;  // -potential at the mode
  // The Laplace approximation N(location, H^{-1}): log_mass = log_density + (d/2) log 2pi -
  // (1/2) log det H approximates the log of the integral of the density over the mode (CT paper
  // eq. (25)).
  double log_mass = 0.0;
  Matrix covariance;         // H^{-1}
  Matrix hessian_cholesky;   // lower R with H = R R'
  int n_starts = 0;          // starts whose optimisation ended here
  int first_start = 0;       // the lowest such start index
};

struct ModeSet {
  int dim = 0;
  std::uint64_t seed = 0;     // keys the starts
  std::vector<Mode> modes;    // decreasing log_mass
  int n_starts = 0;
  int n_converged = 0;        // starts that reached a mode or a degenerate optimum
  int n_degenerate = 0;       // ... of them at an optimum whose Hessian is not positive definite
  // The highest log density among the degenerate optima (NaN without any).
  double best_degenerate_log_density = std::numeric_limits<double>::quiet_NaN();
  int n_not_converged = 0;
  int n_nonfinite = 0;
  // Good-Turing: modes reached by exactly one start / starts that reached a mode.
  double unseen_probability = 1.0;
  bool complete = false;            // the stopping rule held before the start budget ran out
  std::int64_t n_gradient_evals = 0;
  double wall_seconds = 0.0;
  // A placeholder standing for a search that has not run (config validation builds samplers
  // without searching): one mode at the origin with an identity covariance.
  bool stand_in = false;

  // The highest log density found (over the modes, else the degenerate optima); nullopt without any.
  std::optional<double> best_log_density() const;
  // Each mode's share of their summed Laplace mass, exp(log_mass_k - logsumexp), in order.
  std::vector<double> laplace_shares() const;
  // The modes' Laplace variances weighted by their shares: a diagonal inverse metric for a kernel
  // that starts knowing the modes (a stand-in's is the identity). nullopt without modes or when
  // not all finite and positive.
  std::optional<Vector> laplace_diagonal() const;
};

using ModeSetPtr = std::shared_ptr<const ModeSet>;

// One mode at the origin with identity covariance and log density 0 (see ModeSet::stand_in).
ModeSet stand_in_mode_set(int dim);

// The record (records.proto ModeSearchResult). `outputs_at` gives the target's named outputs at a
// location (empty for targets without named outputs).
v1::ModeSearchResult to_record(const ModeSet& set,
                               const std::function<std::vector<double>(const Vector&)>& outputs_at);

// One line for the run log: "found 2 modes in 64 starts (60 converged; search complete, 1.2 s):
// #1 log mass -423.8 (share 0.50, 31 starts) at mu1=-2.06, mu2=2.49, ...; #2 ...". `names` and
// `outputs_at` label locations by the target's outputs where it has them (else x[1], x[2], ...);
// at most max_modes modes and max_coords coordinates each are shown.
std::string describe(const ModeSet& set, const std::vector<std::string>& names,
                     const std::function<std::vector<double>(const Vector&)>& outputs_at,
                     int max_modes = 8, int max_coords = 6);

}  // namespace pemc::modes
