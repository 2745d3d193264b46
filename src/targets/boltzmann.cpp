#include "core/number_file.hpp"
#include "targets/boltzmann.hpp"

#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>

// SLEEF's fixed AVX2 exp and log1p, called directly (core/sleef_wide.hpp).
#include "core/sleef_wide.hpp"
#ifdef PEMC_SLEEF_WIDE
#define PEMC_BOLTZMANN_LANES4 1
#endif

#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "core/numerics.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::targets {
namespace {

// log cosh(z) = |z| + log1p(exp(-2|z|)) - log 2: no overflow for large |z|.
inline double log_cosh(double z) {
  const double a = std::fabs(z);
  return a + std::log1p(std::exp(-2.0 * a)) - std::numbers::ln2;
}

void check_options(const BoltzmannRelaxationOptions& o) {
  if (!(o.null_tol >= 0.0 && o.null_tol < 1.0))
    throw ConfigError("boltzmann relaxation: null_tol must be in [0, 1)");
  if (o.max_enumeration_units < 0 || o.max_enumeration_units > kMaxEnumerationUnits)
    throw ConfigError("boltzmann relaxation: max_enumeration_units must be in [0, " +
                      std::to_string(kMaxEnumerationUnits) + "]");
  if (o.enumeration_threads < 0)
    throw ConfigError("boltzmann relaxation: enumeration_threads must be >= 0");
}

#ifdef PEMC_BOLTZMANN_LANES4
// The batch path: four points x[0..4), one per lane of a __m256d. Every instruction acts on the
// four lanes alike and none mixes them, so a point's bits are the same in any lane and any batch
// (Target::potential_and_gradient_batch's contract; a pseudo-extended chain split over ranks
// evaluates its points in different batches). Sums run in a fixed order with explicit FMAs.
struct LaneLayout {
  const double* q;  // Q row-major: Q_kj at [k * d + j]
  const double* b;
  std::size_t n_units, d;
  double* xs;  // x_j at [j * 4 + lane]
  double* ts;  // tanh a_k at [k * 4 + lane]
};

#define PEMC_AVX2 __attribute__((target("avx2,fma"), always_inline)) static inline

// Rows r0..r3 (four doubles each) to columns, in place: a 4x4 transpose.
PEMC_AVX2 void transpose4(__m256d& r0, __m256d& r1, __m256d& r2, __m256d& r3) {
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  r0 = _mm256_permute2f128_pd(t0, t2, 0x20);
  r1 = _mm256_permute2f128_pd(t1, t3, 0x20);
  r2 = _mm256_permute2f128_pd(t0, t2, 0x31);
  r3 = _mm256_permute2f128_pd(t1, t3, 0x31);
}

// log cosh a and tanh a, lane by lane, with e = exp(-2|a|) (0 for |a| > ~372, exactly as in
// log_cosh): log cosh a = |a| + log1p(e) - log 2 and tanh |a| = (1 - e) / (1 + e). The quotient
// is within a few 1e-16 of tanh absolutely, not relatively for tiny |a|: it enters the gradient as
// Q_kj tanh a_k, where that is below the rounding of the sum. Measured on pe28, per point of a
// batch: 383 ns (a single call: 920 ns); with SLEEF's tanh instead of the quotient 544 ns; with
// expm1 and log (tanh |a| = -m / (2 + m), m = expm1(-2|a|)) 460 ns.
// NaN gives NaN, ±inf gives (inf, ±1), as log_cosh and std::tanh do.
PEMC_AVX2 void log_cosh_tanh(__m256d a, __m256d& lc, __m256d& t) {
  const __m256d sign = _mm256_set1_pd(-0.0), one = _mm256_set1_pd(1.0);
  const __m256d abs = _mm256_andnot_pd(sign, a);
  const __m256d e = Sleef_expd4_u10avx2(_mm256_mul_pd(_mm256_set1_pd(-2.0), abs));
  lc = _mm256_sub_pd(_mm256_add_pd(abs, Sleef_log1pd4_u10avx2(e)),
                     _mm256_set1_pd(std::numbers::ln2));
  const __m256d ta = _mm256_div_pd(_mm256_sub_pd(one, e), _mm256_add_pd(one, e));
  t = _mm256_or_pd(ta, _mm256_and_pd(sign, a));  // tanh a = sign(a) tanh |a|
}

// Unit a's log cosh added to s (in unit order), its tanh stored at t_out.
PEMC_AVX2 void add_unit(__m256d a, __m256d& s, double* t_out) {
  __m256d lc, t;
  log_cosh_tanh(a, lc, t);
  s = _mm256_add_pd(s, lc);
  _mm256_store_pd(t_out, t);
}

#undef PEMC_AVX2

// u[l] and g[l][0..d) get point x[l]'s potential and gradient.
__attribute__((target("avx2,fma"))) void evaluate_lanes(const LaneLayout& m,
                                                        const double* const* x, double* u,
                                                        double* const* g) {
  const std::size_t d = m.d, n = m.n_units;
  // The coordinates into lanes, and x'x (j = 0, 1, ...).
  __m256d sq = _mm256_setzero_pd();
  std::size_t j = 0;
  for (; j + 4 <= d; j += 4) {
    __m256d c[4] = {_mm256_loadu_pd(x[0] + j), _mm256_loadu_pd(x[1] + j),
                    _mm256_loadu_pd(x[2] + j), _mm256_loadu_pd(x[3] + j)};
    transpose4(c[0], c[1], c[2], c[3]);
    for (int i = 0; i < 4; ++i) {
      _mm256_store_pd(m.xs + (j + i) * 4, c[i]);
      sq = _mm256_fmadd_pd(c[i], c[i], sq);
    }
  }
  for (; j < d; ++j) {
    const __m256d c = _mm256_set_pd(x[3][j], x[2][j], x[1][j], x[0][j]);
    _mm256_store_pd(m.xs + j * 4, c);
    sq = _mm256_fmadd_pd(c, c, sq);
  }
  // a_k = b_k + sum_j Q_kj x_j (j = 0, 1, ...), four units at a time for independent FMA chains;
  // then sum_k log cosh a_k (k = 0, 1, ...) and tanh a_k.
  __m256d s = _mm256_setzero_pd();
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const double* q = m.q + k * d;
    __m256d a0 = _mm256_set1_pd(m.b[k]), a1 = _mm256_set1_pd(m.b[k + 1]);
    __m256d a2 = _mm256_set1_pd(m.b[k + 2]), a3 = _mm256_set1_pd(m.b[k + 3]);
    for (j = 0; j < d; ++j) {
      const __m256d c = _mm256_load_pd(m.xs + j * 4);
      a0 = _mm256_fmadd_pd(_mm256_broadcast_sd(q + j), c, a0);
      a1 = _mm256_fmadd_pd(_mm256_broadcast_sd(q + d + j), c, a1);
      a2 = _mm256_fmadd_pd(_mm256_broadcast_sd(q + 2 * d + j), c, a2);
      a3 = _mm256_fmadd_pd(_mm256_broadcast_sd(q + 3 * d + j), c, a3);
    }
    add_unit(a0, s, m.ts + k * 4);
    add_unit(a1, s, m.ts + (k + 1) * 4);
    add_unit(a2, s, m.ts + (k + 2) * 4);
    add_unit(a3, s, m.ts + (k + 3) * 4);
  }
  for (; k < n; ++k) {
    const double* q = m.q + k * d;
    __m256d a = _mm256_set1_pd(m.b[k]);
    for (j = 0; j < d; ++j)
      a = _mm256_fmadd_pd(_mm256_broadcast_sd(q + j), _mm256_load_pd(m.xs + j * 4), a);
    add_unit(a, s, m.ts + k * 4);
  }
  // grad_j = x_j - sum_k Q_kj tanh a_k (k = 0, 1, ...), four coordinates at a time.
  for (j = 0; j + 4 <= d; j += 4) {
    __m256d r[4];
    for (int i = 0; i < 4; ++i) r[i] = _mm256_load_pd(m.xs + (j + i) * 4);
    for (k = 0; k < n; ++k) {
      const __m256d t = _mm256_load_pd(m.ts + k * 4);
      const double* q = m.q + k * d + j;
      r[0] = _mm256_fnmadd_pd(_mm256_broadcast_sd(q), t, r[0]);
      r[1] = _mm256_fnmadd_pd(_mm256_broadcast_sd(q + 1), t, r[1]);
      r[2] = _mm256_fnmadd_pd(_mm256_broadcast_sd(q + 2), t, r[2]);
      r[3] = _mm256_fnmadd_pd(_mm256_broadcast_sd(q + 3), t, r[3]);
    }
    transpose4(r[0], r[1], r[2], r[3]);
    for (int l = 0; l < 4; ++l) _mm256_storeu_pd(g[l] + j, r[l]);
  }
  for (; j < d; ++j) {
    __m256d r = _mm256_load_pd(m.xs + j * 4);
    for (k = 0; k < n; ++k)
      r = _mm256_fnmadd_pd(_mm256_broadcast_sd(m.q + k * d + j), _mm256_load_pd(m.ts + k * 4), r);
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, r);
    for (int l = 0; l < 4; ++l) g[l][j] = lanes[l];
  }
  // phi = 0.5 x'x - sum_k log cosh a_k.
  _mm256_storeu_pd(u, _mm256_fmsub_pd(_mm256_set1_pd(0.5), sq, s));
}
#endif  // PEMC_BOLTZMANN_LANES4

}  // namespace

BoltzmannRelaxation::BoltzmannRelaxation(const BoltzmannMachine& machine,
                                         const BoltzmannRelaxationOptions& options)
    : options_(options) {
  check_options(options);
  const Eigen::Index n = machine.W.rows();
  if (machine.W.cols() != n || machine.b.size() != n || n < 1)
    throw NumericalError("boltzmann relaxation: W must be d_b x d_b and b must have d_b entries");
  if (!machine.b.allFinite()) throw NumericalError("boltzmann relaxation: b is not finite");
  d_ = solve_min_max_eigen_diagonal(machine.W, options.sdp);
  q_ = relaxation_factor(machine.W, d_, options.null_tol);
  b_ = machine.b;
  Matrix target = 0.5 * (machine.W + machine.W.transpose());
  target.diagonal() += d_;
  factor_residual_ = (q_ * q_.transpose() - target).cwiseAbs().maxCoeff();
  init_buffers();
}

BoltzmannRelaxation::BoltzmannRelaxation(Matrix q, Vector b,
                                         const BoltzmannRelaxationOptions& options)
    : q_(std::move(q)), b_(std::move(b)), options_(options) {
  check_options(options);
  if (q_.rows() < 1 || q_.cols() < 1 || b_.size() != q_.rows())
    throw NumericalError("boltzmann relaxation: Q must be d_b x d (d >= 1) and b must have d_b "
                         "entries (Q is " + std::to_string(q_.rows()) + "x" +
                         std::to_string(q_.cols()) + ", b has " + std::to_string(b_.size()) + ")");
  if (!q_.allFinite() || !b_.allFinite())
    throw NumericalError("boltzmann relaxation: Q or b has a non-finite entry");
  d_ = q_.rowwise().squaredNorm();
  init_buffers();
}

void BoltzmannRelaxation::init_buffers() {
  z_.resize(q_.rows());
  cache_ = std::make_unique<Cache>();
#ifdef PEMC_BOLTZMANN_LANES4
  lanes4_ = cpu_has_avx2_fma();
#endif
  if (lanes4_) {
    const auto n = static_cast<std::size_t>(q_.rows()), d = static_cast<std::size_t>(q_.cols());
    q_rows_.resize(n * d);
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
        q_rows_.data(), q_.rows(), q_.cols()) = q_;
    // Coordinates (4d), tanh (4n), padding gradients (4d), and 4 spare for 32-byte alignment.
    lane_scratch_.assign(8 * d + 4 * n + 4, 0.0);
  }
}

double BoltzmannRelaxation::potential(ConstVectorRef x) const {
  z_.noalias() = q_ * x;
  double s = 0.0;
  for (Eigen::Index k = 0; k < z_.size(); ++k) s += log_cosh(z_[k] + b_[k]);
  return 0.5 * x.squaredNorm() - s;
}

double BoltzmannRelaxation::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  z_.noalias() = q_ * x;
  double s = 0.0;
  for (Eigen::Index k = 0; k < z_.size(); ++k) {
    const double a = z_[k] + b_[k];
    s += log_cosh(a);
    z_[k] = std::tanh(a);
  }
  // grad phi = x - sum_k tanh(q_k'x + b_k) q_k = x - Q' tanh(Qx + b).
  grad = x;
  grad.noalias() -= q_.transpose() * z_;
  return 0.5 * x.squaredNorm() - s;
}

void BoltzmannRelaxation::potential_and_gradient_batch(std::span<const double> points,
                                                       std::span<double> potentials,
                                                       std::span<double> grads) const {
#ifdef PEMC_BOLTZMANN_LANES4
  if (lanes4_) {
    check_batch_shape(points, potentials, grads);
    const std::size_t m = potentials.size(), d = static_cast<std::size_t>(q_.cols());
    double* xs = lane_scratch_.data();
    xs += (32 - reinterpret_cast<std::uintptr_t>(xs) % 32) % 32 / sizeof(double);
    double* ts = xs + 4 * d;
    double* pad_grad = ts + 4 * static_cast<std::size_t>(q_.rows());
    const LaneLayout layout{q_rows_.data(), b_.data(), static_cast<std::size_t>(q_.rows()), d,
                            xs, ts};
    // Four points per pass; in the last pass, spare lanes repeat the last point (results to
    // scratch), so every point goes through the same four-lane arithmetic.
    for (std::size_t j = 0; j < m; j += 4) {
      const double* x[4];
      double* g[4];
      alignas(32) double u[4];
      lane_pointers(points, grads, j, 4, pad_grad, x, g);
      evaluate_lanes(layout, x, u, g);
      for (std::size_t l = 0; l < 4 && j + l < m; ++l) potentials[j + l] = u[l];
    }
    return;
  }
#endif
  Target::potential_and_gradient_batch(points, potentials, grads);
}

const BoltzmannTruth& BoltzmannRelaxation::boltzmann_truth() const {
  if (n_units() > options_.max_enumeration_units)
    throw NumericalError("boltzmann relaxation: d_b = " + std::to_string(n_units()) +
                         " exceeds max_enumeration_units = " +
                         std::to_string(options_.max_enumeration_units));
  std::call_once(cache_->once, [this] {
    const Matrix M = q_ * q_.transpose();
    EnumerationOptions eo;
    eo.n_threads = options_.enumeration_threads;
    BoltzmannTruth bt = enumerate_boltzmann(M, b_, eo);
    const Eigen::Index d = q_.cols();
    const int n = n_units();
    Truth t;
    // log ∫ exp(-phi) = log sum_s exp(0.5 s'Ms + s'b) + (d/2) log 2pi - d_b log 2 (see header).
    t.log_z = bt.log_z_b + 0.5 * static_cast<double>(d) * kLog2Pi -
              static_cast<double>(n) * std::numbers::ln2;
    t.mean = q_.transpose() * bt.mean_s;
    Matrix cross = q_.transpose() * bt.second_moment_s * q_;
    cross.diagonal().array() += 1.0;
    cross = (0.5 * (cross + cross.transpose())).eval();
    t.second_moment = cross.diagonal();
    t.cross_moment = cross;
    // Report Z_B for the zero-diagonal machine W_eff = offdiag(M): remove 0.5 Tr(M) = 0.5 Tr(D).
    const double trace_d = M.diagonal().sum();
    bt.log_z_b -= 0.5 * trace_d;
    t.extras["log_z_boltzmann"] = {bt.log_z_b};
    t.extras["mean_s"] = std::vector<double>(bt.mean_s.data(), bt.mean_s.data() + n);
    t.extras["trace_d"] = {trace_d};
    cache_->machine = std::move(bt);
    cache_->truth = std::move(t);
  });
  return cache_->machine;
}

Truth BoltzmannRelaxation::truth() const {
  if (n_units() > options_.max_enumeration_units) return {};
  boltzmann_truth();
  return cache_->truth;
}

Vector rao_blackwell_mean_s(const BoltzmannRelaxation& target, ConstVectorRef x) {
  return (target.q() * x + target.b()).array().tanh().matrix();
}

std::shared_ptr<BoltzmannRelaxation> make_boltzmann(const pemc::v1::BoltzmannTarget& config) {
  const bool has_w = !config.weights_file().empty();
  const bool has_q = !config.q_file().empty();
  const bool has_gen = config.has_generated();
  if (int(has_w) + int(has_q) + int(has_gen) != 1)
    throw ConfigError("target.boltzmann: set exactly one of weights_file (with bias_file), q_file "
                      "(with bias_file) or generated");
  if ((has_w || has_q) && config.bias_file().empty())
    throw ConfigError(std::string("target.boltzmann.bias_file: required with ") +
                      (has_w ? "weights_file" : "q_file"));
  if (has_gen && !config.bias_file().empty())
    throw ConfigError("target.boltzmann.bias_file: not used with generated (b is generated)");

  BoltzmannRelaxationOptions options;
  if (config.max_enumeration_units() < 0 || config.max_enumeration_units() > kMaxEnumerationUnits)
    throw ConfigError("target.boltzmann.max_enumeration_units: must be in [0, " +
                      std::to_string(kMaxEnumerationUnits) + "] (0 = default 30), got " +
                      std::to_string(config.max_enumeration_units()));
  if (config.max_enumeration_units() > 0)
    options.max_enumeration_units = config.max_enumeration_units();

  if (has_w)
    return std::make_shared<BoltzmannRelaxation>(
        load_boltzmann_machine(config.weights_file(), config.bias_file()), options);
  if (has_q) {
    const Matrix b_row = read_number_matrix(config.bias_file(), 1, "boltzmann bias file");
    const Vector b = b_row.row(0).transpose();
    Matrix q = read_number_matrix(config.q_file(), b.size(), "boltzmann Q file");
    return std::make_shared<BoltzmannRelaxation>(std::move(q), b, options);
  }
  const auto& g = config.generated();
  if (g.n_units() < 2)
    throw ConfigError("target.boltzmann.generated.n_units: must be >= 2, got " +
                      std::to_string(g.n_units()));
  const auto scale = [](double v, double fallback, const char* field) {
    if (!std::isfinite(v) || v < 0)
      throw ConfigError(std::string("target.boltzmann.generated.") + field +
                        ": must be finite and >= 0 (0 = default)");
    return v == 0.0 ? fallback : v;
  };
  const double hi = scale(g.weight_scale_hi(), 6.0, "weight_scale_hi");
  const double lo = scale(g.weight_scale_lo(), 2.0, "weight_scale_lo");
  const double bs = scale(g.bias_scale(), 0.1, "bias_scale");
  return std::make_shared<BoltzmannRelaxation>(
      generate_boltzmann_machine(g.seed(), g.n_units(), hi, lo, bs), options);
}

}  // namespace pemc::targets
