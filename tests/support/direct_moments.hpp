#pragma once
// The self-normalised weighted mean and covariance of samples with log weights, computed directly
// (two passes, long double, weights exp(lw - max lw)): the reference the running accumulators of
// the tempering kernels (Kernel::report_moments) are checked against.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/types.hpp"

namespace pemc::testing {

struct DirectMoments {
  Vector mean;
  Matrix covariance;
};

inline DirectMoments direct_weighted_moments(const std::vector<Vector>& x,
                                             const std::vector<double>& log_w) {
  double top = -std::numeric_limits<double>::infinity();
  for (double lw : log_w) top = std::max(top, lw);
  const auto d = x.front().size();
  long double sum_w = 0;
  std::vector<long double> m(d, 0.0L);
  for (std::size_t n = 0; n < x.size(); ++n) {
    const long double w = std::exp(static_cast<long double>(log_w[n] - top));
    sum_w += w;
    for (Eigen::Index i = 0; i < d; ++i) m[i] += w * x[n][i];
  }
  for (auto& v : m) v /= sum_w;
  DirectMoments out{Vector(d), Matrix(d, d)};
  for (Eigen::Index i = 0; i < d; ++i) out.mean[i] = static_cast<double>(m[i]);
  for (Eigen::Index i = 0; i < d; ++i)
    for (Eigen::Index j = 0; j < d; ++j) {
      long double c = 0;
      for (std::size_t n = 0; n < x.size(); ++n)
        c += std::exp(static_cast<long double>(log_w[n] - top)) * (x[n][i] - m[i]) * (x[n][j] - m[j]);
      out.covariance(i, j) = static_cast<double>(c / sum_w);
    }
  return out;
}

}  // namespace pemc::testing
