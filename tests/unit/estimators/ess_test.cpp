// Tests of the effective sample sizes (src/estimators/ess.hpp): the FFT autocovariance against
// direct sums, then ESS against known values — iid draws (ESS = N) and AR(1) chains
// (ESS = N (1 - rho) / (1 + rho)) — with tolerances from the sampling error of the estimated
// autocorrelation time (derivations next to each test).
#include "estimators/ess.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <span>
#include <vector>

#include "core/error.hpp"

namespace pemc::estimators {
namespace {

std::vector<std::span<const double>> spans(const Chains& c) { return {c.begin(), c.end()}; }

Chains iid_normal(int m, int n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Chains out(static_cast<std::size_t>(m));
  for (auto& c : out)
    for (int i = 0; i < n; ++i) c.push_back(normal(gen));
  return out;
}

// Stationary AR(1): x_0 ~ N(0, 1), x_t = rho x_{t-1} + sqrt(1 - rho^2) e_t, so corr(x_t, x_{t+k})
// = rho^k and the integrated autocorrelation time is tau = 1 + 2 sum_k rho^k = (1 + rho)/(1 - rho).
Chains ar1(int m, int n, double rho, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const double s = std::sqrt(1.0 - rho * rho);
  Chains out(static_cast<std::size_t>(m));
  for (auto& c : out) {
    double x = normal(gen);
    for (int i = 0; i < n; ++i) {
      c.push_back(x);
      x = rho * x + s * normal(gen);
    }
  }
  return out;
}

TEST(Fft, InverseUndoesForwardAndRejectsOtherSizes) {
  std::vector<std::complex<double>> a{{1, 0}, {2, -1}, {0, 3}, {-4, 0.5}, {5, 5}, {0, 0}, {1, 1}, {2, 2}};
  const auto original = a;
  fft(a, false);
  // Bin 0 is the plain sum.
  std::complex<double> sum = 0;
  for (const auto& v : original) sum += v;
  EXPECT_NEAR(std::abs(a[0] - sum), 0.0, 1e-12);
  fft(a, true);
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(std::abs(a[i] / 8.0 - original[i]), 0.0, 1e-12);
  std::vector<std::complex<double>> bad(6);
  EXPECT_THROW(fft(bad, false), NumericalError);
}

TEST(Autocovariance, MatchesDirectSums) {
  std::mt19937_64 gen(3);
  std::normal_distribution<double> normal(2.0, 3.0);
  for (int n : {1, 2, 5, 37, 1000}) {
    std::vector<double> x(static_cast<std::size_t>(n));
    for (auto& v : x) v = normal(gen);
    double mean = 0;
    for (double v : x) mean += v / n;
    const auto acov = autocovariance(x);
    ASSERT_EQ(acov.size(), x.size());
    for (int t = 0; t < n; ++t) {
      double direct = 0;
      for (int i = 0; i + t < n; ++i) direct += (x[i] - mean) * (x[i + t] - mean);
      direct /= n;
      EXPECT_NEAR(acov[t], direct, 1e-11 * 9.0) << "n " << n << " lag " << t;
    }
  }
}

// iid draws: tau-hat - 1 = 2 sum_{t=1..L} rho-hat_t over the Geyer window L, and each rho-hat_t is
// approximately N(0, 1/N) with N the total number of draws, so sd(tau-hat) ≈ 2 sqrt(L / N).
// ESS / N = 1 / tau-hat: we allow 4 of those standard deviations.
void expect_iid_ess(const EssResult& r, double total, const char* what) {
  const double sd_tau = 2.0 * std::sqrt(std::max(r.max_lag, 1) / total);
  EXPECT_NEAR(r.tau, 1.0, 4.0 * sd_tau) << what;
  EXPECT_NEAR(r.ess / total, 1.0, 4.0 * sd_tau * 1.1) << what;  // 1/tau, first order
}

TEST(EffectiveSampleSize, IidDrawsGiveEssNearN) {
  for (std::uint64_t seed : {21u, 22u, 23u}) {
    const Chains c = iid_normal(4, 5000, seed);
    const double total = 20000;
    const EssResult plain = effective_sample_size(c);
    EXPECT_EQ(plain.n_chains, 4);
    EXPECT_EQ(plain.n_draws, 5000);
    expect_iid_ess(plain, total, "plain");
    const EssResult bulk = bulk_ess(spans(c));
    EXPECT_EQ(bulk.n_chains, 8);
    expect_iid_ess(bulk, total, "bulk");
    expect_iid_ess(tail_ess(spans(c)), total, "tail");
  }
}

// AR(1): Madras & Sokal (1988): var(tau-hat) ≈ 2 (2L + 1) / N tau^2 for a window of L lags, and
// truncating at L drops 2 sum_{t>L} rho^t = 2 rho^(L+1) / (1 - rho), i.e. a relative bias of
// 2 rho^(L+1) / (1 + rho). Allowed: 4 relative standard deviations plus that bias.
void expect_ar1_ess(const EssResult& r, double rho, double total, const char* what) {
  const double expected = total * (1.0 - rho) / (1.0 + rho);
  const double rel_sd = std::sqrt(2.0 * (2.0 * r.max_lag + 1.0) / total);
  const double bias = 2.0 * std::pow(std::fabs(rho), r.max_lag + 1) / (1.0 + rho);
  EXPECT_NEAR(r.ess / expected, 1.0, 4.0 * rel_sd + bias)
      << what << ": rho " << rho << " ess " << r.ess << " expected " << expected << " window "
      << r.max_lag;
}

TEST(EffectiveSampleSize, Ar1ChainsGiveTheKnownEss) {
  for (double rho : {0.5, 0.9, -0.3}) {
    const Chains c = ar1(4, 100000, rho, 100 + static_cast<std::uint64_t>(10 * (rho + 1)));
    const double total = 4e5;
    expect_ar1_ess(effective_sample_size(c), rho, total, "plain");
    expect_ar1_ess(bulk_ess(spans(c)), rho, total, "bulk");
  }
}

TEST(EffectiveSampleSize, AStronglyCorrelatedChainHasSmallEss) {
  // rho = 0.99: tau = 199, so 4 x 20000 draws are worth about 400. The window must reach well past
  // the correlation length for this to come out right; a short window would give far more.
  const Chains c = ar1(4, 20000, 0.99, 9);
  const EssResult r = effective_sample_size(c);
  EXPECT_LT(r.ess, 1000.0);
  EXPECT_GT(r.max_lag, 100);
}

TEST(EffectiveSampleSize, AntitheticChainsAreCappedAtNLog10N) {
  Chains c(2);
  for (int i = 0; i < 1000; ++i) {
    c[0].push_back(i % 2 ? 1.0 : -1.0);
    c[1].push_back(i % 2 ? -1.0 : 1.0);
  }
  const EssResult r = effective_sample_size(c);
  EXPECT_NEAR(r.ess, 2000.0 * std::log10(2000.0), 1e-6);
}

TEST(RankDiagnostics, EqualsTheSeparateFunctions) {
  const Chains c = ar1(3, 3001, 0.6, 31);  // odd length: split drops middle draws
  const auto s = spans(c);
  const RankDiagnostics d = rank_diagnostics(s);
  const RhatResult r = rank_normalized_split_rhat(s);
  EXPECT_EQ(d.rhat.rhat, r.rhat);
  EXPECT_EQ(d.rhat.rhat_bulk, r.rhat_bulk);
  EXPECT_EQ(d.rhat.rhat_folded, r.rhat_folded);
  EXPECT_EQ(d.bulk.ess, bulk_ess(s).ess);
  EXPECT_EQ(d.tail.ess, tail_ess(s).ess);
  EXPECT_EQ(d.bulk.n_chains, 6);
  EXPECT_EQ(d.bulk.n_draws, 1500);
  const RankDiagnostics tiny = rank_diagnostics(spans(Chains{{1.0, 2.0, 3.0}}));
  EXPECT_TRUE(std::isnan(tiny.rhat.rhat));
  EXPECT_TRUE(std::isnan(tiny.bulk.ess));
}

TEST(EffectiveSampleSize, UndefinedForConstantOrShortChainsAndRejectsNonFinite) {
  EXPECT_TRUE(std::isnan(effective_sample_size(Chains{std::vector<double>(50, 2.0)}).ess));
  // 0.1 is not a dyadic number: the rounded mean differs from the draws.
  EXPECT_TRUE(std::isnan(effective_sample_size(Chains{std::vector<double>(49, 0.1)}).ess));
  EXPECT_TRUE(std::isnan(effective_sample_size(Chains{{1.0, 2.0, 3.0}}).ess));
  EXPECT_TRUE(std::isnan(bulk_ess(spans(Chains{std::vector<double>(50, 2.0)})).ess));
  EXPECT_TRUE(std::isnan(tail_ess(spans(Chains{std::vector<double>(50, 2.0)})).ess));
  EXPECT_THROW(effective_sample_size(Chains{{1.0, 2.0, INFINITY, 3.0, 4.0}}), NumericalError);
}

// Two deterministic chains of 20 draws, a_i = sin(0.7 i) + 0.1 i and b_i = cos(1.3 i) - 0.05 i,
// whose numbers posterior 1.4.0 gives (R: ess_basic(x, split = FALSE), ess_mean, mcse_mean,
// ess_bulk, ess_tail, rhat of cbind(a, b), printed with 17 digits). They exercise the truncation
// details (the first non-positive pair's positive even autocorrelation counts once).
Chains posterior_reference_chains() {
  Chains c(2);
  for (int i = 0; i < 20; ++i) {
    c[0].push_back(std::sin(0.7 * i) + 0.1 * i);
    c[1].push_back(std::cos(1.3 * i) - 0.05 * i);
  }
  return c;
}

TEST(EffectiveSampleSize, EqualsPosteriorOnAFixedExample) {
  const Chains c = posterior_reference_chains();
  const auto near = [](double got, double want) {
    EXPECT_NEAR(got, want, 1e-12 * std::fabs(want)) << got << " vs posterior's " << want;
  };
  near(effective_sample_size(c).ess, 2.3212101588410792);
  near(mean_ess(spans(c)).ess, 5.6982410363147631);
  near(mcse_mean(spans(c)), 0.45034356484645516);
  near(bulk_ess(spans(c)).ess, 5.8113908141343451);
  near(tail_ess(spans(c)).ess, 30.508474576271201);
  near(rank_normalized_split_rhat(spans(c)).rhat, 1.6083091625369723);
}

TEST(McseMean, IsThePooledSdOverTheRootOfTheMeanEss) {
  const Chains c = posterior_reference_chains();
  // sd of the 40 draws pooled (n - 1 denominator) = 1.0750146167526904 in R.
  EXPECT_NEAR(mcse_mean(spans(c)) * std::sqrt(mean_ess(spans(c)).ess), 1.0750146167526904, 1e-13);
  EXPECT_TRUE(std::isnan(mcse_mean(spans(Chains{{1.0, 1.0, 1.0, 1.0}}))));  // no variance
  EXPECT_TRUE(std::isnan(mcse_mean(spans(Chains{{1.0, 2.0}}))));            // too short
}

}  // namespace
}  // namespace pemc::estimators
