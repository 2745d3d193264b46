// The Boltzmann machine relaxation target: potential, gradient, exact truth, config entry point.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "pemc/v1/config.pb.h"
#include "rng/stream.hpp"
#include "support/gradient_check.hpp"
#include "support/batch_support.hpp"
#include "targets/boltzmann.hpp"

namespace pemc::targets {
namespace {

const std::filesystem::path kPe28 = std::filesystem::path(PEMC_SHARED_DIR) / "data/boltzmann-pe28";

Matrix random_matrix(int rows, int cols, double scale, std::uint64_t seed) {
  rng::Stream s(seed, rng::Domain::kTest, 7, 0);
  Matrix m(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = scale * s.normal();
  return m;
}

TEST(BoltzmannRelaxation, PotentialIsTheFormula) {
  const Matrix Q = random_matrix(8, 5, 0.7, 1);
  const Vector b = random_matrix(8, 1, 0.3, 2).col(0);
  const BoltzmannRelaxation t(Q, b);
  EXPECT_EQ(t.dim(), 5);
  EXPECT_EQ(t.n_units(), 8);
  EXPECT_EQ(t.name(), "boltzmann");
  const Vector x = random_matrix(5, 1, 1.0, 3).col(0);
  double want = 0.5 * x.squaredNorm();
  for (int k = 0; k < 8; ++k) want -= std::log(std::cosh(Q.row(k).dot(x) + b[k]));
  EXPECT_NEAR(t.potential(x), want, 1e-12 * std::fabs(want));
  // Far out: log cosh must not overflow (cosh(800) = inf in double).
  const Vector far = Vector::Constant(5, 400.0);
  const double u = t.potential(far);
  EXPECT_TRUE(std::isfinite(u));
  double want_far = 0.5 * far.squaredNorm();
  for (int k = 0; k < 8; ++k) {
    const double z = Q.row(k).dot(far) + b[k];
    // cosh overflows beyond ~710; there log cosh z = |z| - log 2 to double precision.
    want_far -= std::fabs(z) < 300 ? std::log(std::cosh(z)) : std::fabs(z) - std::numbers::ln2;
  }
  EXPECT_NEAR(u, want_far, 1e-12 * std::fabs(want_far));
}

TEST(BoltzmannRelaxation, GradientMatchesFiniteDifferences) {
  const Matrix Q = random_matrix(10, 6, 0.8, 4);
  const Vector b = random_matrix(10, 1, 0.2, 5).col(0);
  const BoltzmannRelaxation t(Q, b);
  for (std::uint64_t k = 0; k < 5; ++k) {
    const Vector x = random_matrix(6, 1, 1.0 + 3.0 * double(k), 10 + k).col(0);
    pemc::testing::expect_gradient_matches(t, x, 1e-6);
  }
  // From (W, b): the solved factor.
  const BoltzmannRelaxation g(generate_boltzmann_machine(3, 9));
  pemc::testing::expect_gradient_matches(g, Vector::Constant(g.dim(), 0.3), 1e-6);
}

// Tensor-grid trapezoid sums of exp(-phi) f(x) over [-R, R]^d. For integrands that are Gaussian
// mixtures with unit variance the trapezoid rule's error is ~exp(-2 pi^2 / h^2) (h = 0.25: 1e-137)
// once the box holds all mass, so these are exact to rounding.
struct Quadrature {
  double log_z;
  Vector mean;
  Matrix cross;
  Vector mean_s_rb;  // ∫ tanh(Qx + b) pi(x) dx
};

Quadrature integrate(const BoltzmannRelaxation& t) {
  const int d = t.dim();
  EXPECT_LE(d, 3);
  double reach = 0.0;  // max over s of |Q's|_inf bounds the component means
  for (int j = 0; j < d; ++j) reach = std::max(reach, t.q().col(j).cwiseAbs().sum());
  const double R = reach + 10.0, h = 0.25;
  const int m = static_cast<int>(std::ceil(2 * R / h)) + 1;
  Vector x(d), grad(d);
  double z = 0.0;
  Vector sx = Vector::Zero(d), ss = Vector::Zero(t.n_units());
  Matrix sxx = Matrix::Zero(d, d);
  const double u0 = t.potential(Vector::Zero(d));  // a fixed offset (any value works)
  long total = 1;
  for (int j = 0; j < d; ++j) total *= m;
  for (long idx = 0; idx < total; ++idx) {
    long r = idx;
    for (int j = 0; j < d; ++j) {
      x[j] = -R + h * double(r % m);
      r /= m;
    }
    const double w = std::exp(-(t.potential(x) - u0));
    z += w;
    sx += w * x;
    sxx += w * x * x.transpose();
    ss += w * rao_blackwell_mean_s(t, x);
  }
  return {std::log(z * std::pow(h, d)) - u0, sx / z, sxx / z, ss / z};
}

void expect_truth_matches_quadrature(const BoltzmannRelaxation& t) {
  const Truth truth = t.truth();
  const Quadrature q = integrate(t);
  ASSERT_TRUE(truth.log_z && truth.mean && truth.cross_moment && truth.second_moment);
  EXPECT_NEAR(*truth.log_z, q.log_z, 1e-10 * std::max(1.0, std::fabs(q.log_z)));
  for (int i = 0; i < t.dim(); ++i) {
    EXPECT_NEAR((*truth.mean)[i], q.mean[i], 1e-10) << "E[x_" << i << "]";
    EXPECT_NEAR((*truth.second_moment)[i], q.cross(i, i), 1e-9) << "E[x_" << i << "^2]";
    for (int j = 0; j < t.dim(); ++j)
      EXPECT_NEAR((*truth.cross_moment)(i, j), q.cross(i, j), 1e-9) << "E[x_" << i << " x_" << j << "]";
  }
  // E[s] = E[E[s | x]] = E[tanh(Qx + b)] (Rao-Blackwellisation).
  const std::vector<double>& mean_s = truth.extras.at("mean_s");
  ASSERT_EQ(static_cast<int>(mean_s.size()), t.n_units());
  for (int k = 0; k < t.n_units(); ++k) EXPECT_NEAR(mean_s[k], q.mean_s_rb[k], 1e-10) << "E[s_" << k << "]";
}

TEST(BoltzmannRelaxation, TruthMatchesQuadratureFromFactor) {
  // d_b = 3, d = 2 from a Q given directly (any Q: the truth enumerates M = QQ').
  Matrix Q(3, 2);
  Q << 1.2, 0.3, -0.8, 0.9, 0.4, -1.1;
  Vector b(3);
  b << 0.2, -0.5, 0.1;
  expect_truth_matches_quadrature(BoltzmannRelaxation(Q, b));
  // d_b = 4, d = 3.
  const Matrix Q3 = random_matrix(4, 3, 0.6, 40);
  const Vector b3 = random_matrix(4, 1, 0.3, 41).col(0);
  expect_truth_matches_quadrature(BoltzmannRelaxation(Q3, b3));
}

TEST(BoltzmannRelaxation, TruthMatchesQuadratureFromWeights) {
  // d_b = 2 (d = 1) and a generated d_b = 3 machine, through the SDP and the factor.
  BoltzmannMachine two;
  two.W.resize(2, 2);
  two.W << 0, -1.7, -1.7, 0;
  two.b = Vector(2);
  two.b << 0.3, 0.1;
  const BoltzmannRelaxation t2(two);
  EXPECT_EQ(t2.dim(), 1);
  expect_truth_matches_quadrature(t2);
  for (std::uint64_t seed : {11u, 12u, 13u}) {
    const BoltzmannRelaxation t3(generate_boltzmann_machine(seed, 3, 2.0, 2.0, 0.3));
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " d " << t3.dim());
    expect_truth_matches_quadrature(t3);
  }
}

TEST(BoltzmannRelaxation, TruthExtrasAndRelationToTheMachine) {
  const BoltzmannMachine m = generate_boltzmann_machine(21, 14);
  const BoltzmannRelaxation t(m);
  EXPECT_LE(t.factor_residual(), 1e-6);
  const Truth truth = t.truth();
  const BoltzmannTruth direct = enumerate_boltzmann(m.W, m.b);
  // log_z_boltzmann is Z_B of offdiag(QQ') = W up to the factor residual.
  ASSERT_EQ(truth.extras.at("log_z_boltzmann").size(), 1u);
  EXPECT_NEAR(truth.extras.at("log_z_boltzmann")[0], direct.log_z_b, 1e-6);
  // CT eq. (52): log Z = log Z_B + Tr(D)/2 + (d/2) log 2 pi - d_b log 2.
  const double eq52 = direct.log_z_b + 0.5 * t.diagonal().sum() +
                      0.5 * t.dim() * kLog2Pi - 14 * std::numbers::ln2;
  EXPECT_NEAR(*truth.log_z, eq52, 1e-6);
  EXPECT_NEAR(truth.extras.at("trace_d")[0], t.diagonal().sum(), 1e-6);
  // Eqs. (53)-(54).
  const Vector mean = t.q().transpose() * direct.mean_s;
  EXPECT_LE((*truth.mean - mean).cwiseAbs().maxCoeff(), 1e-6);
  Matrix cross = t.q().transpose() * direct.second_moment_s * t.q();
  cross.diagonal().array() += 1.0;
  EXPECT_LE((*truth.cross_moment - cross).cwiseAbs().maxCoeff(), 1e-6);
  // Cached: the same object, the same numbers.
  EXPECT_EQ(*t.truth().log_z, *truth.log_z);
}

TEST(BoltzmannRelaxation, NoTruthAboveTheEnumerationLimit) {
  BoltzmannRelaxationOptions o;
  o.max_enumeration_units = 10;
  const BoltzmannRelaxation t(generate_boltzmann_machine(2, 12), o);
  const Truth truth = t.truth();
  EXPECT_FALSE(truth.log_z.has_value());
  EXPECT_FALSE(truth.mean.has_value());
  EXPECT_THROW(t.boltzmann_truth(), NumericalError);
}

TEST(BoltzmannRelaxation, RaoBlackwellMeanIsTanh) {
  const Matrix Q = random_matrix(6, 4, 0.9, 30);
  const Vector b = random_matrix(6, 1, 0.4, 31).col(0);
  const BoltzmannRelaxation t(Q, b);
  const Vector x = random_matrix(4, 1, 1.0, 32).col(0);
  const Vector got = rao_blackwell_mean_s(t, x);
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(got[k], std::tanh(Q.row(k).dot(x) + b[k]), 1e-15);
}

TEST(BoltzmannRelaxation, RejectsBadShapes) {
  EXPECT_THROW(BoltzmannRelaxation(Matrix::Ones(3, 2), Vector::Zero(2)), NumericalError);
  Matrix bad = Matrix::Ones(3, 2);
  bad(0, 0) = std::nan("");
  EXPECT_THROW(BoltzmannRelaxation(bad, Vector::Zero(3)), NumericalError);
  BoltzmannRelaxationOptions o;
  o.max_enumeration_units = 41;
  EXPECT_THROW(BoltzmannRelaxation(Matrix::Ones(3, 2), Vector::Zero(3), o), ConfigError);
}

// ---- config entry point ----

TEST(MakeBoltzmann, Generated) {
  pemc::v1::BoltzmannTarget c;
  c.mutable_generated()->set_seed(5);
  c.mutable_generated()->set_n_units(10);
  const auto t = make_boltzmann(c);
  EXPECT_EQ(t->n_units(), 10);
  // Defaults 6, 2, 0.1 are the generator's defaults.
  const BoltzmannRelaxation same(generate_boltzmann_machine(5, 10));
  EXPECT_TRUE(t->q() == same.q());
  EXPECT_TRUE(t->b() == same.b());
  EXPECT_TRUE(t->truth().log_z.has_value());
}

TEST(MakeBoltzmann, FromShippedFiles) {
  pemc::v1::BoltzmannTarget c;
  c.set_weights_file((kPe28 / "W.txt").string());
  c.set_bias_file((kPe28 / "b.txt").string());
  const auto t = make_boltzmann(c);
  EXPECT_EQ(t->n_units(), 28);
  EXPECT_EQ(t->dim(), 24);  // the exact optimum's rank (see sdp test)

  pemc::v1::BoltzmannTarget cq;
  cq.set_q_file((kPe28 / "Q.txt").string());
  cq.set_bias_file((kPe28 / "b.txt").string());
  cq.set_max_enumeration_units(20);  // no enumeration of 2^28 states in a unit test
  const auto tq = make_boltzmann(cq);
  EXPECT_EQ(tq->n_units(), 28);
  EXPECT_EQ(tq->dim(), 27);
  EXPECT_FALSE(tq->truth().log_z.has_value());
}

TEST(MakeBoltzmann, ConfigErrorsNameTheField) {
  const auto message = [](const pemc::v1::BoltzmannTarget& c) -> std::string {
    try {
      make_boltzmann(c);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  pemc::v1::BoltzmannTarget none;
  EXPECT_NE(message(none).find("exactly one"), std::string::npos);
  pemc::v1::BoltzmannTarget two;
  two.set_weights_file("W.txt");
  two.set_bias_file("b.txt");
  two.mutable_generated()->set_n_units(4);
  EXPECT_NE(message(two).find("exactly one"), std::string::npos);
  pemc::v1::BoltzmannTarget no_bias;
  no_bias.set_q_file("Q.txt");
  EXPECT_NE(message(no_bias).find("target.boltzmann.bias_file"), std::string::npos);
  pemc::v1::BoltzmannTarget small;
  small.mutable_generated()->set_n_units(1);
  EXPECT_NE(message(small).find("target.boltzmann.generated.n_units"), std::string::npos);
  pemc::v1::BoltzmannTarget neg;
  neg.mutable_generated()->set_n_units(4);
  neg.mutable_generated()->set_bias_scale(-1);
  EXPECT_NE(message(neg).find("target.boltzmann.generated.bias_scale"), std::string::npos);
  pemc::v1::BoltzmannTarget limit;
  limit.mutable_generated()->set_n_units(4);
  limit.set_max_enumeration_units(-3);
  EXPECT_NE(message(limit).find("target.boltzmann.max_enumeration_units"), std::string::npos);
}

// ---- potential_and_gradient_batch (pseudo-extended HMC's N pseudo-samples in one call) ---------

// pe28's shipped factor (d_b = 28, d = 27), the pseudo-extended benchmark's target.
std::shared_ptr<BoltzmannRelaxation> pe28_from_q() {
  pemc::v1::BoltzmannTarget c;
  c.set_q_file((kPe28 / "Q.txt").string());
  c.set_bias_file((kPe28 / "b.txt").string());
  c.set_max_enumeration_units(20);  // no truth needed
  return make_boltzmann(c);
}

Vector random_point(rng::Stream& s, int d, double scale) {
  Vector x(d);
  for (int i = 0; i < d; ++i) x[i] = scale * s.normal();
  return x;
}

using testing::BatchResult;
using testing::run_batch;

// The same bits (NaN payloads included).
bool same(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// Point j of `r` has exactly the bits of point k of `want`.
void expect_same_point(const BatchResult& r, std::size_t j, const BatchResult& want, std::size_t k,
                       std::size_t d) {
  EXPECT_TRUE(same(r.u[j], want.u[k])) << r.u[j] << " vs " << want.u[k];
  for (std::size_t i = 0; i < d; ++i)
    EXPECT_TRUE(same(r.g[j * d + i], want.g[k * d + i])) << "gradient entry " << i;
}

// The batch path rounds differently from the single one (FMAs in a fixed order against Eigen's
// products, SLEEF against libm), each by a few eps times the magnitudes that enter a result, not
// times the result: phi = 0.5 x'x - sum_k log cosh a_k can cancel, each log cosh carries an
// absolute error ~eps whatever its size (|a| + log1p(e) - log 2 for a near 0), a_k = b_k + q_k'x
// an error ~d eps (|b_k| + sum_j |Q_kj x_j|), passed on to tanh a_k with a factor <= 1. So the
// tolerances are 1e-13 (~450 eps) times those magnitudes (the absolute floors):
//   phi:    0.5 x'x + sum_k (log 2 + |b_k| + sum_j |Q_kj x_j|)
//   grad_j: |x_j| + sum_k |Q_kj| (1 + |b_k| + sum_i |Q_ki x_i|)
void expect_batch_near_single(const BoltzmannRelaxation& t, const Vector& x, double u,
                              const double* g, const std::string& where) {
  const Matrix& q = t.q();
  const Vector mag = t.b().cwiseAbs() + q.cwiseAbs() * x.cwiseAbs();  // bounds |a_k|, its terms
  Vector gs(t.dim());
  const double us = t.potential_and_gradient(x, gs);
  const double u_scale = 0.5 * x.squaredNorm() + (mag.array() + std::numbers::ln2).sum();
  EXPECT_NEAR(u, us, 1e-13 * u_scale) << where;
  const Vector g_scale =
      x.cwiseAbs() + q.cwiseAbs().transpose() * (mag.array() + 1.0).matrix();
  for (int i = 0; i < t.dim(); ++i)
    EXPECT_NEAR(g[i], gs[i], 1e-13 * g_scale[i]) << where << " gradient entry " << i;
}

// Small random factors (both remainder paths: d_b and d below, at and above multiples of 4) and
// pe28, every batch size 1..9 (last passes with 1, 2 or 3 padding lanes), points near the origin
// and far out (tanh saturated).
TEST(BoltzmannBatch, AgreesWithSingleEvaluations) {
  rng::Stream s(31, rng::Domain::kTest, 1, 0);
  std::vector<std::shared_ptr<const BoltzmannRelaxation>> targets = {pe28_from_q()};
  std::uint64_t seed = 100;
  for (int units = 1; units <= 9; ++units)
    for (int d = 1; d <= 5; ++d, seed += 2)
      targets.push_back(std::make_shared<BoltzmannRelaxation>(
          random_matrix(units, d, 0.8, seed), random_matrix(units, 1, 0.3, seed + 1).col(0)));
  for (const auto& t : targets) {
    const int d = t->dim();
    for (int m = 1; m <= 9; ++m) {
      std::vector<Vector> points;
      for (int j = 0; j < m; ++j) points.push_back(random_point(s, d, j % 3 == 2 ? 30.0 : 1.5));
      const BatchResult r = run_batch(*t, points);
      for (int j = 0; j < m; ++j)
        expect_batch_near_single(*t, points[j], r.u[j], r.g.data() + j * d,
                                 "d_b " + std::to_string(t->n_units()) + " d " +
                                     std::to_string(d) + " m " + std::to_string(m) + " j " +
                                     std::to_string(j));
    }
  }
}

// The batch contract: a point's bits depend neither on its neighbours, nor its position, nor the
// batch size (a pseudo-extended chain split over 1, 2 or 4 ranks relies on it).
TEST(BoltzmannBatch, APointsBitsDoNotDependOnItsBatch) {
  rng::Stream s(32, rng::Domain::kTest, 1, 0);
  const std::vector<std::shared_ptr<const BoltzmannRelaxation>> targets = {
      pe28_from_q(),
      std::make_shared<BoltzmannRelaxation>(random_matrix(7, 5, 0.8, 40),
                                            random_matrix(7, 1, 0.3, 41).col(0))};
  for (const auto& t : targets) {
    const int d = t->dim();
    const auto du = static_cast<std::size_t>(d);
    std::vector<Vector> pool;
    for (int j = 0; j < 9; ++j) pool.push_back(random_point(s, d, 2.0));
    const BatchResult all = run_batch(*t, pool);
    for (std::size_t p = 0; p < pool.size(); ++p) {
      SCOPED_TRACE("d " + std::to_string(d) + " point " + std::to_string(p));
      expect_same_point(run_batch(*t, {pool[p]}), 0, all, p, du);
      // At every position of every batch size, among fresh neighbours.
      for (std::size_t m = 1; m <= 9; ++m)
        for (std::size_t at = 0; at < m; ++at) {
          std::vector<Vector> batch;
          for (std::size_t l = 0; l < m; ++l)
            batch.push_back(l == at ? pool[p] : random_point(s, d, l % 2 ? 30.0 : 2.0));
          expect_same_point(run_batch(*t, batch), at, all, p, du);
        }
    }
  }
}

// Central differences of the batch path's own potential (all 2d shifted points in one batch).
TEST(BoltzmannBatch, GradientMatchesFiniteDifferences) {
  rng::Stream s(33, rng::Domain::kTest, 1, 0);
  const std::vector<std::shared_ptr<const BoltzmannRelaxation>> targets = {
      pe28_from_q(),
      std::make_shared<BoltzmannRelaxation>(random_matrix(9, 5, 0.8, 50),
                                            random_matrix(9, 1, 0.3, 51).col(0))};
  for (const auto& t : targets) {
    const int d = t->dim();
    for (const double scale : {0.5, 2.0, 5.0}) {
      const Vector x = random_point(s, d, scale);
      std::vector<Vector> shifted;
      Vector h(d);
      for (int i = 0; i < d; ++i) {
        h[i] = 1e-5 * std::max(1.0, std::fabs(x[i]));
        for (const double sign : {1.0, -1.0}) {
          shifted.push_back(x);
          shifted.back()[i] += sign * h[i];
        }
      }
      const BatchResult fd = run_batch(*t, shifted);
      const BatchResult at = run_batch(*t, {x});
      double fd_max = 1.0;
      for (int i = 0; i < d; ++i)
        fd_max = std::max(fd_max, std::fabs((fd.u[2 * i] - fd.u[2 * i + 1]) / (2.0 * h[i])));
      for (int i = 0; i < d; ++i)
        EXPECT_NEAR(at.g[i], (fd.u[2 * i] - fd.u[2 * i + 1]) / (2.0 * h[i]), 1e-6 * fd_max)
            << "d " << d << " scale " << scale << " d/dx_" << i;
    }
  }
}

// Huge |a| (exp(-2|a|) underflows; x'x overflows at 1e200), ±inf and NaN coordinates: each
// such point gets the single path's special values (NaN where it gives NaN, the same infinities),
// its finite results agree with it, and its neighbours keep their bits.
TEST(BoltzmannBatch, ExtremeInputsStayInTheirLane) {
  rng::Stream s(34, rng::Domain::kTest, 1, 0);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::shared_ptr<const BoltzmannRelaxation>> targets = {
      pe28_from_q(),
      std::make_shared<BoltzmannRelaxation>(random_matrix(6, 3, 0.8, 60),
                                            random_matrix(6, 1, 0.3, 61).col(0))};
  for (const auto& t : targets) {
    const int d = t->dim();
    const auto du = static_cast<std::size_t>(d);
    std::vector<Vector> bad = {Vector::Constant(d, 1e3), Vector::Constant(d, -1e3),
                               Vector::Constant(d, 1e200), random_point(s, d, 1.0),
                               random_point(s, d, 1.0), random_point(s, d, 1.0)};
    bad[3][0] = inf;
    bad[4][d - 1] = -inf;
    bad[5][d / 2] = nan;
    const Vector good = random_point(s, d, 1.5);
    const BatchResult alone = run_batch(*t, {good});
    for (std::size_t b = 0; b < bad.size(); ++b)
      for (std::size_t at = 0; at < 4; ++at) {
        SCOPED_TRACE("d " + std::to_string(d) + " bad point " + std::to_string(b) + " at " +
                     std::to_string(at));
        std::vector<Vector> batch(5, good);
        batch[at] = bad[b];
        const BatchResult r = run_batch(*t, batch);
        for (std::size_t j = 0; j < batch.size(); ++j)
          if (j != at) expect_same_point(r, j, alone, 0, du);
        Vector gs(d);
        const double us = t->potential_and_gradient(bad[b], gs);
        if (b < 2) {
          ASSERT_TRUE(std::isfinite(us));
          expect_batch_near_single(*t, bad[b], r.u[at], r.g.data() + at * du, "huge |a|");
          continue;
        }
        EXPECT_FALSE(std::isfinite(r.u[at]));
        const auto same_class = [](double got, double want) {
          return std::isnan(got) ? std::isnan(want) : std::isinf(got) ? got == want
                                                                        : std::isfinite(want);
        };
        EXPECT_TRUE(same_class(r.u[at], us)) << r.u[at] << " vs single " << us;
        for (int i = 0; i < d; ++i) {
          const double g = r.g[at * du + static_cast<std::size_t>(i)];
          EXPECT_TRUE(same_class(g, gs[i])) << "gradient entry " << i << ": " << g << " vs "
                                            << gs[i];
          if (std::isfinite(gs[i])) {
            EXPECT_NEAR(g, gs[i], 1e-13 * std::max(1.0, std::fabs(gs[i]) +
                                                            t->q().col(i).cwiseAbs().sum()));
          }
        }
      }
  }
}

TEST(BoltzmannBatch, WrongShapesAreRefused) {
  const BoltzmannRelaxation t(random_matrix(4, 3, 0.8, 70), Vector::Zero(4));
  std::vector<double> x(6, 1.0), u(2), g(5);
  EXPECT_THROW(t.potential_and_gradient_batch(x, u, g), std::invalid_argument);
  std::vector<double> g6(6), u3(3);
  EXPECT_THROW(t.potential_and_gradient_batch(x, u3, g6), std::invalid_argument);
  std::vector<double> x7(7, 1.0);
  EXPECT_THROW(t.potential_and_gradient_batch(x7, u, g6), std::invalid_argument);
  std::vector<double> none;
  EXPECT_NO_THROW(t.potential_and_gradient_batch(none, none, none));  // m = 0: nothing to do
}

}  // namespace
}  // namespace pemc::targets
