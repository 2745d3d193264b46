#pragma once
// The Boltzmann machine relaxation target (pseudo-extended supplement, Section D; Graham & Storkey
// 2017, Appendix B, eqs. (44)-(54)).
//
// Machine: P(s) = exp(0.5 s'Ws + s'b) / Z_B on s in {-1,+1}^{d_b}            (supplement eq. (10))
// With Q Q' = W + diag(D) ⪰ 0 (Q is d_b x d) and x | s ~ N(Q's, I)          (supplement eq. (11))
// the marginal of x has potential (CT eq. (51)), with q_k the rows of Q,
//     phi(x) = 0.5 x'x - sum_k log cosh(q_k'x + b_k),
// exactly the function implemented here (no additive constant). Its normaliser:
//     Z := ∫ exp(-phi(x)) dx
//        = ∫ exp(-x'x/2) 2^{-d_b} sum_s exp(s'(Qx + b)) dx          (prod_k cosh a_k = 2^{-d_b}
//                                                                      sum_s exp(s'a))
//        = 2^{-d_b} (2 pi)^{d/2} sum_s exp(0.5 s'QQ's + s'b)          (Gaussian integral)
//        = 2^{-d_b} (2 pi)^{d/2} exp(0.5 Tr D) Z_B                    (s'diag(D)s = Tr D)
// i.e. log Z = log Z_B + 0.5 Tr(D) + (d/2) log(2 pi) - d_b log 2, the unnumbered relation after the
// supplement's phi(x) (CT paper eq. (52)); the first line needs no D at all and holds for any Q.
// Moments (CT eqs. (53)-(54); the supplement's E[XX'] drops a Q, the CT paper's is right):
//     E[x] = Q' E[s],   E[xx'] = I + Q' E[ss'] Q,   E[s | x] = tanh(Qx + b).
//
// Truth is therefore computed by enumerating the machine with matrix M = Q Q' (diagonal included):
// it is exact for *this* potential whatever Q is. For a target built from (W, b), M = W + diag(D)
// up to factor_residual() (the dropped numerically-null eigen-directions, <= null_tol lambda_max);
// for a target built from a shipped Q (boltzmann-pe28/Q.txt, accurate only to ~1.5e-4) the machine
// is W_eff = offdiag(Q Q'), D = diag(Q Q'), which is what exp(-phi) really describes.
//
// boltzmann-pe28/truth.json (checked by tests/statistical/boltzmann_truth_check.cpp): its E_x and
// Cov_x are eqs. (53)-(54) with E[s], E[ss'] of (W.txt, b.txt) and with Q.txt (agreement 5e-12), not
// the exact moments of exp(-phi) with Q.txt (those differ by ~4e-5 relative, as Q.txt Q.txt' differs
// from W + diag(D.txt) by up to 1.5e-4). Its log_Z_x = 160.889238 is the log normaliser of exp(-phi)
// exactly as written (no extra constant) up to that inexactness: it is 5.9e-5 below the exact
// log ∫ exp(-phi_{Q.txt}) = 160.889297 and 6.6e-4 below eq. (52) with W.txt and D.txt (160.889897),
// equal to neither. With our solved D the optimum has rank 24 (d = 24, not 27), so that target's
// log Z differs from truth.json's by 1.5 log 2pi + 0.5 (Tr D_solved - Tr D.txt).
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "targets/boltzmann_enumeration.hpp"
#include "targets/boltzmann_machine.hpp"
#include "targets/sdp_diagonal.hpp"
#include "targets/target.hpp"

namespace pemc::v1 {
class BoltzmannTarget;
}

namespace pemc::targets {

struct BoltzmannRelaxationOptions {
  double null_tol = 1e-7;          // relaxation_factor: eigenvalues <= null_tol * lambda_max dropped
  int max_enumeration_units = 30;  // truth() enumerates only when d_b <= this
  int enumeration_threads = 0;     // 0 = all hardware threads (result independent of the count)
  MinMaxEigenOptions sdp;
};

class BoltzmannRelaxation final : public Target {
 public:
  // From (W, b): D = solve_min_max_eigen_diagonal(W), Q = relaxation_factor(W, D, null_tol).
  explicit BoltzmannRelaxation(const BoltzmannMachine& machine,
                               const BoltzmannRelaxationOptions& options = {});
  // From (Q, b) directly: Q is d_b x d (rows q_k), b has d_b entries.
  BoltzmannRelaxation(Matrix q, Vector b, const BoltzmannRelaxationOptions& options = {});

  int dim() const override { return static_cast<int>(q_.cols()); }
  std::string name() const override { return "boltzmann"; }
  double potential(ConstVectorRef x) const override;
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;
  // Pseudo-extended HMC's N points in one call. On CPUs with AVX2/FMA four points per pass, one in
  // each 256-bit lane (SLEEF's vector exp and log1p instead of scalar libm calls per unit and
  // point); its bits may differ from potential_and_gradient's by rounding (a few eps times the
  // magnitudes that enter each result), so between CPUs with and without AVX2 too (as the
  // mixture's), but never with the point's position or neighbours. Without AVX2: one
  // potential_and_gradient per point.
  void potential_and_gradient_batch(std::span<const double> points, std::span<double> potentials,
                                    std::span<double> grads) const override;
  // Exact truth by enumeration of all 2^{d_b} states when d_b <= max_enumeration_units (computed on
  // the first call and cached; thread-safe); otherwise empty. log_z = log ∫ exp(-potential); extras
  // "log_z_boltzmann" = {log sum_s exp(0.5 s'W_eff s + s'b)}, "mean_s" = E[s] (d_b values),
  // "trace_d" = {Tr D} with D = diag(Q Q').
  Truth truth() const override;

  int n_units() const { return static_cast<int>(q_.rows()); }
  const Matrix& q() const { return q_; }
  const Vector& b() const { return b_; }
  // D such that Q Q' = W + diag(D): the solved D (from W), or diag(Q Q') (from Q).
  const Vector& diagonal() const { return d_; }
  // max_ij |(Q Q')_ij - (W + diag(D))_ij| for a target built from W; 0 when built from Q.
  double factor_residual() const { return factor_residual_; }
  // The machine's exact sums (with M = Q Q'; see above), cached like truth(). Throws
  // NumericalError if d_b > max_enumeration_units.
  const BoltzmannTruth& boltzmann_truth() const;

 private:
  void init_buffers();

  Matrix q_;
  Vector b_;
  Vector d_;
  double factor_residual_ = 0.0;
  BoltzmannRelaxationOptions options_;
  mutable Vector z_;  // scratch: Q x + b, then tanh of it
  // The batch path: whether this CPU runs it, Q row-major (Q_kj at [k * dim + j]), and scratch
  // (four lanes per entry: coordinates, tanh of the units, the gradients of padding lanes).
  bool lanes4_ = false;
  std::vector<double> q_rows_;
  mutable std::vector<double> lane_scratch_;
  struct Cache {
    std::once_flag once;
    BoltzmannTruth machine;
    Truth truth;
  };
  std::unique_ptr<Cache> cache_;
};

// E[s | x] = tanh(Q x + b): the Rao-Blackwellised per-draw estimate of E[s] (CT paper eq. (49)).
Vector rao_blackwell_mean_s(const BoltzmannRelaxation& target, ConstVectorRef x);

// Config entry point. Exactly one source: weights_file + bias_file, q_file + bias_file, or
// generated. Zero-valued proto fields take their documented defaults (max_enumeration_units 30,
// weight_scale_hi 6, weight_scale_lo 2, bias_scale 0.1). Throws ConfigError naming the field
// (target.boltzmann.*), DataError/IoError from the loaders.
std::shared_ptr<BoltzmannRelaxation> make_boltzmann(const pemc::v1::BoltzmannTarget& config);

}  // namespace pemc::targets
