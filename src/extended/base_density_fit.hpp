#pragma once
// Choosing the base density and log zeta (Graham & Storkey 2017, Section 6):
//  - Laplace approximation N(mode, H^{-1}) at the best of several local modes found by multi-start
//    L-BFGS, with log zeta the Laplace estimate of log Z;
//  - the Gaussian moment-matched to the mixture of local Gaussian fits q_i weighted by exp(l_i),
//    log zeta = log sum_i exp(l_i) (eq. (25)); the local fits are Laplace fits at the distinct modes
//    or, for Boltzmann relaxations, mean-field fits of the underlying machine (Section 7.2);
//  - a user-given Gaussian (config or files).
#include <cstdint>
#include <string>
#include <vector>

#include "estimators/rb_tempering.hpp"
#include "extended/base_density.hpp"
#include "modes/laplace.hpp"
#include "modes/lbfgs.hpp"
#include "modes/mode_set.hpp"
#include "targets/target.hpp"

namespace pemc::v1 {
class BaseDensityConfig;
}
namespace pemc::targets {
class BoltzmannRelaxation;
}

namespace pemc::extended {

// L-BFGS and the Laplace fit live in src/modes/ (lbfgs.hpp, laplace.hpp).
using modes::finite_difference_hessian;
using modes::laplace_fit;
using modes::LbfgsOptions;
using modes::LbfgsResult;
using modes::LocalGaussianFit;
using modes::minimize_lbfgs;

// ---- multi-start Laplace fits -----------------------------------------------------------------

struct ModeSearchOptions {
  int n_starts = 10;
  double init_radius = 2.0;
  Vector init_center;                 // empty = origin
  std::uint64_t seed = 0;             // starts from Stream(seed, kGenerator, kModeSearchStreamId, i)
  LbfgsOptions lbfgs;
  double dedup_tolerance = 1e-3;      // Euclidean distance under which two modes are one
  double hessian_step = 1e-5;
};
inline constexpr std::uint64_t kModeSearchStreamId = 0xC7BA5E;

// Laplace fits at the distinct local modes reached from n_starts uniform starts in
// center + [-r, r]^d, in decreasing order of log_evidence. Starts whose optimisation ends at a
// point with a non-positive-definite Hessian or a non-finite value are dropped; NumericalError if
// none is left (the message counts what happened to the starts).
std::vector<LocalGaussianFit> find_laplace_fits(const targets::Target& f,
                                                const ModeSearchOptions& options);

// ---- Boltzmann mean-field fits ----------------------------------------------------------------

struct MeanFieldOptions {
  int n_starts = 20;
  std::uint64_t seed = 0;             // m0 ~ U(-1,1)^{d_b} from Stream(seed, kGenerator, kMeanFieldStreamId, i)
  int max_iterations = 1000;          // full sweeps
  double tolerance = 1e-10;
  double dedup_tolerance = 1e-6;
};
inline constexpr std::uint64_t kMeanFieldStreamId = 0xC7BF;

// Mean-field fits of the machine underlying a Boltzmann relaxation (M = Q Q', W = offdiag(M)):
// sequential coordinate ascent m_i <- tanh(sum_j W_ij m_j + b_i), which never decreases the ELBO
// L(m) = 0.5 m'Wm + b'm + sum_i H((1 + m_i)/2) <= log sum_s exp(0.5 s'Ws + s'b). The relaxed
// marginal of q(s) is q(x) = sum_s q(s) N(x; Q's, I): mean Q'm, covariance I + Q' diag(1 - m^2) Q,
// and l = L(m) + 0.5 Tr(D) + (d/2) log 2pi - d_b log 2 (eq. (52) with D = diag(Q Q')). Distinct
// fixed points (max |m_i - m_j| > dedup_tolerance) in decreasing order of l.
std::vector<LocalGaussianFit> boltzmann_mean_field_fits(const targets::BoltzmannRelaxation& target,
                                                        const MeanFieldOptions& options);

// ---- mean-field Gaussian variational fit (ADVI-style) ------------------------------------------

struct VariationalOptions {
  int iterations = 10000;
  int samples_per_step = 8;
  double learning_rate = 0.02;
  std::uint64_t seed = 0;             // step t: Stream(seed, kGenerator, kVariationalStreamId, t);
                                      // ELBO draws: Stream(seed, kGenerator, kVariationalStreamId + 1, 0)
  int elbo_samples = 20000;
  Vector init_mean;                   // empty: the best mode of a 4-start L-BFGS search
  double init_log_sd = -1.0;
};
inline constexpr std::uint64_t kVariationalStreamId = 0xC7AD;

// q = N(m, diag(exp(2w))) maximising ELBO = E_q[-phi(x)] + sum_i w_i + (d/2)(1 + log 2pi) with
// reparametrised gradients (x = m + exp(w) eps: dELBO/dm = -E[grad phi], dELBO/dw =
// -E[grad phi * exp(w) * eps] + 1) and Adam (Kingma & Ba 2015); the result averages the iterates of
// the second half. Draws with a non-finite phi or gradient are left out of a step's average.
// log_evidence = the ELBO of the averaged q from elbo_samples fresh draws (a stochastic lower bound
// on log Z). Throws NumericalError if no step had a finite draw or the final ELBO is not finite.
LocalGaussianFit fit_mean_field_gaussian(const targets::Target& f, const VariationalOptions& options);

// ---- combining --------------------------------------------------------------------------------

// The Gaussian with the mean and covariance of the mixture sum_i exp(l_i) q_i / zeta, and
// log zeta = log sum_i exp(l_i) (eq. (25)).
LocalGaussianFit moment_match(const std::vector<LocalGaussianFit>& fits);

// One bootstrap step (Section 6, last paragraph): the Gaussian with the Rao-Blackwellised target
// mean and covariance of a run (eq. (21)) and log zeta = that run's log Z estimate (eq. (20)), the
// run having used `log_zeta_used`. `acc` is normally the merge, in global chain id order, of every
// chain's accumulator. covariance_scale (> 0) multiplies the refitted covariance (a wider base
// covers tails the run under-sampled). Throws NumericalError when the estimate is not usable (no
// positive weights, a covariance that is not positive definite).
BaseDensity refit_base(const estimators::TemperingRbAccumulator& acc, double log_zeta_used,
                       double covariance_scale = 1.0);

// The base density a config asks for, for `target` (its original space). `field` names the config
// path in errors (e.g. "sampler.continuous_tempering.base"). Throws ConfigError for missing/
// inconsistent fields, DataError/IoError from files, NumericalError when a fit fails.
// `modes`: the run's mode search, which a `mixture` base is built from (ConfigError without it).
BaseDensity make_base_density(const v1::BaseDensityConfig& config, const targets::Target& target,
                              const std::string& field, const modes::ModeSet* modes = nullptr);

}  // namespace pemc::extended
