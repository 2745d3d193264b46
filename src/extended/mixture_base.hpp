#pragma once
// The `mixture` base density / tempering reference (tempering.proto MixtureBaseConfig): a mixture
// of Gaussians over the modes the run's mode search found (modes/), so that a tempered path leads
// to every one of them rather than to the one a single Gaussian sits on.
//
// Components: N(m_k, widen^2 H_k^{-1}) for each mode k with a Laplace fit (the max_components with
// the largest Laplace log mass l_k), with weight (1 - w_d) exp(l_k) / sum_j exp(l_j) (CT paper
// eq. (25), without moment matching); and a defensive component N(mu, defensive_widen^2 Sigma)
// with weight w_d = defensive_weight, (mu, Sigma) the moments of the mode components, which spans
// the region between and around the modes (Hesterberg's defensive mixture), so that a mode the
// search missed still gets some of the reference's mass. log zeta = log sum_k exp(l_k).
//
// Without a mode that has a Laplace fit (singular Hessians, a density unbounded at a boundary),
// the base is the mean-field variational fit instead (`variational {}` seeded by the search's
// seed), and its description says so.
#include <string>

#include "extended/base_density.hpp"
#include "modes/mode_set.hpp"
#include "targets/target.hpp"

namespace pemc::v1 {
class MixtureBaseConfig;
}

namespace pemc::extended {

struct MixtureBaseDefaults {
  static constexpr double kWiden = 1.0;
  static constexpr double kDefensiveWeight = 0.1;
  static constexpr double kDefensiveWiden = 2.0;
  static constexpr int kMaxComponents = 64;
};

// `field` names the config path in errors.
BaseDensity mixture_base(const v1::MixtureBaseConfig& config, const targets::Target& target,
                         const modes::ModeSet& modes, const std::string& field);

}  // namespace pemc::extended
