#include "estimators/rb_tempering.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>

#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "core/numerics.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace pemc::estimators {

void TemperingRbAccumulator::Sums::resize(int d) {
  sum_x = Vector::Zero(d);
  sum_xx = Matrix::Zero(d, d);
}

void TemperingRbAccumulator::Sums::rescale_to(double log_w) {
  if (sum_w == 0.0) {
    shift = log_w;
    return;
  }
  if (log_w <= shift) return;
  const double f = std::exp(shift - log_w);
  sum_w *= f;
  sum_w2 *= f * f;
  sum_x *= f;
  sum_xx *= f;
  shift = log_w;
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

void TemperingRbAccumulator::Sums::add(ConstVectorRef x, double log_w) {
  if (log_w == -kInf) return;
  rescale_to(log_w);
  const double w = std::exp(log_w - shift);
  sum_w += w;
  sum_w2 += w * w;
#if defined(__x86_64__) && defined(__GNUC__)
  if (kAvx) {
    weighted_rank1_avx(x.data(), w, static_cast<int>(x.size()), sum_x.data(), sum_xx.data());
    return;
  }
#endif
  sum_x.noalias() += w * x;
  sum_xx.selfadjointView<Eigen::Lower>().rankUpdate(x, w);
}

void TemperingRbAccumulator::Sums::merge(const Sums& o) {
  if (o.sum_w == 0.0) return;
  rescale_to(o.shift);
  const double f = std::exp(o.shift - shift);
  sum_w += f * o.sum_w;
  sum_w2 += f * f * o.sum_w2;
  sum_x += f * o.sum_x;
  sum_xx += f * o.sum_xx;
}

double TemperingRbAccumulator::Sums::log_sum() const {
  return sum_w > 0.0 ? shift + std::log(sum_w) : -kInf;
}

double TemperingRbAccumulator::Sums::ess() const {
  return sum_w > 0.0 ? sum_w * sum_w / sum_w2 : 0.0;
}

Vector TemperingRbAccumulator::Sums::mean() const { return sum_x / sum_w; }

Matrix TemperingRbAccumulator::Sums::covariance() const {
  const Vector m = mean();
  Matrix c = sum_xx.selfadjointView<Eigen::Lower>();
  c /= sum_w;
  c.noalias() -= m * m.transpose();
  return c;
}

TemperingRbAccumulator::TemperingRbAccumulator(int dim) {
  w0_.resize(dim);
  w1_.resize(dim);
}

void TemperingRbAccumulator::ensure_dim(Eigen::Index d, const char* where) {
  if (dim() == 0 && n_ == 0) {
    w0_.resize(static_cast<int>(d));
    w1_.resize(static_cast<int>(d));
    return;
  }
  if (d != dim())
    throw DataError(std::string("TemperingRbAccumulator::") + where + ": dimension " +
                    std::to_string(d) + ", expected " + std::to_string(dim()));
}

void TemperingRbAccumulator::add(ConstVectorRef x, double log_w0, double log_w1) {
  ensure_dim(x.size(), "add");
  for (double lw : {log_w0, log_w1})
    if (std::isnan(lw) || lw == kInf)
      throw NumericalError("TemperingRbAccumulator::add: log weight is " +
                           std::string(std::isnan(lw) ? "NaN" : "+inf"));
  w0_.add(x, log_w0);
  w1_.add(x, log_w1);
  ++n_;
}

void TemperingRbAccumulator::merge(const TemperingRbAccumulator& other) {
  if (other.n_ == 0 && other.dim() == 0) return;
  ensure_dim(other.dim(), "merge");
  w0_.merge(other.w0_);
  w1_.merge(other.w1_);
  n_ += other.n_;
}

double TemperingRbAccumulator::log_z(double log_zeta) const {
  const double a = w1_.log_sum(), b = w0_.log_sum();
  if (a == -kInf || b == -kInf) return std::numeric_limits<double>::quiet_NaN();
  return log_zeta + a - b;
}

std::vector<double> TemperingRbAccumulator::serialize() const {
  const auto d = dim();
  std::vector<double> out;
  out.reserve(2 + 2 * (3 + d + d * d));
  out.push_back(static_cast<double>(d));
  out.push_back(static_cast<double>(n_));
  for (const Sums* s : {&w0_, &w1_}) {
    out.push_back(s->shift);
    out.push_back(s->sum_w);
    out.push_back(s->sum_w2);
    out.insert(out.end(), s->sum_x.data(), s->sum_x.data() + d);
    out.insert(out.end(), s->sum_xx.data(), s->sum_xx.data() + d * d);
  }
  return out;
}

TemperingRbAccumulator TemperingRbAccumulator::deserialize(std::span<const double> data) {
  if (data.size() < 2) throw DataError("TemperingRbAccumulator::deserialize: fewer than 2 numbers");
  const double dd = data[0];
  if (!(dd >= 0.0) || dd != std::floor(dd) || dd > 1e6)
    throw DataError("TemperingRbAccumulator::deserialize: bad dimension field");
  const auto d = static_cast<std::size_t>(dd);
  const std::size_t expected = 2 + 2 * (3 + d + d * d);
  if (data.size() != expected)
    throw DataError("TemperingRbAccumulator::deserialize: expected " + std::to_string(expected) +
                    " numbers for dimension " + std::to_string(d) + ", got " +
                    std::to_string(data.size()));
  TemperingRbAccumulator acc(static_cast<int>(d));
  acc.n_ = static_cast<std::int64_t>(data[1]);
  std::size_t pos = 2;
  for (Sums* s : {&acc.w0_, &acc.w1_}) {
    s->shift = data[pos++];
    s->sum_w = data[pos++];
    s->sum_w2 = data[pos++];
    for (std::size_t i = 0; i < d; ++i) s->sum_x[static_cast<Eigen::Index>(i)] = data[pos++];
    for (std::size_t i = 0; i < d * d; ++i) s->sum_xx.data()[i] = data[pos++];
  }
  return acc;
}

}  // namespace pemc::estimators
