#include "extended/base_density.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PEMC_BASE_AVX2 1
#endif

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "targets/boltzmann_machine.hpp"

namespace pemc::extended {
namespace {

#ifdef PEMC_BASE_AVX2
// y = A x for a triangular A, column-major and zero-padded to ld x ld (ld a multiple of 4; x has
// zero padding too): lower (row block v uses column blocks 0..v) or upper (v..ld/4 - 1). Each block
// of 4 rows is an independent dot product over whole 4-column blocks with four accumulators, so
// there is neither a remainder loop nor a long dependency chain.
template <bool kLower>
__attribute__((target("avx2,fma"))) void triangular_product(const double* a, int ld,
                                                            const double* x, double* y) {
  for (int v = 0; v < ld; v += 4) {
    const int k0 = kLower ? 0 : v;
    const int k1 = kLower ? v + 4 : ld;
    __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
    __m256d acc2 = _mm256_setzero_pd(), acc3 = _mm256_setzero_pd();
    for (int k = k0; k < k1; k += 4) {
      const double* c = a + static_cast<std::ptrdiff_t>(k) * ld + v;
      acc0 = _mm256_fmadd_pd(_mm256_loadu_pd(c), _mm256_broadcast_sd(x + k), acc0);
      acc1 = _mm256_fmadd_pd(_mm256_loadu_pd(c + ld), _mm256_broadcast_sd(x + k + 1), acc1);
      acc2 = _mm256_fmadd_pd(_mm256_loadu_pd(c + 2 * ld), _mm256_broadcast_sd(x + k + 2), acc2);
      acc3 = _mm256_fmadd_pd(_mm256_loadu_pd(c + 3 * ld), _mm256_broadcast_sd(x + k + 3), acc3);
    }
    _mm256_storeu_pd(y + v, _mm256_add_pd(_mm256_add_pd(acc0, acc1), _mm256_add_pd(acc2, acc3)));
  }
}

// The same product for ld = 4 NV <= 32 with the column loop outside: each x_k is broadcast once
// and the NV row blocks accumulate in registers (two sets, even and odd columns, to halve the
// dependency chains). Fully unrolled for each NV.
template <int NV, bool kLower>
__attribute__((target("avx2,fma"))) void triangular_product_fixed(const double* a,
                                                                  const double* x, double* y) {
  constexpr int ld = 4 * NV;
  __m256d acc0[NV], acc1[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) acc0[v] = acc1[v] = _mm256_setzero_pd();
#pragma GCC unroll 8
  for (int kb = 0; kb < NV; ++kb) {
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      const int k = 4 * kb + c;
      const __m256d xk = _mm256_broadcast_sd(x + k);
      const double* col = a + k * ld;
      __m256d* acc = (c & 1) ? acc1 : acc0;
#pragma GCC unroll 8
      for (int v = kLower ? kb : 0; v < (kLower ? NV : kb + 1); ++v)
        acc[v] = _mm256_fmadd_pd(_mm256_loadu_pd(col + 4 * v), xk, acc[v]);
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) _mm256_storeu_pd(y + 4 * v, _mm256_add_pd(acc0[v], acc1[v]));
}

template <bool kLower>
void triangular_product_any(const double* a, int ld, const double* x, double* y) {
  switch (ld / 4) {
    case 1: return triangular_product_fixed<1, kLower>(a, x, y);
    case 2: return triangular_product_fixed<2, kLower>(a, x, y);
    case 3: return triangular_product_fixed<3, kLower>(a, x, y);
    case 4: return triangular_product_fixed<4, kLower>(a, x, y);
    case 5: return triangular_product_fixed<5, kLower>(a, x, y);
    case 6: return triangular_product_fixed<6, kLower>(a, x, y);
    case 7: return triangular_product_fixed<7, kLower>(a, x, y);
    case 8: return triangular_product_fixed<8, kLower>(a, x, y);
    default: return triangular_product<kLower>(a, ld, x, y);
  }
}

bool cpu_has_avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

}  // namespace

GaussianBase::GaussianBase(Vector mean, Matrix lower)
    : mean_(std::move(mean)), chol_(std::move(lower)), r_(mean_.size()) {
  const auto d = mean_.size();
  chol_.triangularView<Eigen::StrictlyUpper>().setZero();
  chol_t_ = chol_.transpose();
  inv_diag_ = chol_.diagonal().cwiseInverse();
  diagonal_ = chol_.isDiagonal(0.0);
  log_norm_ = 0.5 * static_cast<double>(d) * kLog2Pi + chol_.diagonal().array().log().sum();
#ifdef PEMC_BASE_AVX2
  if (!diagonal_ && d >= 4 && cpu_has_avx2_fma()) {
    // T = L^{-1} by substitution on the identity; cond_1(L) = ||L||_1 ||T||_1 (max column sums);
    // the products' error relative to substitution is O(d eps cond(L)).
    const Matrix t = chol_.triangularView<Eigen::Lower>().solve(Matrix::Identity(d, d));
    const double cond = chol_.cwiseAbs().colwise().sum().maxCoeff() *
                        t.cwiseAbs().colwise().sum().maxCoeff();
    const double error_bound = static_cast<double>(d) * std::numeric_limits<double>::epsilon() * cond;
    if (t.allFinite() && error_bound <= 1e-10) {
      products_ = true;
      padded_ = static_cast<int>((d + 3) / 4 * 4);
      inv_chol_ = Matrix::Zero(padded_, padded_);
      inv_chol_.topLeftCorner(d, d) = t.triangularView<Eigen::Lower>();
      inv_chol_t_ = Matrix::Zero(padded_, padded_);
      inv_chol_t_.topLeftCorner(d, d) = t.transpose().triangularView<Eigen::Upper>();
      y_pad_ = Vector::Zero(padded_);
      r_pad_ = Vector::Zero(padded_);
      g_pad_ = Vector::Zero(padded_);
    }
  }
#endif
}

GaussianBase GaussianBase::from_cholesky(Vector mean, Matrix lower) {
  const auto d = mean.size();
  if (d < 1) throw NumericalError("Gaussian base: the mean is empty");
  if (lower.rows() != d || lower.cols() != d)
    throw NumericalError("Gaussian base: the Cholesky factor is " + std::to_string(lower.rows()) +
                         " x " + std::to_string(lower.cols()) + ", expected " + std::to_string(d) +
                         " x " + std::to_string(d));
  if (!mean.allFinite()) throw NumericalError("Gaussian base: the mean has a non-finite entry");
  for (Eigen::Index j = 0; j < d; ++j) {
    for (Eigen::Index i = j; i < d; ++i) {
      if (!std::isfinite(lower(i, j)))
        throw NumericalError("Gaussian base: Cholesky factor entry (" + std::to_string(i) + ", " +
                             std::to_string(j) + ") is not finite");
    }
    if (!(lower(j, j) > 0.0))
      throw NumericalError("Gaussian base: Cholesky factor diagonal entry " + std::to_string(j) +
                           " is " + std::to_string(lower(j, j)) + " (must be > 0)");
  }
  return GaussianBase(std::move(mean), std::move(lower));
}

GaussianBase GaussianBase::from_covariance(Vector mean, const Matrix& covariance) {
  const auto d = mean.size();
  if (covariance.rows() != d || covariance.cols() != d)
    throw NumericalError("Gaussian base: the covariance is " + std::to_string(covariance.rows()) +
                         " x " + std::to_string(covariance.cols()) + ", expected " +
                         std::to_string(d) + " x " + std::to_string(d));
  if (!covariance.allFinite())
    throw NumericalError("Gaussian base: the covariance has a non-finite entry");
  const double scale = std::max(1.0, covariance.cwiseAbs().maxCoeff());
  for (Eigen::Index i = 0; i < d; ++i)
    for (Eigen::Index j = 0; j < i; ++j)
      if (std::fabs(covariance(i, j) - covariance(j, i)) > 1e-9 * scale)
        throw NumericalError("Gaussian base: the covariance is not symmetric at (" +
                             std::to_string(i) + ", " + std::to_string(j) + ")");
  Eigen::LLT<Matrix> llt(0.5 * (covariance + covariance.transpose()));
  if (llt.info() != Eigen::Success)
    throw NumericalError("Gaussian base: the covariance is not positive definite");
  return from_cholesky(std::move(mean), llt.matrixL());
}

void GaussianBase::forward_solve(Vector& rv) const {
  const int d = static_cast<int>(rv.size());
  double* __restrict r = rv.data();
  const double* __restrict inv = inv_diag_.data();
  if (diagonal_) {
    for (int i = 0; i < d; ++i) r[i] *= inv[i];
    return;
  }
  const double* l = chol_.data();
  int j = 0;
  for (; j + 4 <= d; j += 4) {
    const double* __restrict c0 = l + static_cast<std::ptrdiff_t>(j) * d;
    const double* __restrict c1 = c0 + d;
    const double* __restrict c2 = c1 + d;
    const double* __restrict c3 = c2 + d;
    const double r0 = (r[j] *= inv[j]);
    const double r1 = (r[j + 1] = (r[j + 1] - r0 * c0[j + 1]) * inv[j + 1]);
    const double r2 = (r[j + 2] = (r[j + 2] - r0 * c0[j + 2] - r1 * c1[j + 2]) * inv[j + 2]);
    const double r3 =
        (r[j + 3] = (r[j + 3] - r0 * c0[j + 3] - r1 * c1[j + 3] - r2 * c2[j + 3]) * inv[j + 3]);
    for (int i = j + 4; i < d; ++i) r[i] -= (r0 * c0[i] + r1 * c1[i]) + (r2 * c2[i] + r3 * c3[i]);
  }
  for (; j < d; ++j) {
    const double rj = (r[j] *= inv[j]);
    const double* __restrict c = l + static_cast<std::ptrdiff_t>(j) * d;
    for (int i = j + 1; i < d; ++i) r[i] -= rj * c[i];
  }
}

void GaussianBase::backward_solve(Vector& rv) const {
  const int d = static_cast<int>(rv.size());
  double* __restrict r = rv.data();
  const double* __restrict inv = inv_diag_.data();
  if (diagonal_) {
    for (int i = 0; i < d; ++i) r[i] *= inv[i];
    return;
  }
  // Solve L' g = r: U = L' is upper triangular; columns from the last one, four at a time.
  const double* u = chol_t_.data();
  int i = d - 1;
  for (; i - 3 >= 0; i -= 4) {
    const double* __restrict c3 = u + static_cast<std::ptrdiff_t>(i) * d;
    const double* __restrict c2 = c3 - d;
    const double* __restrict c1 = c2 - d;
    const double* __restrict c0 = c1 - d;
    const double g3 = (r[i] *= inv[i]);
    const double g2 = (r[i - 1] = (r[i - 1] - g3 * c3[i - 1]) * inv[i - 1]);
    const double g1 = (r[i - 2] = (r[i - 2] - g3 * c3[i - 2] - g2 * c2[i - 2]) * inv[i - 2]);
    const double g0 =
        (r[i - 3] = (r[i - 3] - g3 * c3[i - 3] - g2 * c2[i - 3] - g1 * c1[i - 3]) * inv[i - 3]);
    for (int k = 0; k < i - 3; ++k) r[k] -= (g3 * c3[k] + g2 * c2[k]) + (g1 * c1[k] + g0 * c0[k]);
  }
  for (; i >= 0; --i) {
    const double gi = (r[i] *= inv[i]);
    const double* __restrict c = u + static_cast<std::ptrdiff_t>(i) * d;
    for (int k = 0; k < i; ++k) r[k] -= gi * c[k];
  }
}

double GaussianBase::potential(ConstVectorRef x) const {
#ifdef PEMC_BASE_AVX2
  if (products_) {
    const int d = dim();
    y_pad_.head(d).noalias() = x - mean_;
    triangular_product_any<true>(inv_chol_.data(), padded_, y_pad_.data(), r_pad_.data());
    return 0.5 * r_pad_.squaredNorm() + log_norm_;  // padding rows are zero
  }
#endif
  r_.noalias() = x - mean_;
  forward_solve(r_);
  return 0.5 * r_.squaredNorm() + log_norm_;
}

double GaussianBase::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
#ifdef PEMC_BASE_AVX2
  if (products_) {
    const int d = dim();
    y_pad_.head(d).noalias() = x - mean_;
    triangular_product_any<true>(inv_chol_.data(), padded_, y_pad_.data(), r_pad_.data());
    const double value = 0.5 * r_pad_.squaredNorm() + log_norm_;
    triangular_product_any<false>(inv_chol_t_.data(), padded_, r_pad_.data(), g_pad_.data());
    grad = g_pad_.head(d);
    return value;
  }
#endif
  r_.noalias() = x - mean_;
  forward_solve(r_);
  const double value = 0.5 * r_.squaredNorm() + log_norm_;
  backward_solve(r_);
  grad = r_;
  return value;
}

void GaussianBase::sample(rng::Stream& stream, VectorRef out) const {
  stream.fill_normal(r_);
  out.noalias() = mean_ + chol_.triangularView<Eigen::Lower>() * r_;
}

Vector read_numbers(const std::filesystem::path& file, Eigen::Index count,
                    const std::string& what) {
  const Matrix m = targets::load_matrix_with_rows(file, 1, what.c_str());
  if (m.size() != count)
    throw DataError(what + " " + file.string() + ": expected " + std::to_string(count) +
                    " numbers, found " + std::to_string(m.size()));
  return Eigen::Map<const Vector>(m.data(), count);
}

}  // namespace pemc::extended
