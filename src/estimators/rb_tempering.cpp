#include "estimators/rb_tempering.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/numerics.hpp"

namespace pemc::estimators {

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
  out.reserve(2 + 2 * WeightedCovariance::serialized_size(d));
  out.push_back(static_cast<double>(d));
  out.push_back(static_cast<double>(n_));
  w0_.serialize(out);
  w1_.serialize(out);
  return out;
}

TemperingRbAccumulator TemperingRbAccumulator::deserialize(std::span<const double> data) {
  if (data.size() < 2) throw DataError("TemperingRbAccumulator::deserialize: fewer than 2 numbers");
  const double dd = data[0];
  if (!(dd >= 0.0) || dd != std::floor(dd) || dd > 1e6)
    throw DataError("TemperingRbAccumulator::deserialize: bad dimension field");
  const auto d = static_cast<std::size_t>(dd);
  const std::size_t expected = 2 + 2 * WeightedCovariance::serialized_size(static_cast<int>(d));
  if (data.size() != expected)
    throw DataError("TemperingRbAccumulator::deserialize: expected " + std::to_string(expected) +
                    " numbers for dimension " + std::to_string(d) + ", got " +
                    std::to_string(data.size()));
  TemperingRbAccumulator acc(static_cast<int>(d));
  acc.n_ = static_cast<std::int64_t>(data[1]);
  std::size_t pos = 2;
  acc.w0_.deserialize(data, pos);
  acc.w1_.deserialize(data, pos);
  return acc;
}

}  // namespace pemc::estimators
