#include "targets/boltzmann.hpp"

#include <cmath>
#include <numbers>
#include <string>

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
    const Matrix b_row = load_matrix_with_rows(config.bias_file(), 1, "boltzmann bias file");
    const Vector b = b_row.row(0).transpose();
    Matrix q = load_matrix_with_rows(config.q_file(), b.size(), "boltzmann Q file");
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
