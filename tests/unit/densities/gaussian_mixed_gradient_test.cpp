// Gaussian::potential_and_mixed_gradient: on every kFast evaluation path (diagonal factor, the AVX2
// product path for each padded size 4..32 and beyond, substitution for an ill-conditioned factor)
// it must give exactly the bits of potential_and_gradient followed by the Eigen expression
// w_phi grad_phi + w_psi grad_psi, in place too, and reject spans of the wrong size.
#include <gtest/gtest.h>

#include <cmath>
#include <span>

#include "core/error.hpp"
#include "densities/gaussian.hpp"
#include "rng/stream.hpp"

namespace pemc::densities {
namespace {

enum class Kind { kDiagonal, kDense, kIllConditioned };

Gaussian make_base(int d, Kind kind, std::uint64_t seed) {
  rng::Stream s(seed, rng::Domain::kTest, static_cast<std::uint64_t>(d), 0);
  Vector mu(d);
  s.fill_normal(mu);
  Matrix l = Matrix::Zero(d, d);
  for (int j = 0; j < d; ++j)
    for (int i = j; i < d; ++i)
      l(i, j) = i == j ? 0.5 + std::fabs(s.normal()) : (kind == Kind::kDiagonal ? 0.0 : 0.3 * s.normal());
  // Diagonal entries spanning ~1e-7..1: d eps cond(L) > 1e-10, so the substitution path is used.
  if (kind == Kind::kIllConditioned)
    for (int j = 0; j < d; ++j) l(j, j) *= std::pow(1e-4, double(j) / std::max(1, d - 1)) * (j % 2 ? 1e-3 : 1.0);
  return Gaussian::from_cholesky(mu, l);
}

TEST(GaussianMixedGradient, BitIdenticalToGradientThenMixingOnEveryPath) {
  for (const Kind kind : {Kind::kDiagonal, Kind::kDense, Kind::kIllConditioned}) {
    for (int d : {1, 2, 3, 4, 5, 7, 8, 13, 27, 28, 31, 32, 33, 45}) {
      const Gaussian base = make_base(d, kind, 3);
      rng::Stream s(5, rng::Domain::kTest, static_cast<std::uint64_t>(d), 1);
      Vector x(d), grad_phi(d), grad_psi(d), expected(d), out(d), out_psi(d);
      for (int t = 0; t < 20; ++t) {
        s.fill_normal(x);
        x = 2.0 * x + base.mean();
        s.fill_normal(grad_phi);
        const double beta = s.uniform();
        const double psi = base.potential_and_gradient(x, grad_psi);
        expected.noalias() = beta * grad_phi + (1.0 - beta) * grad_psi;
        const auto n = static_cast<std::size_t>(d);
        out.setConstant(123.0);
        out_psi.setConstant(123.0);
        const double v = base.potential_and_mixed_gradient(
            {x.data(), n}, {beta, 1.0 - beta, {grad_phi.data(), n}, {out.data(), n},
                            {out_psi.data(), n}});
        EXPECT_EQ(v, psi) << "d " << d;
        EXPECT_EQ(v, base.potential(x)) << "d " << d;
        for (int i = 0; i < d; ++i) {
          ASSERT_EQ(out[i], expected[i]) << "d " << d << " i " << i;
          ASSERT_EQ(out_psi[i], grad_psi[i]) << "d " << d << " i " << i;
        }
        // In place (out = grad_phi's storage), without grad psi.
        Vector inplace = grad_phi;
        base.potential_and_mixed_gradient(
            {x.data(), n}, {beta, 1.0 - beta, {inplace.data(), n}, {inplace.data(), n}, {}});
        for (int i = 0; i < d; ++i) ASSERT_EQ(inplace[i], expected[i]) << "d " << d << " i " << i;
      }
    }
  }
}

TEST(GaussianMixedGradient, RejectsSpansOfTheWrongSize) {
  const Gaussian base = make_base(5, Kind::kDense, 7);
  Vector x = Vector::Zero(5), g = Vector::Zero(5), out(5), small(4);
  EXPECT_THROW(base.potential_and_mixed_gradient({x.data(), 4}, {0.5, 0.5, {g.data(), 5}, {out.data(), 5}, {}}),
               NumericalError);
  EXPECT_THROW(base.potential_and_mixed_gradient({x.data(), 5}, {0.5, 0.5, {g.data(), 5}, {small.data(), 4}, {}}),
               NumericalError);
  EXPECT_THROW(base.potential_and_mixed_gradient({x.data(), 5}, {0.5, 0.5, {g.data(), 5}, {out.data(), 5}, {small.data(), 4}}),
               NumericalError);
}

}  // namespace
}  // namespace pemc::extended
