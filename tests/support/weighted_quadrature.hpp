#pragma once
// Test support: exact expectations of weighted extended targets by quadrature.
#include <cmath>
#include <vector>

#include "core/numerics.hpp"
#include "targets/target.hpp"

namespace pemc::testing {

// Theorem 2.1, exactly: under pi^N, the self-normalised weights of weighted_view recover E_pi[f].
// The expectation over pi^N is a trapezoidal sum on a grid (spectrally accurate for these smooth,
// rapidly decaying integrands), so the only error is quadrature error, far below the tolerance.
struct Moments {
  double m1 = 0.0, m2 = 0.0;
};

inline Moments weighted_moments_by_quadrature(const targets::Target& t,
                                              const std::vector<std::vector<double>>& axes) {
  const int dim = t.dim();
  std::vector<std::size_t> idx(static_cast<std::size_t>(dim), 0);
  Vector z(dim);
  targets::WeightedView v;
  // Shift by the potential at the grid's centre so exp(-U) stays representable.
  long double total = 0.0L, s1 = 0.0L, s2 = 0.0L;
  for (int j = 0; j < dim; ++j) {
    const auto& a = axes[static_cast<std::size_t>(j)];
    z[j] = a[a.size() / 2];
  }
  const double shift = t.potential(z);
  while (true) {
    for (int j = 0; j < dim; ++j) z[j] = axes[static_cast<std::size_t>(j)][idx[j]];
    const double u = t.potential(z);
    // Points of negligible density (relative 1e-40) cannot move the moments at this tolerance.
    if (std::isfinite(u) && u - shift < 92.0) {
      const long double p = std::exp(-(static_cast<long double>(u) - shift));
      t.weighted_view(z, v);
      double m = -kInf;
      for (int i = 0; i < v.log_weights.size(); ++i) m = std::max(m, v.log_weights[i]);
      long double wsum = 0.0L, f1 = 0.0L, f2 = 0.0L;
      for (int i = 0; i < v.log_weights.size(); ++i) {
        const long double w = std::exp(static_cast<long double>(v.log_weights[i]) - m);
        wsum += w;
        f1 += w * v.samples(0, i);
        f2 += w * v.samples(0, i) * v.samples(0, i);
      }
      total += p;
      s1 += p * f1 / wsum;
      s2 += p * f2 / wsum;
    }
    int j = 0;
    while (j < dim && ++idx[j] == axes[static_cast<std::size_t>(j)].size()) idx[j++] = 0;
    if (j == dim) break;
  }
  return {static_cast<double>(s1 / total), static_cast<double>(s2 / total)};
}

inline std::vector<double> grid(double lo, double hi, int n) {
  std::vector<double> g(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) g[i] = lo + (hi - lo) * i / (n - 1);
  return g;
}

}  // namespace pemc::testing
