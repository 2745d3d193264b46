#include "densities/gaussian.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/numerics.hpp"

namespace pemc::densities {
namespace {

// kShared's scratch, one per thread: a shared object must not write to its members.
Vector& thread_scratch(Eigen::Index d) {
  thread_local Vector z;
  if (z.size() != d) z.resize(d);
  return z;
}

}  // namespace

Gaussian::Gaussian(Vector mean, Matrix lower, Evaluation evaluation)
    : mean_(std::move(mean)), chol_(std::move(lower)), evaluation_(evaluation) {
  const auto d = mean_.size();
  chol_.triangularView<Eigen::StrictlyUpper>().setZero();
  diagonal_ = chol_.isDiagonal(0.0);
  sd_ = chol_.diagonal();
  const double log_2pi_term = 0.5 * static_cast<double>(d) * kLog2Pi;
  if (evaluation_ == Evaluation::kShared) {
    double log_det = 0.0;  // summed in index order
    for (Eigen::Index i = 0; i < d; ++i) log_det += std::log(sd_[i]);
    log_norm_ = log_det + log_2pi_term;
  } else {
    log_norm_ = log_2pi_term + chol_.diagonal().array().log().sum();
    prepare_fast();
  }
}

Gaussian Gaussian::from_cholesky(Vector mean, Matrix lower, Evaluation evaluation) {
  const auto d = mean.size();
  if (d < 1) throw NumericalError("Gaussian: the mean is empty");
  if (lower.rows() != d || lower.cols() != d)
    throw NumericalError("Gaussian: the Cholesky factor is " + std::to_string(lower.rows()) +
                         " x " + std::to_string(lower.cols()) + ", expected " + std::to_string(d) +
                         " x " + std::to_string(d));
  if (!mean.allFinite()) throw NumericalError("Gaussian: the mean has a non-finite entry");
  for (Eigen::Index j = 0; j < d; ++j) {
    for (Eigen::Index i = j; i < d; ++i) {
      if (!std::isfinite(lower(i, j)))
        throw NumericalError("Gaussian: Cholesky factor entry (" + std::to_string(i) + ", " +
                             std::to_string(j) + ") is not finite");
    }
    if (!(lower(j, j) > 0.0))
      throw NumericalError("Gaussian: Cholesky factor diagonal entry " + std::to_string(j) +
                           " is " + std::to_string(lower(j, j)) + " (must be > 0)");
  }
  return Gaussian(std::move(mean), std::move(lower), evaluation);
}

Gaussian Gaussian::from_covariance(Vector mean, const Matrix& covariance, Evaluation evaluation) {
  const auto d = mean.size();
  if (covariance.rows() != d || covariance.cols() != d)
    throw NumericalError("Gaussian: the covariance is " + std::to_string(covariance.rows()) +
                         " x " + std::to_string(covariance.cols()) + ", expected " +
                         std::to_string(d) + " x " + std::to_string(d));
  if (!covariance.allFinite())
    throw NumericalError("Gaussian: the covariance has a non-finite entry");
  const double scale = std::max(1.0, covariance.cwiseAbs().maxCoeff());
  for (Eigen::Index i = 0; i < d; ++i)
    for (Eigen::Index j = 0; j < i; ++j)
      if (std::fabs(covariance(i, j) - covariance(j, i)) > 1e-9 * scale)
        throw NumericalError("Gaussian: the covariance is not symmetric at (" +
                             std::to_string(i) + ", " + std::to_string(j) + ")");
  Eigen::LLT<Matrix> llt(0.5 * (covariance + covariance.transpose()));
  if (llt.info() != Eigen::Success)
    throw NumericalError("Gaussian: the covariance is not positive definite");
  return from_cholesky(std::move(mean), llt.matrixL(), evaluation);
}

Gaussian Gaussian::from_variances(Vector mean, const Vector& variance, Evaluation evaluation) {
  if (variance.size() != mean.size())
    throw NumericalError("Gaussian: the variance has " + std::to_string(variance.size()) +
                         " entries, the mean " + std::to_string(mean.size()));
  for (Eigen::Index i = 0; i < variance.size(); ++i)
    if (!(variance[i] > 0.0) || !std::isfinite(variance[i]))
      throw NumericalError("Gaussian: variance entry " + std::to_string(i) + " is " +
                           std::to_string(variance[i]) + " (must be finite and > 0)");
  Vector sd(variance.size());
  for (Eigen::Index i = 0; i < variance.size(); ++i) sd[i] = std::sqrt(variance[i]);
  return from_cholesky(std::move(mean), sd.asDiagonal().toDenseMatrix(), evaluation);
}

Gaussian Gaussian::with_evaluation(Evaluation evaluation) const {
  return Gaussian(mean_, chol_, evaluation);
}

std::shared_ptr<const Density> Gaussian::copy_with_evaluation(Evaluation evaluation) const {
  return std::make_shared<const Gaussian>(with_evaluation(evaluation));
}

std::string Gaussian::describe() const {
  return "Gaussian (d = " + std::to_string(dim()) +
         (diagonal_ ? ", diagonal covariance)" : ", dense covariance)");
}

Matrix Gaussian::covariance() const {
  if (diagonal_) return sd_.array().square().matrix().asDiagonal();
  return chol_ * chol_.transpose();
}

double Gaussian::shared_whitened(ConstVectorRef x, Vector& z) const {
  z = x - mean_;
  if (diagonal_) {
    z.array() /= sd_.array();
  } else {
    chol_.triangularView<Eigen::Lower>().solveInPlace(z);
  }
  return 0.5 * z.squaredNorm() + log_norm_;
}

double Gaussian::shared_potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  Vector& z = thread_scratch(x.size());
  const double value = shared_whitened(x, z);  // z = L^{-1}(x - mu)
  if (diagonal_) {
    grad = z.array() / sd_.array();
  } else {
    grad = z;
    chol_.triangularView<Eigen::Lower>().transpose().solveInPlace(grad);
  }
  return value;
}

double Gaussian::potential(ConstVectorRef x) const {
  if (evaluation_ == Evaluation::kShared) return shared_whitened(x, thread_scratch(x.size()));
  return fast_potential(x);
}

double Gaussian::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  if (evaluation_ == Evaluation::kShared) return shared_potential_and_gradient(x, grad);
  return fast_potential_and_gradient(x, grad);
}

double Gaussian::potential_and_mixed_gradient(std::span<const double> x,
                                              const MixedGradient& m) const {
  check_mixed_gradient_spans(x, m);
  if (evaluation_ == Evaluation::kFast) return fast_potential_and_mixed_gradient(x, m);
  // kShared: not on any hot path; the mixing as the plain Eigen expression.
  const auto n = static_cast<Eigen::Index>(x.size());
  Vector grad_psi(n);
  const double value = shared_potential_and_gradient(Eigen::Map<const Vector>(x.data(), n), grad_psi);
  if (!m.grad_psi.empty()) Eigen::Map<Vector>(m.grad_psi.data(), n) = grad_psi;
  Eigen::Map<Vector>(m.out.data(), n).noalias() =
      m.w_phi * Eigen::Map<const Vector>(m.grad_phi.data(), n) + m.w_psi * grad_psi;
  return value;
}

void Gaussian::sample(rng::Stream& stream, VectorRef out) const {
  if (evaluation_ == Evaluation::kFast) {
    stream.fill_normal(r_);
    out.noalias() = mean_ + chol_.triangularView<Eigen::Lower>() * r_;
    return;
  }
  Vector& z = thread_scratch(mean_.size());
  stream.fill_normal(z);
  if (diagonal_) {
    out = mean_.array() + sd_.array() * z.array();
  } else {
    out = mean_ + chol_.triangularView<Eigen::Lower>() * z;
  }
}

}  // namespace pemc::densities
