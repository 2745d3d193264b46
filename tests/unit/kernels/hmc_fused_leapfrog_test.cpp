// HmcKernel fuses each full kick with the next drift (unit metric) into one pass; the trajectory
// must be bit-identical to the two-pass form p -= eps g; q += eps p (with half kicks at both ends),
// reproduced here step by step from the same stream, for odd and even dimensions.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "kernels/hmc.hpp"
#include "rng/stream.hpp"
#include "targets/gaussian.hpp"

namespace pemc::kernels {
namespace {

TEST(HmcFusedLeapfrog, BitIdenticalToTheTwoPassLeapfrog) {
  for (int d : {1, 2, 5, 8, 11}) {
    Matrix a = Matrix::Random(d, d);
    const Matrix cov = a * a.transpose() + 0.5 * Matrix::Identity(d, d);
    auto target = std::make_shared<targets::Gaussian>(Vector::LinSpaced(d, -1.0, 2.0), cov);
    HmcOptions o;
    o.step_size = 0.13;
    o.n_leapfrog = 7;
    HmcKernel kernel(target, hmc::Metric::unit(d), o);
    ChainState state;
    state.x = Vector::LinSpaced(d, 0.5, -0.5);
    state.grad.resize(d);
    state.potential = target->potential_and_gradient(state.x, state.grad);
    for (std::uint64_t it = 0; it < 30; ++it) {
      // Reference: the same draws from the same stream, two passes per step.
      rng::Stream ref_stream(9, rng::Domain::kTransition, 0, it);
      Vector q = state.x, g = state.grad, p(d);
      ref_stream.fill_normal(p.data(), d);
      const double h0 = state.potential + 0.5 * p.squaredNorm();
      double u = state.potential;
      p.noalias() -= (0.5 * o.step_size) * g;
      for (int step = 1; step <= o.n_leapfrog; ++step) {
        q.noalias() += o.step_size * p;
        u = target->potential_and_gradient(q, g);
        p.noalias() -= (step < o.n_leapfrog ? o.step_size : 0.5 * o.step_size) * g;
      }
      const double h1 = u + 0.5 * p.squaredNorm();
      const bool accept = std::log(ref_stream.uniform()) < h0 - h1;
      const Vector expected_x = accept ? q : state.x;

      rng::Stream stream(9, rng::Domain::kTransition, 0, it);
      const TransitionStats stats = kernel.transition(state, stream);
      ASSERT_EQ(stats.accepted, accept) << "d " << d << " iteration " << it;
      ASSERT_EQ(stats.energy, accept ? h1 : h0) << "d " << d << " iteration " << it;
      for (int i = 0; i < d; ++i) ASSERT_EQ(state.x[i], expected_x[i]) << "d " << d << " i " << i;
    }
  }
}

}  // namespace
}  // namespace pemc::kernels
