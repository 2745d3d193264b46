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
#include "targets/target.hpp"

namespace pemc::v1 {
class BaseDensityConfig;
}
namespace pemc::targets {
class BoltzmannRelaxation;
}

namespace pemc::extended {

// ---- L-BFGS ------------------------------------------------------------------------------------

struct LbfgsOptions {
  int max_iterations = 2000;
  double gradient_tolerance = 1e-6;  // converged when max_i |grad_i| <= this
  int history = 10;                  // number of (s, y) pairs kept
};

struct LbfgsResult {
  Vector x;
  double value = 0.0;
  Vector grad;
  int iterations = 0;
  std::int64_t n_gradient_evals = 0;
  bool converged = false;
  std::string message;  // why it stopped
};

// Minimises f.potential from x0 by limited-memory BFGS (Nocedal & Wright, Algorithm 7.4/7.5: the
// two-loop recursion with the scaling gamma = s'y / y'y) and a backtracking Armijo line search;
// pairs with s'y <= 1e-10 |s||y| are skipped so the inverse-Hessian estimate stays positive
// definite. Non-finite trial values are treated as "too far" (the step is shortened). Throws
// NumericalError if f is not finite at x0.
LbfgsResult minimize_lbfgs(const targets::Target& f, Vector x0, const LbfgsOptions& options = {});

// ---- local Gaussian fits -----------------------------------------------------------------------

// One local Gaussian approximation q_i = N(mean, covariance) and its log-evidence l_i (an
// approximation to log Z from this fit alone, eq. (25)).
struct LocalGaussianFit {
  Vector mean;
  Matrix covariance;
  double log_evidence = 0.0;
};

// The Hessian of f.potential at x by central differences of the analytic gradient (2 dim gradient
// evaluations), symmetrised. Step h_i = step * max(1, |x_i|).
Matrix finite_difference_hessian(const targets::Target& f, ConstVectorRef x, double step = 1e-5);

// Laplace fit at a mode: mean = mode, covariance = H^{-1}, l = -phi(mode) + (d/2) log 2pi -
// (1/2) log det H. Throws NumericalError when H is not positive definite.
LocalGaussianFit laplace_fit(const targets::Target& f, ConstVectorRef mode, double hessian_step);

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
BaseDensity make_base_density(const v1::BaseDensityConfig& config, const targets::Target& target,
                              const std::string& field);

}  // namespace pemc::extended
