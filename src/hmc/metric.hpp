#pragma once
// Euclidean metric of the kinetic energy K(p) = 0.5 p' M^{-1} p, stored by its inverse M^{-1}
// (what adaptation estimates: the posterior covariance). Unit, diagonal or dense.
#include "core/types.hpp"
#include "rng/stream.hpp"

namespace pemc::hmc {

enum class MetricKind { kUnit, kDiagonal, kDense };

class Metric {
 public:
  static Metric unit(int dim);
  static Metric diagonal(Vector inverse_diagonal);  // entries > 0
  static Metric dense(const Matrix& inverse);       // symmetric positive definite

  MetricKind kind() const { return kind_; }
  int dim() const { return dim_; }
  // 0.5 p' M^{-1} p
  double kinetic(ConstVectorRef p) const;
  // v = M^{-1} p = dK/dp. Inline: the leapfrog calls it twice per step.
  void velocity(ConstVectorRef p, VectorRef v) const {
    switch (kind_) {
      case MetricKind::kUnit: v = p; break;
      case MetricKind::kDiagonal: v = inverse_diagonal_.cwiseProduct(p); break;
      case MetricKind::kDense: v.noalias() = inverse_dense_ * p; break;
    }
  }
  // The same on the coordinates [begin, begin + size) only; the others are not touched. A dense
  // metric couples all coordinates: it takes the whole vector only (NumericalError otherwise).
  void velocity(ConstVectorRef p, VectorRef v, Eigen::Index begin, Eigen::Index size) const {
    switch (kind_) {
      case MetricKind::kUnit: v.segment(begin, size) = p.segment(begin, size); break;
      case MetricKind::kDiagonal:
        v.segment(begin, size) =
            inverse_diagonal_.segment(begin, size).cwiseProduct(p.segment(begin, size));
        break;
      case MetricKind::kDense:
        if (begin != 0 || size != dim_) dense_segment_error();
        v.noalias() = inverse_dense_ * p;
        break;
    }
  }
  // p ~ N(0, M)
  void sample_momentum(rng::Stream& stream, VectorRef p) const;
  // p[begin, begin + size) ~ N(0, M) restricted to those coordinates (size normals from `stream`
  // in order); the others are not touched. Unit or diagonal metric only (NumericalError).
  void sample_momentum(rng::Stream& stream, VectorRef p, Eigen::Index begin,
                       Eigen::Index size) const;

  const Vector& inverse_diagonal() const { return inverse_diagonal_; }  // kDiagonal
  const Vector& sqrt_diagonal() const { return sqrt_diagonal_; }        // kDiagonal: sqrt(M)
  const Matrix& inverse_dense() const { return inverse_dense_; }        // kDense
  Vector inverse_diagonal_or_dense_diagonal() const;

 private:
  [[noreturn]] static void dense_segment_error();
  MetricKind kind_ = MetricKind::kUnit;
  int dim_ = 0;
  Vector inverse_diagonal_;
  Vector sqrt_diagonal_;  // sqrt(M) for momentum draws (diagonal)
  Matrix inverse_dense_;
  Matrix chol_inverse_;   // L with L L' = M^{-1}; p = L^{-T} z has covariance M
  mutable Vector z_;      // scratch (dense): momentum draws and kinetic energy
};

}  // namespace pemc::hmc
