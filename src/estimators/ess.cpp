#include "estimators/ess.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace pemc::estimators {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<std::span<const double>> spans_of(const Chains& chains) {
  return {chains.begin(), chains.end()};
}

}  // namespace

void fft(std::vector<std::complex<double>>& a, bool inverse) {
  const std::size_t n = a.size();
  if (n == 0 || (n & (n - 1)) != 0)
    throw NumericalError("fft: size " + std::to_string(n) + " is not a power of two");
  // Bit-reversal permutation, then iterative butterflies of doubling length.
  for (std::size_t i = 1, j = 0; i < n; ++i) {
    std::size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  // Twiddles w^k = exp(-+2 pi i k / n), k < n/2, computed directly (no accumulated rounding);
  // products written out by hand because std::complex's operator* checks for NaN/inf (a slow
  // library call per product without -ffast-math).
  std::vector<double> wr(n / 2), wi(n / 2);
  const double sign = inverse ? 2.0 : -2.0;
  for (std::size_t k = 0; k < n / 2; ++k) {
    const double angle = sign * M_PI * static_cast<double>(k) / static_cast<double>(n);
    wr[k] = std::cos(angle);
    wi[k] = std::sin(angle);
  }
  auto* data = reinterpret_cast<double*>(a.data());  // interleaved re, im (guaranteed layout)
  for (std::size_t len = 2; len <= n; len <<= 1) {
    const std::size_t half = len / 2, step = n / len;
    for (std::size_t start = 0; start < n; start += len) {
      for (std::size_t k = 0; k < half; ++k) {
        double* u = data + 2 * (start + k);
        double* v = data + 2 * (start + k + half);
        const double c = wr[k * step], s = wi[k * step];
        const double tr = v[0] * c - v[1] * s, ti = v[0] * s + v[1] * c;
        v[0] = u[0] - tr;
        v[1] = u[1] - ti;
        u[0] += tr;
        u[1] += ti;
      }
    }
  }
}

std::vector<double> autocovariance(std::span<const double> x) {
  const std::size_t n = x.size();
  if (n == 0) return {};
  double mean = 0.0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(n);
  // A constant series has autocovariance exactly 0 (its rounded mean may differ from the value).
  if (std::all_of(x.begin(), x.end(), [&](double v) { return v == x[0]; }))
    return std::vector<double>(n, 0.0);
  // Zero padding to >= 2n makes the circular correlation of the FFT equal to the linear one.
  std::size_t m = 1;
  while (m < 2 * n) m <<= 1;
  std::vector<std::complex<double>> a(m, 0.0);
  for (std::size_t i = 0; i < n; ++i) a[i] = x[i] - mean;
  fft(a, false);
  for (auto& c : a) c = std::norm(c);
  fft(a, true);
  std::vector<double> acov(n);
  // The inverse transform is unscaled (factor m); the biased estimator divides by n.
  for (std::size_t t = 0; t < n; ++t)
    acov[t] = a[t].real() / static_cast<double>(m) / static_cast<double>(n);
  return acov;
}

EssResult effective_sample_size(const std::vector<std::span<const double>>& chains) {
  EssResult r;
  r.ess = r.tau = kNaN;
  r.n_chains = static_cast<int>(chains.size());
  if (chains.empty()) return r;
  std::size_t n = chains.front().size();
  for (const auto& c : chains) n = std::min(n, c.size());
  r.n_draws = static_cast<int>(n);
  if (n < 4) return r;
  const std::size_t m = chains.size();
  const double dn = static_cast<double>(n), dm = static_cast<double>(m);
  std::vector<double> mean_acov(n, 0.0), means(m, 0.0);
  double w = 0.0;
  for (std::size_t j = 0; j < m; ++j) {
    const auto c = chains[j].first(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (!std::isfinite(c[i]))
        throw NumericalError("effective_sample_size: draw " + std::to_string(i) + " of chain " +
                             std::to_string(j) + " is not finite");
      means[j] += c[i];
    }
    means[j] /= dn;
    const auto acov = autocovariance(c);
    for (std::size_t t = 0; t < n; ++t) mean_acov[t] += acov[t] / dm;
    w += acov[0] * dn / (dn - 1.0) / dm;
  }
  double b_over_n = 0.0;
  if (m > 1) {
    double grand = 0.0;
    for (double mu : means) grand += mu / dm;
    for (double mu : means) b_over_n += (mu - grand) * (mu - grand);
    b_over_n /= dm - 1.0;
  }
  if (!(w > 0.0)) return r;  // every chain constant: no variance to measure
  const double var_plus = (dn - 1.0) / dn * w + b_over_n;
  auto rho = [&](std::size_t t) { return t == 0 ? 1.0 : 1.0 - (w - mean_acov[t]) / var_plus; };

  // Geyer's initial positive sequence over the pairs P_k = rho_2k + rho_2k+1, exactly as
  // posterior's .ess (posterior 1.4, the reference the reports are checked against): the pairs are
  // kept while positive (looking no further than lag n - 4); at the first non-positive pair, at
  // lag max_t, its even autocorrelation still counts once when positive (the paper's "improved"
  // truncation), and the kept pairs are made monotone.
  std::vector<double> rho_t(n, 0.0);
  rho_t[0] = 1.0;
  rho_t[1] = rho(1);
  std::size_t t = 0;
  double even = 1.0, odd = rho_t[1];
  while (t + 5 < n && !std::isnan(even + odd) && even + odd > 0.0) {
    t += 2;
    even = rho(t);
    odd = rho(t + 1);
    if (even + odd >= 0.0) {
      rho_t[t] = even;
      rho_t[t + 1] = odd;
    }
  }
  const std::size_t max_t = t;
  if (even > 0.0) rho_t[max_t] = even;
  // Initial monotone sequence: each kept pair at most the one before it.
  for (std::size_t k = 2; k + 2 <= max_t; k += 2)
    if (rho_t[k] + rho_t[k + 1] > rho_t[k - 2] + rho_t[k - 1])
      rho_t[k] = rho_t[k + 1] = (rho_t[k - 2] + rho_t[k - 1]) / 2.0;
  double tau = 1.0 + 2.0 * rho_t[1];
  if (max_t >= 2) {
    double sum = 0.0;
    for (std::size_t k = 0; k < max_t; ++k) sum += rho_t[k];
    tau = -1.0 + 2.0 * sum + rho_t[max_t];
  }
  r.max_lag = static_cast<int>(max_t);
  const double total = dm * dn;
  r.tau = std::max(tau, 1.0 / std::log10(total));
  r.ess = total / r.tau;
  return r;
}

EssResult effective_sample_size(const Chains& chains) {
  return effective_sample_size(spans_of(chains));
}

EssResult bulk_ess(const std::vector<std::span<const double>>& chains) {
  const Chains split = split_chains(chains);
  EssResult r = effective_sample_size(rank_normalize(split));
  return r;
}

EssResult mean_ess(const std::vector<std::span<const double>>& chains) {
  return effective_sample_size(split_chains(chains));
}

double mcse_mean(const std::vector<std::span<const double>>& chains) {
  const EssResult ess = mean_ess(chains);
  double n = 0.0, sum = 0.0;
  for (const auto& c : chains)
    for (double x : c) {
      n += 1.0;
      sum += x;
    }
  if (n < 2.0 || !(ess.ess > 0.0)) return kNaN;
  const double mean = sum / n;
  double ss = 0.0;
  for (const auto& c : chains)
    for (double x : c) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / (n - 1.0)) / std::sqrt(ess.ess);
}

namespace {

EssResult tail_ess_of_split(const Chains& split) {
  EssResult worst;
  worst.ess = worst.tau = kNaN;
  bool first = true;
  for (double q : {0.05, 0.95}) {
    const double cut = pooled_quantile(split, q);
    Chains indicator = split;
    for (auto& c : indicator)
      for (double& x : c) x = x <= cut ? 1.0 : 0.0;
    const EssResult r = effective_sample_size(indicator);
    // An undefined side makes the tail ESS undefined (NaN), not the other side's value.
    if (std::isnan(r.ess)) return r;
    if (first || r.ess < worst.ess) worst = r;
    first = false;
  }
  return worst;
}

}  // namespace

EssResult tail_ess(const std::vector<std::span<const double>>& chains) {
  return tail_ess_of_split(split_chains(chains));
}

namespace {

// The R-hat and bulk ESS of split chains (split_chains of `chains`).
RhatBulkEss rhat_and_bulk_of_split(const std::vector<std::span<const double>>& chains,
                                   const Chains& split) {
  RhatBulkEss d;
  d.rhat = {kNaN, kNaN, kNaN};
  const Chains z = rank_normalize(split);
  d.bulk = effective_sample_size(z);
  std::size_t n = chains.empty() ? 0 : chains.front().size();
  for (const auto& c : chains) n = std::min(n, c.size());
  if (n >= 4) {
    d.rhat.rhat_bulk = potential_scale_reduction(z);
    d.rhat.rhat_folded = potential_scale_reduction(rank_normalize(fold(split)));
    d.rhat.rhat = std::fmax(d.rhat.rhat_bulk, d.rhat.rhat_folded);
  }
  return d;
}

}  // namespace

RankDiagnostics rank_diagnostics(const std::vector<std::span<const double>>& chains) {
  const Chains split = split_chains(chains);
  const RhatBulkEss rb = rhat_and_bulk_of_split(chains, split);
  RankDiagnostics d;
  d.rhat = rb.rhat;
  d.bulk = rb.bulk;
  d.tail = tail_ess_of_split(split);
  return d;
}

RhatBulkEss rhat_and_bulk_ess(const std::vector<std::span<const double>>& chains) {
  return rhat_and_bulk_of_split(chains, split_chains(chains));
}

}  // namespace pemc::estimators
