#include "hmc/metric.hpp"

#include "core/error.hpp"

namespace pemc::hmc {

Metric Metric::unit(int dim) {
  Metric m;
  m.kind_ = MetricKind::kUnit;
  m.dim_ = dim;
  return m;
}

Metric Metric::diagonal(Vector inverse_diagonal) {
  if ((inverse_diagonal.array() <= 0).any() || !inverse_diagonal.allFinite())
    throw NumericalError("diagonal metric: inverse metric entries must be finite and > 0");
  Metric m;
  m.kind_ = MetricKind::kDiagonal;
  m.dim_ = static_cast<int>(inverse_diagonal.size());
  m.sqrt_diagonal_ = inverse_diagonal.array().rsqrt();
  m.inverse_diagonal_ = std::move(inverse_diagonal);
  return m;
}

Metric Metric::dense(const Matrix& inverse) {
  // LLT reads one triangle only: check symmetry explicitly, since velocity() uses the full matrix.
  if (inverse.rows() != inverse.cols() || !inverse.allFinite() ||
      !inverse.isApprox(inverse.transpose(), 1e-12))
    throw NumericalError("dense metric: inverse metric is not a finite symmetric matrix");
  Eigen::LLT<Matrix> llt(inverse);
  if (llt.info() != Eigen::Success)
    throw NumericalError("dense metric: inverse metric is not symmetric positive definite");
  Metric m;
  m.kind_ = MetricKind::kDense;
  m.dim_ = static_cast<int>(inverse.rows());
  m.inverse_dense_ = inverse;
  m.chol_inverse_ = llt.matrixL();
  m.z_.resize(m.dim_);
  return m;
}

double Metric::kinetic(ConstVectorRef p) const {
  switch (kind_) {
    case MetricKind::kUnit: return 0.5 * p.squaredNorm();
    case MetricKind::kDiagonal: return 0.5 * p.cwiseAbs2().dot(inverse_diagonal_);
    case MetricKind::kDense:
      z_.noalias() = inverse_dense_ * p;  // scratch: no temporary on the heap
      return 0.5 * p.dot(z_);
  }
  return 0.0;
}

void Metric::sample_momentum(rng::Stream& stream, VectorRef p) const {
  switch (kind_) {
    case MetricKind::kUnit: stream.fill_normal(p); break;
    case MetricKind::kDiagonal:
      stream.fill_normal(p);
      p.array() *= sqrt_diagonal_.array();
      break;
    case MetricKind::kDense:
      stream.fill_normal(z_);
      // Solve L' p = z: Cov(p) = L^{-T} L^{-1} = (L L')^{-1} = M.
      p = chol_inverse_.transpose().triangularView<Eigen::Upper>().solve(z_);
      break;
  }
}

void Metric::sample_momentum(rng::Stream& stream, VectorRef p, Eigen::Index begin,
                             Eigen::Index size) const {
  switch (kind_) {
    case MetricKind::kUnit: stream.fill_normal(p.segment(begin, size)); break;
    case MetricKind::kDiagonal:
      stream.fill_normal(p.segment(begin, size));
      p.segment(begin, size).array() *= sqrt_diagonal_.segment(begin, size).array();
      break;
    case MetricKind::kDense: dense_segment_error();
  }
}

void Metric::dense_segment_error() {
  throw NumericalError(
      "dense metric: it couples all coordinates, so it cannot act on a subset of them (a chain "
      "whose pseudo-samples are spread over several ranks needs a unit or diagonal metric)");
}

Vector Metric::inverse_diagonal_or_dense_diagonal() const {
  switch (kind_) {
    case MetricKind::kUnit: return Vector::Ones(dim_);
    case MetricKind::kDiagonal: return inverse_diagonal_;
    case MetricKind::kDense: return inverse_dense_.diagonal();
  }
  return {};
}

}  // namespace pemc::hmc
