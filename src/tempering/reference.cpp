#include "tempering/reference.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/numerics.hpp"

namespace pemc::tempering {

GaussianReference GaussianReference::diagonal(Vector mean, const Vector& variance) {
  if (variance.size() != mean.size())
    throw ConfigError("reference: variance has " + std::to_string(variance.size()) +
                      " entries, mean has " + std::to_string(mean.size()));
  GaussianReference r;
  r.mean_ = std::move(mean);
  r.sd_.resize(variance.size());
  double log_det = 0.0;
  for (Eigen::Index i = 0; i < variance.size(); ++i) {
    if (!(variance[i] > 0.0) || !std::isfinite(variance[i]))
      throw ConfigError("reference: variance[" + std::to_string(i) + "] must be finite and > 0");
    r.sd_[i] = std::sqrt(variance[i]);
    log_det += std::log(r.sd_[i]);
  }
  r.log_norm_ = log_det + 0.5 * static_cast<double>(r.mean_.size()) * kLog2Pi;
  return r;
}

GaussianReference GaussianReference::cholesky(Vector mean, const Matrix& lower) {
  const auto d = mean.size();
  if (lower.rows() != d || lower.cols() != d)
    throw ConfigError("reference: Cholesky factor is " + std::to_string(lower.rows()) + "x" +
                      std::to_string(lower.cols()) + ", expected " + std::to_string(d) + "x" +
                      std::to_string(d));
  GaussianReference r;
  r.mean_ = std::move(mean);
  r.dense_ = true;
  r.lower_ = lower.triangularView<Eigen::Lower>();
  double log_det = 0.0;
  for (Eigen::Index i = 0; i < d; ++i) {
    if (!(r.lower_(i, i) > 0.0) || !std::isfinite(r.lower_(i, i)))
      throw ConfigError("reference: Cholesky diagonal entry " + std::to_string(i) +
                        " must be finite and > 0");
    log_det += std::log(r.lower_(i, i));
  }
  if (!r.lower_.allFinite()) throw ConfigError("reference: Cholesky factor has non-finite entries");
  r.log_norm_ = log_det + 0.5 * static_cast<double>(d) * kLog2Pi;
  return r;
}

Matrix GaussianReference::covariance() const {
  if (dense_) return lower_ * lower_.transpose();
  return sd_.array().square().matrix().asDiagonal();
}

namespace {
// Per-thread scratch: one reference may be shared by threads (the in-process test groups), so a
// member scratch vector would be a data race; this keeps the hot path free of allocation.
Vector& scratch(Eigen::Index d) {
  thread_local Vector z;
  if (z.size() != d) z.resize(d);
  return z;
}
}  // namespace

double GaussianReference::whitened(ConstVectorRef x, Vector& z) const {
  z = x - mean_;
  if (dense_) {
    lower_.triangularView<Eigen::Lower>().solveInPlace(z);
  } else {
    z.array() /= sd_.array();
  }
  return 0.5 * z.squaredNorm() + log_norm_;
}

double GaussianReference::psi(ConstVectorRef x) const { return whitened(x, scratch(x.size())); }

double GaussianReference::psi_and_gradient(ConstVectorRef x, VectorRef grad) const {
  Vector& z = scratch(x.size());
  const double value = whitened(x, z);  // z = L^{-1}(x - mean)
  if (dense_) {
    grad = z;
    lower_.triangularView<Eigen::Lower>().transpose().solveInPlace(grad);
  } else {
    grad = z.array() / sd_.array();
  }
  return value;
}

void GaussianReference::sample(rng::Stream& stream, VectorRef x) const {
  Vector& z = scratch(mean_.size());
  stream.fill_normal(z);
  if (dense_) {
    x = mean_ + lower_.triangularView<Eigen::Lower>() * z;
  } else {
    x = mean_.array() + sd_.array() * z.array();
  }
}

}  // namespace pemc::tempering
