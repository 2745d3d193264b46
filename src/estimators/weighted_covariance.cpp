#include "estimators/weighted_covariance.hpp"

#include <cmath>
#include <cstddef>

#include "core/cpu_features.hpp"
#include "core/numerics.hpp"
#include "estimators/weighted_moments.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace pemc::estimators {

void WeightedCovariance::resize(int d) {
  shift_ = 0.0;
  sum_w_ = sum_w2_ = 0.0;
  sum_x_ = Vector::Zero(d);
  sum_xx_ = Matrix::Zero(d, d);
}

void WeightedCovariance::rescale_to(double log_w) {
  rebase_weighted_sums(log_w, shift_, sum_w_, sum_w2_, sum_x_, sum_xx_);
}

namespace {
#if defined(__x86_64__) && defined(__GNUC__)
// sum_x += w x and the lower triangle of sum_xx += w x x', entry by entry exactly as Eigen's
// `sum_x += w * x` and selfadjointView<Lower>().rankUpdate(x, w) round them (sum_x_j + w x_j;
// sum_xx_ji + (w x_i) x_j: a product, then a sum; the "avx" target has no fused multiply-add to
// contract them into), without Eigen's per-column set-up, which costs more than the arithmetic at
// d ~ 30 (this runs twice per transition of every tempering chain).
__attribute__((target("avx"))) void weighted_rank1_avx(const double* x, double w, int d,
                                                       double* sum_x, double* sum_xx) {
  const __m256d wv = _mm256_set1_pd(w);
  int j = 0;
  for (; j + 4 <= d; j += 4)
    _mm256_storeu_pd(sum_x + j, _mm256_add_pd(_mm256_loadu_pd(sum_x + j),
                                              _mm256_mul_pd(wv, _mm256_loadu_pd(x + j))));
  for (; j < d; ++j) sum_x[j] = sum_x[j] + w * x[j];
  for (int i = 0; i < d; ++i) {
    const double s = w * x[i];
    const __m256d sv = _mm256_set1_pd(s);
    double* col = sum_xx + static_cast<std::ptrdiff_t>(i) * d;
    j = i;
    for (; j + 4 <= d; j += 4)
      _mm256_storeu_pd(col + j, _mm256_add_pd(_mm256_loadu_pd(col + j),
                                              _mm256_mul_pd(sv, _mm256_loadu_pd(x + j))));
    for (; j < d; ++j) col[j] = col[j] + s * x[j];
  }
}

const bool kAvx = cpu_has_avx();
#endif
}  // namespace

void WeightedCovariance::add(ConstVectorRef x, double log_w) {
  if (log_w == -kInf) return;
  rescale_to(log_w);
  const double w = std::exp(log_w - shift_);
  sum_w_ += w;
  sum_w2_ += w * w;
#if defined(__x86_64__) && defined(__GNUC__)
  if (kAvx) {
    weighted_rank1_avx(x.data(), w, static_cast<int>(x.size()), sum_x_.data(), sum_xx_.data());
    return;
  }
#endif
  sum_x_.noalias() += w * x;
  sum_xx_.selfadjointView<Eigen::Lower>().rankUpdate(x, w);
}

void WeightedCovariance::merge(const WeightedCovariance& o) {
  if (o.sum_w_ == 0.0) return;
  rescale_to(o.shift_);
  const double f = std::exp(o.shift_ - shift_);
  sum_w_ += f * o.sum_w_;
  sum_w2_ += f * f * o.sum_w2_;
  sum_x_ += f * o.sum_x_;
  sum_xx_ += f * o.sum_xx_;
}

double WeightedCovariance::log_sum() const {
  return sum_w_ > 0.0 ? shift_ + std::log(sum_w_) : -kInf;
}

double WeightedCovariance::ess() const { return sum_w_ > 0.0 ? sum_w_ * sum_w_ / sum_w2_ : 0.0; }

Vector WeightedCovariance::mean() const { return sum_x_ / sum_w_; }

Matrix WeightedCovariance::covariance() const {
  const Vector m = mean();
  Matrix c = sum_xx_.selfadjointView<Eigen::Lower>();
  c /= sum_w_;
  c.noalias() -= m * m.transpose();
  return c;
}

void WeightedCovariance::serialize(std::vector<double>& out) const {
  const auto d = sum_x_.size();
  out.push_back(shift_);
  out.push_back(sum_w_);
  out.push_back(sum_w2_);
  out.insert(out.end(), sum_x_.data(), sum_x_.data() + d);
  out.insert(out.end(), sum_xx_.data(), sum_xx_.data() + d * d);
}

void WeightedCovariance::deserialize(std::span<const double> data, std::size_t& pos) {
  const auto d = static_cast<std::size_t>(sum_x_.size());
  shift_ = data[pos++];
  sum_w_ = data[pos++];
  sum_w2_ = data[pos++];
  for (std::size_t i = 0; i < d; ++i) sum_x_[static_cast<Eigen::Index>(i)] = data[pos++];
  for (std::size_t i = 0; i < d * d; ++i) sum_xx_.data()[i] = data[pos++];
}

}  // namespace pemc::estimators
