// Leapfrog integrator: time reversibility, volume preservation, second-order energy error, and the
// exact gradient-evaluation count of the Hamiltonian.
#include "hmc/leapfrog.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "hmc/hamiltonian.hpp"
#include "hmc/metric.hpp"
#include "rng/stream.hpp"
#include "support/gradient_check.hpp"
#include "targets/gaussian.hpp"

namespace pemc::hmc {
namespace {

// A smooth non-Gaussian target: U(q) = sum q_i^4 / 4 + |q|^2 / 2 (+ c q_0 q_1^2 for d >= 2, + a
// q_1 q_2 coupling for d >= 3). Its Hessian varies with q, so the leapfrog map is genuinely
// nonlinear. (The d = 1 case once read and wrote q_1 / g_1 past the end of its vectors: harmless
// in malloc's padding with the default build, heap corruption with Eigen's 64-byte alignment.)
class QuarticTarget final : public targets::Target {
 public:
  explicit QuarticTarget(int dim) : dim_(dim) {}
  int dim() const override { return dim_; }
  std::string name() const override { return "quartic"; }
  double potential(ConstVectorRef x) const override {
    double u = 0.25 * x.array().pow(4).sum() + 0.5 * x.squaredNorm();
    if (dim_ >= 2) u += kC * x[0] * x[1] * x[1];
    if (dim_ >= 3) u += 0.5 * x[1] * x[2];
    return u;
  }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    g = x.array().pow(3).matrix() + x;
    if (dim_ >= 2) {
      g[0] += kC * x[1] * x[1];
      g[1] += 2.0 * kC * x[0] * x[1];
    }
    if (dim_ >= 3) {
      g[1] += 0.5 * x[2];
      g[2] += 0.5 * x[1];
    }
    return potential(x);
  }

 private:
  static constexpr double kC = 0.3;
  int dim_;
};

Matrix test_inverse_metric(int d) {
  Matrix a(d, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) a(i, j) = std::pow(0.5, std::abs(i - j)) * (1.0 + 0.2 * i);
  return 0.5 * (a + a.transpose());
}

std::vector<Metric> test_metrics(int d) {
  Vector diag(d);
  for (int i = 0; i < d; ++i) diag[i] = 0.5 + 0.4 * i;
  return {Metric::unit(d), Metric::diagonal(diag), Metric::dense(test_inverse_metric(d))};
}

PhasePoint start_point(Hamiltonian& h, int d, std::uint64_t seed) {
  PhasePoint z(d);
  rng::Stream s(seed, rng::Domain::kTest, 0, 0);
  s.fill_normal(z.q);
  h.update_potential_gradient(z);
  h.sample_momentum(s, z);
  return z;
}

// Concatenated (q, p) after n leapfrog steps of size eps from (q, p).
Vector flow(Hamiltonian& h, const Vector& qp, int n, double eps) {
  const int d = static_cast<int>(qp.size() / 2);
  PhasePoint z(d);
  z.q = qp.head(d);
  z.p = qp.tail(d);
  h.update_potential_gradient(z);
  h.update_kinetic(z);
  for (int i = 0; i < n; ++i) EXPECT_TRUE(leapfrog_step(z, eps, h));
  Vector out(2 * d);
  out << z.q, z.p;
  return out;
}

TEST(Leapfrog, QuarticTargetGradientIsCorrect) {
  QuarticTarget t(3);
  Vector x(3);
  x << 0.7, -1.2, 0.4;
  pemc::testing::expect_gradient_matches(t, x);
}

TEST(Leapfrog, ReversibleForEveryMetric) {
  const int d = 3;
  QuarticTarget target(d);
  for (const Metric& metric : test_metrics(d)) {
    Hamiltonian h(target, metric);
    PhasePoint z = start_point(h, d, 11);
    const Vector q0 = z.q, p0 = z.p;
    const int n = 50;
    const double eps = 0.05;
    for (int i = 0; i < n; ++i) ASSERT_TRUE(leapfrog_step(z, eps, h));
    ASSERT_GT((z.q - q0).norm(), 0.1) << "the trajectory should actually move";
    z.p = -z.p;
    h.update_kinetic(z);
    for (int i = 0; i < n; ++i) ASSERT_TRUE(leapfrog_step(z, eps, h));
    // Exact in exact arithmetic; 100 steps of O(1) values accumulate ~1e-14 rounding.
    EXPECT_LT((z.q - q0).cwiseAbs().maxCoeff(), 1e-10);
    EXPECT_LT((-z.p - p0).cwiseAbs().maxCoeff(), 1e-10);
  }
}

TEST(Leapfrog, NegativeStepIntegratesBackwards) {
  const int d = 3;
  QuarticTarget target(d);
  Metric metric = Metric::dense(test_inverse_metric(d));
  Hamiltonian h(target, metric);
  PhasePoint z = start_point(h, d, 12);
  const Vector q0 = z.q, p0 = z.p;
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(leapfrog_step(z, 0.1, h));
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(leapfrog_step(z, -0.1, h));
  EXPECT_LT((z.q - q0).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((z.p - p0).cwiseAbs().maxCoeff(), 1e-10);
}

// det of the Jacobian of the n-step map by central differences (step 1e-5: truncation error
// O(h^2 |F'''|) ~ 1e-10 and rounding O(1e-16 / h) ~ 1e-11 per entry of a 6x6 matrix of O(1)
// entries, so the determinant is accurate to ~1e-8; tolerance 1e-6).
double jacobian_determinant(Hamiltonian& h, const Vector& qp, int n, double eps,
                            Vector (*map)(Hamiltonian&, const Vector&, int, double)) {
  const Eigen::Index m = qp.size();
  Matrix jac(m, m);
  const double step = 1e-5;
  for (Eigen::Index j = 0; j < m; ++j) {
    Vector up = qp, down = qp;
    up[j] += step;
    down[j] -= step;
    jac.col(j) = (map(h, up, n, eps) - map(h, down, n, eps)) / (2.0 * step);
  }
  return jac.determinant();
}

// Non-symplectic comparison: explicit Euler on (q, p) does not preserve volume, so a determinant
// test that accepted it would be worthless.
Vector euler_flow(Hamiltonian& h, const Vector& qp, int n, double eps) {
  const int d = static_cast<int>(qp.size() / 2);
  PhasePoint z(d);
  z.q = qp.head(d);
  z.p = qp.tail(d);
  for (int i = 0; i < n; ++i) {
    h.update_potential_gradient(z);
    h.update_kinetic(z);
    const Vector v = z.velocity;
    z.p -= eps * z.grad;
    z.q += eps * v;
  }
  Vector out(2 * d);
  out << z.q, z.p;
  return out;
}

TEST(Leapfrog, PreservesPhaseSpaceVolume) {
  const int d = 3;
  QuarticTarget target(d);
  for (const Metric& metric : test_metrics(d)) {
    Hamiltonian h(target, metric);
    PhasePoint z = start_point(h, d, 13);
    Vector qp(2 * d);
    qp << z.q, z.p;
    EXPECT_NEAR(jacobian_determinant(h, qp, 20, 0.1, &flow), 1.0, 1e-6);
    const double euler = jacobian_determinant(h, qp, 20, 0.1, &euler_flow);
    EXPECT_GT(std::fabs(euler - 1.0), 1e-2) << "the check must be able to detect a non-symplectic map";
  }
}

// Largest |H(t) - H(0)| over a trajectory of total time `time`.
double max_energy_error(Hamiltonian& h, PhasePoint z, double eps, double time) {
  const double h0 = z.hamiltonian();
  const int n = static_cast<int>(std::lround(time / eps));
  double worst = 0.0;
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(leapfrog_step(z, eps, h));
    worst = std::max(worst, std::fabs(z.hamiltonian() - h0));
  }
  return worst;
}

TEST(Leapfrog, EnergyErrorIsSecondOrder) {
  Matrix cov(2, 2);
  cov << 1.0, 0.6, 0.6, 4.0;
  targets::Gaussian target(Vector::Zero(2), cov);
  for (const Metric& metric : test_metrics(2)) {
    Hamiltonian h(target, metric);
    PhasePoint z = start_point(h, 2, 14);
    // Leapfrog's global energy error at fixed time is eps^2 f(t) + O(eps^4); the maximum over t in
    // [0, 10] (several periods) avoids instants where f(t) happens to vanish. Halving eps then
    // divides the error by 4 (1 + O(eps^2)): with eps = 0.02 the O(eps^2) correction and the
    // discretisation of the max over the grid are both < 1e-3 relative, so 4 +- 0.05 is a safe
    // margin that still rejects a first-order (ratio 2) or fourth-order (16) integrator.
    const double coarse = max_energy_error(h, z, 0.02, 10.0);
    const double fine = max_energy_error(h, z, 0.01, 10.0);
    ASSERT_GT(fine, 0.0);
    EXPECT_NEAR(coarse / fine, 4.0, 0.05);
  }
}

TEST(Hamiltonian, CountsOneGradientEvaluationPerLeapfrogStep) {
  QuarticTarget target(3);
  Metric metric = Metric::unit(3);
  Hamiltonian h(target, metric);
  PhasePoint z = start_point(h, 3, 15);
  EXPECT_EQ(h.n_gradient_evals(), 1);
  for (int i = 0; i < 17; ++i) leapfrog_step(z, 0.1, h);
  EXPECT_EQ(h.n_gradient_evals(), 18);
}

class NanAbove final : public targets::Target {
 public:
  int dim() const override { return 1; }
  std::string name() const override { return "nan_above"; }
  double potential(ConstVectorRef x) const override {
    return x[0] > 1.0 ? std::nan("") : 0.5 * x[0] * x[0];
  }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    g[0] = x[0];
    return potential(x);
  }
};

TEST(Leapfrog, NonFinitePotentialStopsWithFalseAndPlusInfinity) {
  NanAbove target;
  Metric metric = Metric::unit(1);
  Hamiltonian h(target, metric);
  PhasePoint z(1);
  z.q[0] = 0.9;
  h.update_potential_gradient(z);
  z.p[0] = 5.0;
  h.update_kinetic(z);
  EXPECT_FALSE(leapfrog_step(z, 0.1, h));
  EXPECT_EQ(z.potential, std::numeric_limits<double>::infinity());  // NaN stored as +inf
  EXPECT_FALSE(z.finite());
}

// A target whose gradient has a non-finite entry (potential finite) at x[0] > 1: the fixed-size
// finiteness check must reject it exactly as the dynamic one does.
class InfGradientAbove final : public targets::Target {
 public:
  explicit InfGradientAbove(int dim) : dim_(dim) {}
  int dim() const override { return dim_; }
  std::string name() const override { return "inf_gradient_above"; }
  double potential(ConstVectorRef x) const override { return 0.5 * x.squaredNorm(); }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    g = x;
    if (x[0] > 1.0) g[dim_ - 1] = std::numeric_limits<double>::infinity();
    return potential(x);
  }

 private:
  int dim_;
};

bool same_bits(const Vector& a, const Vector& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

// The fixed-size momentum draw and leapfrog (NUTS on small targets) against the generic ones:
// the same values bit for bit, for every size they serve and for unit and diagonal metrics,
// along trajectories in both directions and through a non-finite gradient.
template <int N>
void expect_fixed_matches_generic(const targets::Target& target, const Metric& metric,
                                  std::uint64_t seed, double eps) {
  Hamiltonian hf(target, metric), hg(target, metric);
  ASSERT_TRUE(hf.fixed_size_ok());
  for (int t = 0; t < 20; ++t) {
    PhasePoint zf(N), zg(N);
    for (int i = 0; i < N; ++i) zf.q[i] = zg.q[i] = 0.3 * (i + 1) - 0.1 * t;
    hf.update_potential_gradient_fixed<N>(zf);
    hg.update_potential_gradient(zg);
    ASSERT_TRUE(same_bits(zf.potential, zg.potential));
    rng::Stream sf(seed, rng::Domain::kTest, 0, static_cast<std::uint64_t>(t));
    rng::Stream sg(seed, rng::Domain::kTest, 0, static_cast<std::uint64_t>(t));
    hf.sample_momentum_fixed<N>(sf, zf);
    hg.sample_momentum(sg, zg);
    ASSERT_TRUE(same_bits(zf.p, zg.p) && same_bits(zf.velocity, zg.velocity) &&
                same_bits(zf.kinetic, zg.kinetic))
        << "momentum, N = " << N << ", draw " << t;
    ASSERT_EQ(sf.bits(), sg.bits()) << "the same number of words drawn";
    const double signed_eps = t % 2 == 0 ? eps : -eps;
    for (int step = 0; step < 15; ++step) {
      const bool ok_f = leapfrog_step_fixed<N>(zf, signed_eps, hf);
      const bool ok_g = leapfrog_step(zg, signed_eps, hg);
      ASSERT_EQ(ok_f, ok_g) << "N = " << N << ", draw " << t << ", step " << step;
      ASSERT_TRUE(same_bits(zf.q, zg.q) && same_bits(zf.p, zg.p) &&
                  same_bits(zf.grad, zg.grad) && same_bits(zf.potential, zg.potential))
          << "N = " << N << ", draw " << t << ", step " << step;
      if (!ok_f) break;
      ASSERT_TRUE(same_bits(zf.velocity, zg.velocity) && same_bits(zf.kinetic, zg.kinetic));
    }
  }
  EXPECT_EQ(hf.n_gradient_evals(), hg.n_gradient_evals());
}

template <int N>
void expect_fixed_matches_generic_all(std::uint64_t seed) {
  Vector diag(N);
  for (int i = 0; i < N; ++i) diag[i] = 0.45 + 0.7 * i;
  QuarticTarget quartic(N);
  InfGradientAbove inf_gradient(N);
  for (const Metric& m : {Metric::unit(N), Metric::diagonal(diag)}) {
    expect_fixed_matches_generic<N>(quartic, m, seed, 0.11);
    expect_fixed_matches_generic<N>(inf_gradient, m, seed + 1, 0.4);
  }
}

TEST(Leapfrog, FixedSizeStepAndMomentumAreBitIdenticalToGeneric) {
  expect_fixed_matches_generic_all<1>(101);
  expect_fixed_matches_generic_all<2>(102);
  expect_fixed_matches_generic_all<3>(103);
  expect_fixed_matches_generic_all<4>(104);
}

// The unit-metric step (two coordinates per SSE2 instruction, hmc::detail::unit_drift/unit_kick)
// against the scalar formulas it implements, p -= eps/2 g, q += eps p, p -= eps/2 g,
// K = 0.5 sum_i p_i^2 summed in coordinate order: the same bits for even and odd dimensions and
// both directions.
TEST(Leapfrog, UnitMetricStepIsTheScalarFormulasBitForBit) {
  for (int d = 1; d <= 9; ++d) {
    QuarticTarget target(d);
    const Metric unit = Metric::unit(d);
    Hamiltonian h(target, unit);
    PhasePoint z = start_point(h, d, 300 + static_cast<std::uint64_t>(d));
    Vector q = z.q, p = z.p, g = z.grad;
    for (int step = 0; step < 12; ++step) {
      const double eps = step % 3 == 2 ? -0.13 : 0.09;
      const double half = 0.5 * eps;
      for (int i = 0; i < d; ++i) {
        p[i] = p[i] - half * g[i];
        q[i] += eps * p[i];
      }
      target.potential_and_gradient(q, g);
      double two_k = 0.0;
      for (int i = 0; i < d; ++i) {
        p[i] = p[i] - half * g[i];
        two_k += p[i] * p[i];
      }
      ASSERT_TRUE(leapfrog_step(z, eps, h));
      ASSERT_TRUE(same_bits(z.q, q) && same_bits(z.p, p) && same_bits(z.velocity, p) &&
                  same_bits(z.grad, g) && same_bits(z.kinetic, 0.5 * two_k))
          << "d = " << d << ", step " << step;
    }
  }
}

TEST(Leapfrog, FixedSizeNeedsUnpartitionedUnitOrDiagonalMetric) {
  QuarticTarget target(3);
  const Metric dense = Metric::dense(test_inverse_metric(3));
  EXPECT_FALSE(Hamiltonian(target, dense).fixed_size_ok());
  const Metric unit = Metric::unit(3);
  EXPECT_TRUE(Hamiltonian(target, unit).fixed_size_ok());
}

}  // namespace
}  // namespace pemc::hmc
