#include "targets/boltzmann_enumeration.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace pemc::targets {
namespace {

constexpr int kMaxLowUnits = 12;      // 2^12 low states per block: tables stay in L1/L2
constexpr int kMaxChunkBits = 6;      // at most 64 chunks of high states
constexpr double kRescaleMargin = 64; // weights are <= e^64 before the shift is raised

// Unit i is +1 when its bit is set, -1 otherwise.
inline double spin(std::uint64_t state, int bit) { return ((state >> bit) & 1u) ? 1.0 : -1.0; }

// Geometry and precomputed tables shared by all chunks.
struct Layout {
  int n = 0;            // d_b
  int k = 0;            // low units: 0..k-1
  int h = 0;            // high units: k..n-1
  int ka = 0, kb = 0;   // low units split: A = 0..ka-1, B = ka..k-1
  std::size_t na = 0, nb = 0, nl = 0;  // 2^ka, 2^kb, 2^k
  Matrix W;             // symmetric, zero diagonal
  Vector b;
  std::vector<double> base;  // 0.5 s_lo' W_ll s_lo for every low state l = bB * na + aA
  std::vector<double> sa;    // sa[a * ka + j] = spin of unit j in A-state a
  std::vector<double> sb;    // sb[bB * kb + j] = spin of unit ka + j in B-state bB
};

// One chunk's sums, all relative to exp(shift).
struct ChunkSums {
  double shift = -std::numeric_limits<double>::infinity();
  double z = 0.0;
  std::vector<double> m_hi;     // h
  std::vector<double> m_hihi;   // h x h (row-major, upper triangle used)
  std::vector<double> m_hilo;   // h x k (row-major)
  std::vector<double> acc_lo;   // nl: sum over high states of the weight of each low state

  void rescale(double factor) {
    z *= factor;
    for (double& v : m_hi) v *= factor;
    for (double& v : m_hihi) v *= factor;
    for (double& v : m_hilo) v *= factor;
    for (double& v : acc_lo) v *= factor;
  }
};

struct Scratch {
  std::vector<double> e, ta, tb, row_a, col_b, mlo, s_hi, g_hi, f;
  explicit Scratch(const Layout& L)
      : e(L.nl), ta(L.na), tb(L.nb), row_a(L.na), col_b(L.nb), mlo(L.k), s_hi(L.h), g_hi(L.h),
        f(L.k) {}
};

Layout make_layout(const Matrix& W, const Vector& b) {
  Layout L;
  L.n = static_cast<int>(W.rows());
  L.k = std::min(L.n, kMaxLowUnits);
  L.h = L.n - L.k;
  L.ka = L.k / 2;
  L.kb = L.k - L.ka;
  L.na = std::size_t{1} << L.ka;
  L.nb = std::size_t{1} << L.kb;
  L.nl = std::size_t{1} << L.k;
  L.W = 0.5 * (W + W.transpose());
  L.W.diagonal().setZero();
  L.b = b;
  L.base.resize(L.nl);
  for (std::size_t l = 0; l < L.nl; ++l) {
    double e = 0.0;
    for (int i = 0; i < L.k; ++i)
      for (int j = i + 1; j < L.k; ++j) e += L.W(i, j) * spin(l, i) * spin(l, j);
    L.base[l] = e;
  }
  L.sa.resize(L.na * static_cast<std::size_t>(L.ka));
  for (std::size_t a = 0; a < L.na; ++a)
    for (int j = 0; j < L.ka; ++j) L.sa[a * L.ka + j] = spin(a, j);
  L.sb.resize(L.nb * static_cast<std::size_t>(L.kb));
  for (std::size_t bb = 0; bb < L.nb; ++bb)
    for (int j = 0; j < L.kb; ++j) L.sb[bb * L.kb + j] = spin(bb, j);
  return L;
}

// Sums over the low states for every high state with Gray-code index in [i0, i1).
ChunkSums run_chunk(const Layout& L, std::uint64_t i0, std::uint64_t i1) {
  const int k = L.k, h = L.h, ka = L.ka, kb = L.kb;
  const std::size_t na = L.na, nb = L.nb, nl = L.nl;
  ChunkSums S;
  S.m_hi.assign(h, 0.0);
  S.m_hihi.assign(static_cast<std::size_t>(h) * h, 0.0);
  S.m_hilo.assign(static_cast<std::size_t>(h) * k, 0.0);
  S.acc_lo.assign(nl, 0.0);
  Scratch X(L);

  // High state from its Gray code; its energy c = 0.5 s_hi'W_hh s_hi + b_hi's_hi, the high-high
  // field g = W_hh s_hi and the field on the low units f = b_lo + W_lh s_hi.
  const std::uint64_t gray0 = i0 ^ (i0 >> 1);
  for (int j = 0; j < h; ++j) X.s_hi[j] = spin(gray0, j);
  double c = 0.0;
  for (int i = 0; i < h; ++i) {
    double g = 0.0;
    for (int j = 0; j < h; ++j) g += L.W(k + i, k + j) * X.s_hi[j];
    X.g_hi[i] = g;
    c += 0.5 * X.s_hi[i] * g + L.b[k + i] * X.s_hi[i];
  }
  for (int i = 0; i < k; ++i) {
    double f = L.b[i];
    for (int j = 0; j < h; ++j) f += L.W(i, k + j) * X.s_hi[j];
    X.f[i] = f;
  }

  for (std::uint64_t idx = i0; idx < i1; ++idx) {
    // Low energies: base + f_A's_A + f_B's_B.
    for (std::size_t a = 0; a < na; ++a) {
      double t = 0.0;
      for (int j = 0; j < ka; ++j) t += X.f[j] * L.sa[a * ka + j];
      X.ta[a] = t;
    }
    for (std::size_t bb = 0; bb < nb; ++bb) {
      double t = 0.0;
      for (int j = 0; j < kb; ++j) t += X.f[ka + j] * L.sb[bb * kb + j];
      X.tb[bb] = t;
    }
    double emax = -std::numeric_limits<double>::infinity();
    for (std::size_t bb = 0; bb < nb; ++bb) {
      const double tbv = X.tb[bb];
      double* e = X.e.data() + bb * na;
      const double* base = L.base.data() + bb * na;
      for (std::size_t a = 0; a < na; ++a) {
        e[a] = base[a] + X.ta[a] + tbv;
        emax = std::max(emax, e[a]);
      }
    }
    const double block_max = emax + c;
    if (!(S.shift > -std::numeric_limits<double>::infinity()) ||
        block_max > S.shift + kRescaleMargin) {
      if (S.shift > -std::numeric_limits<double>::infinity())
        S.rescale(std::exp(S.shift - block_max));
      S.shift = block_max;
    }
    const double off = c - S.shift;
    for (std::size_t l = 0; l < nl; ++l) X.e[l] = std::exp(X.e[l] + off);  // now weights

    std::fill(X.row_a.begin(), X.row_a.end(), 0.0);
    double z_blk = 0.0;
    for (std::size_t bb = 0; bb < nb; ++bb) {
      const double* w = X.e.data() + bb * na;
      double* acc = S.acc_lo.data() + bb * na;
      double col = 0.0;
      for (std::size_t a = 0; a < na; ++a) {
        col += w[a];
        X.row_a[a] += w[a];
        acc[a] += w[a];
      }
      X.col_b[bb] = col;
      z_blk += col;
    }
    // Block sums of s_lo: sum_l w_l s_lo(l) from the row (A) and column (B) sums.
    for (int j = 0; j < ka; ++j) {
      double t = 0.0;
      for (std::size_t a = 0; a < na; ++a) t += L.sa[a * ka + j] * X.row_a[a];
      X.mlo[j] = t;
    }
    for (int j = 0; j < kb; ++j) {
      double t = 0.0;
      for (std::size_t bb = 0; bb < nb; ++bb) t += L.sb[bb * kb + j] * X.col_b[bb];
      X.mlo[ka + j] = t;
    }
    S.z += z_blk;
    for (int i = 0; i < h; ++i) {
      const double si = X.s_hi[i];
      S.m_hi[i] += si * z_blk;
      double* hh = S.m_hihi.data() + static_cast<std::size_t>(i) * h;
      const double zi = si * z_blk;
      for (int j = i + 1; j < h; ++j) hh[j] += zi * X.s_hi[j];
      double* hl = S.m_hilo.data() + static_cast<std::size_t>(i) * k;
      for (int j = 0; j < k; ++j) hl[j] += si * X.mlo[j];
    }

    // Gray-code step to idx + 1: flip high unit j = ctz(idx + 1), O(d_b) updates.
    if (idx + 1 < i1) {
      const int j = std::countr_zero(idx + 1);
      const double s_old = X.s_hi[j];
      c += -2.0 * s_old * (X.g_hi[j] + L.b[k + j]);
      for (int i = 0; i < h; ++i) X.g_hi[i] += -2.0 * s_old * L.W(k + i, k + j);
      for (int i = 0; i < k; ++i) X.f[i] += -2.0 * s_old * L.W(i, k + j);
      X.s_hi[j] = -s_old;
    }
  }
  return S;
}

}  // namespace

BoltzmannTruth enumerate_boltzmann(const Matrix& W, const Vector& b,
                                   const EnumerationOptions& options) {
  const Eigen::Index n = W.rows();
  if (W.cols() != n || n < 1 || b.size() != n) {
    std::ostringstream os;
    os << "enumerate_boltzmann: W must be d_b x d_b and b must have d_b entries (W is " << W.rows()
       << "x" << W.cols() << ", b has " << b.size() << ")";
    throw NumericalError(os.str());
  }
  if (n > kMaxEnumerationUnits)
    throw NumericalError("enumerate_boltzmann: d_b = " + std::to_string(n) +
                         " exceeds the enumeration limit of " +
                         std::to_string(kMaxEnumerationUnits) + " units");
  if (!W.allFinite() || !b.allFinite())
    throw NumericalError("enumerate_boltzmann: W or b has a non-finite entry");
  if (options.n_threads < 0) throw NumericalError("enumerate_boltzmann: n_threads must be >= 0");

  const Layout L = make_layout(W, b);
  const int h = L.h, k = L.k;
  const std::uint64_t n_hi = std::uint64_t{1} << h;
  const int chunk_bits = std::min(h, kMaxChunkBits);
  const std::uint64_t n_chunks = std::uint64_t{1} << chunk_bits;
  const std::uint64_t per_chunk = n_hi / n_chunks;

  std::vector<ChunkSums> chunks(n_chunks);
  unsigned threads = options.n_threads == 0 ? std::max(1u, std::thread::hardware_concurrency())
                                            : static_cast<unsigned>(options.n_threads);
  threads = static_cast<unsigned>(std::min<std::uint64_t>(threads, n_chunks));
  std::atomic<std::uint64_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    try {
      for (std::uint64_t c = next++; c < n_chunks; c = next++)
        chunks[c] = run_chunk(L, c * per_chunk, (c + 1) * per_chunk);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
  }
  if (failure) std::rethrow_exception(failure);

  // Merge in chunk order relative to the largest shift.
  double shift = -std::numeric_limits<double>::infinity();
  for (const auto& S : chunks) shift = std::max(shift, S.shift);
  ChunkSums T;
  T.m_hi.assign(h, 0.0);
  T.m_hihi.assign(static_cast<std::size_t>(h) * h, 0.0);
  T.m_hilo.assign(static_cast<std::size_t>(h) * k, 0.0);
  T.acc_lo.assign(L.nl, 0.0);
  for (const auto& S : chunks) {
    const double f = std::exp(S.shift - shift);
    T.z += f * S.z;
    for (std::size_t i = 0; i < T.m_hi.size(); ++i) T.m_hi[i] += f * S.m_hi[i];
    for (std::size_t i = 0; i < T.m_hihi.size(); ++i) T.m_hihi[i] += f * S.m_hihi[i];
    for (std::size_t i = 0; i < T.m_hilo.size(); ++i) T.m_hilo[i] += f * S.m_hilo[i];
    for (std::size_t i = 0; i < T.acc_lo.size(); ++i) T.acc_lo[i] += f * S.acc_lo[i];
  }
  if (!(T.z > 0.0) || !std::isfinite(T.z))
    throw NumericalError("enumerate_boltzmann: partition sum is not finite and positive");

  BoltzmannTruth out;
  out.log_z_b = shift + std::log(T.z) + 0.5 * W.diagonal().sum();
  out.mean_s.resize(n);
  out.second_moment_s.resize(n, n);
  Matrix& M = out.second_moment_s;
  // Low-low block and low means from the per-low-state totals.
  for (int i = 0; i < k; ++i) {
    double mi = 0.0;
    for (std::size_t l = 0; l < L.nl; ++l) mi += spin(l, i) * T.acc_lo[l];
    out.mean_s[i] = mi / T.z;
    for (int j = i + 1; j < k; ++j) {
      double mij = 0.0;
      for (std::size_t l = 0; l < L.nl; ++l) mij += spin(l, i) * spin(l, j) * T.acc_lo[l];
      M(i, j) = M(j, i) = mij / T.z;
    }
  }
  for (int i = 0; i < h; ++i) {
    out.mean_s[k + i] = T.m_hi[i] / T.z;
    for (int j = i + 1; j < h; ++j)
      M(k + i, k + j) = M(k + j, k + i) = T.m_hihi[static_cast<std::size_t>(i) * h + j] / T.z;
    for (int j = 0; j < k; ++j)
      M(k + i, j) = M(j, k + i) = T.m_hilo[static_cast<std::size_t>(i) * k + j] / T.z;
  }
  M.diagonal().setOnes();
  return out;
}

}  // namespace pemc::targets
