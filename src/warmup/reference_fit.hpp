#pragma once
// Pseudo-extended's reference rho fitted to its pooled warmup's draws on the target.
//
// The reference path (extended/pseudo_extended_reference.hpp) tempers the target towards rho, a
// mixture over the modes the search found, each mode's Laplace fit N(m_k, H_k^{-1}) with log mass
// l_k (extended/mixture_base.hpp), and divides the target by zeta = sum_k exp(l_k). A Laplace fit
// is local: on a hierarchical posterior (eight schools, non-centred) the mode lies where little of
// the mass is, rho overlaps the target poorly, most pseudo-samples get almost no weight and
// zeta is off by several nats. After the pooled warmup's stage on the target
// (pooled_round_config.hpp) each chain's draws are the target's own, so each mode's component is
// refitted to the draws of the chains in it (their windows' sums pooled):
//   location    the draws' mean;
//   covariance  their sample covariance, from at least 10 draws per dimension; from fewer (or
//               diagonal sums, a target above the pooled warmup's dense limit) the Laplace fit's
//               correlations scaled to the draws' variances, since a sample covariance from few
//               draws is far too narrow in some directions;
//   log mass    the draws' mean log density plus the entropy of N(location, covariance),
//               d/2 (1 + log 2 pi) + 1/2 log det covariance. For the target restricted to the
//               mode, log Z_k = E_k[log gamma] + H(p_k), and among laws of one covariance the
//               Gaussian has the largest entropy: exact for a Gaussian, an upper bound otherwise
//               (up to the Monte Carlo error of the mean).
// A chain belongs to the mode whose Laplace fit, weighted by its share, gives the chain's mean the
// highest density (modes::ModeAssigner::best_mode, without "outside": a chain that sits beyond
// every mode's region refits the nearest one). Modes no chain sits in keep their Laplace fit.
// When the search found no mode (a density unbounded at a boundary, as a centred hierarchical
// model's), every chain's draws together make one Gaussian, in place of the mean-field variational
// fit the mixture would otherwise fall back to (extended/mixture_base.hpp). rho
// only shapes the sampler's efficiency (the extended target's weights are exact for any rho), so
// a poor fit costs effective samples, never correctness.
#include <map>
#include <string>

#include "modes/mode_set.hpp"
#include "warmup/pooled_windows.hpp"

namespace pemc::warmup {

struct ReferenceFit {
  modes::ModeSet modes;  // each visited mode refitted, in decreasing log mass
  // For the log: each refitted mode's chains and log mass, Laplace and fitted (empty: none).
  std::string description;
};

// `modes` refitted to the chains' `fits` as above (one mode from all of them when it has none);
// unchanged for a stand-in or without fits. DataError when a fit's dimension is not the modes'.
ReferenceFit fit_reference_modes(const modes::ModeSet& modes, const std::map<int, ChainFit>& fits);

}  // namespace pemc::warmup
