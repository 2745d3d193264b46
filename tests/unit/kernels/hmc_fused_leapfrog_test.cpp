// HmcKernel fuses each full kick with the next drift (unit metric) into one pass; the trajectory
// must be bit-identical to the two-pass form p -= eps g; q += eps p (with half kicks at both ends),
// reproduced here step by step from the same stream, for odd and even dimensions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "kernels/hmc.hpp"
#include "rng/stream.hpp"
#include "targets/gaussian.hpp"

namespace pemc::kernels {
namespace {

TEST(HmcFusedLeapfrog, BitIdenticalToTheTwoPassLeapfrog) {
  for (int d : {1, 2, 3, 4, 5, 8, 11}) {
    // Short trajectories (1 step: two half kicks; 2: one full kick) and a large step, so that
    // both outcomes of the acceptance are compared.
    for (int n_leapfrog : {1, 2, 7}) {
      for (double step_size : {0.13, 0.9}) {
        SCOPED_TRACE("d " + std::to_string(d) + ", n_leapfrog " + std::to_string(n_leapfrog) +
                     ", step size " + std::to_string(step_size));
        Matrix a = Matrix::Random(d, d);
        const Matrix cov = a * a.transpose() + 0.5 * Matrix::Identity(d, d);
        auto target = std::make_shared<targets::Gaussian>(Vector::LinSpaced(d, -1.0, 2.0), cov);
        HmcOptions o;
        o.step_size = step_size;
        o.n_leapfrog = n_leapfrog;
        HmcKernel kernel(target, hmc::Metric::unit(d), o);
        ChainState state;
        state.x = Vector::LinSpaced(d, 0.5, -0.5);
        state.grad.resize(d);
        state.potential = target->potential_and_gradient(state.x, state.grad);
        int n_accepted = 0;
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
          n_accepted += accept;
          const Vector expected_x = accept ? q : state.x;

          rng::Stream stream(9, rng::Domain::kTransition, 0, it);
          const TransitionStats stats = kernel.transition(state, stream);
          ASSERT_EQ(stats.accepted, accept) << "iteration " << it;
          ASSERT_EQ(stats.energy, accept ? h1 : h0) << "iteration " << it;
          for (int i = 0; i < d; ++i) ASSERT_EQ(state.x[i], expected_x[i]) << "i " << i;
          // The stream continues where the reference's does (the uniform is drawn on every path).
          ASSERT_EQ(stream.bits(), ref_stream.bits()) << "iteration " << it;
        }
        EXPECT_GT(n_accepted, 0);
        if (step_size > 0.5) {
          EXPECT_LT(n_accepted, 30);  // some rejections
        }
      }
    }
  }
}

// Standard normal whose potential stays finite but whose gradient entry `bad` is NaN or +inf
// where x_0 > 1: HmcKernel checks the gradient in its kick's pass, and must end the trajectory at
// the first such gradient exactly as the separate check did (a non-finite, rejected transition).
class BadGradientNormal final : public targets::Target {
 public:
  BadGradientNormal(int d, int bad, double value) : d_(d), bad_(bad), value_(value) {}
  int dim() const override { return d_; }
  std::string name() const override { return "bad_gradient_normal"; }
  double potential(ConstVectorRef x) const override { return 0.5 * x.squaredNorm(); }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    g = x;
    if (x[0] > 1.0) g[bad_] = value_;
    return potential(x);
  }

 private:
  int d_, bad_;
  double value_;
};

TEST(HmcFusedLeapfrog, NonFiniteGradientEndsTheTrajectory) {
  int n_nonfinite = 0, n_finite = 0;
  for (int d : {1, 2, 3, 4, 5, 8, 11}) {
    for (int bad : {0, d - 1}) {
      for (double value : {std::nan(""), std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity()}) {
        for (bool unit : {true, false}) {
          auto target = std::make_shared<BadGradientNormal>(d, bad, value);
          HmcOptions o;
          o.step_size = 0.3;
          o.n_leapfrog = 6;
          HmcKernel kernel(target, unit ? hmc::Metric::unit(d) : hmc::Metric::diagonal(
                                                                      Vector::Ones(d)), o);
          for (std::uint64_t it = 0; it < 40; ++it) {
            ChainState state;
            state.x = Vector::Constant(d, 0.2);
            state.grad.resize(d);
            state.potential = target->potential_and_gradient(state.x, state.grad);
            // Reference: the two-pass leapfrog, stopping at the first non-finite gradient.
            rng::Stream ref_stream(4, rng::Domain::kTransition, 0, it);
            Vector q = state.x, g = state.grad, p(d);
            ref_stream.fill_normal(p.data(), d);
            p.noalias() -= (0.5 * o.step_size) * g;
            int taken = 0;
            bool finite = true;
            for (int step = 1; step <= o.n_leapfrog; ++step) {
              q.noalias() += o.step_size * p;
              target->potential_and_gradient(q, g);
              ++taken;
              if (!g.allFinite()) {
                finite = false;
                break;
              }
              p.noalias() -= (step < o.n_leapfrog ? o.step_size : 0.5 * o.step_size) * g;
            }
            const Vector x0 = state.x;
            rng::Stream stream(4, rng::Domain::kTransition, 0, it);
            const TransitionStats stats = kernel.transition(state, stream);
            ASSERT_EQ(stats.n_leapfrog, taken) << "d " << d << " iteration " << it;
            ASSERT_EQ(stats.nonfinite, !finite) << "d " << d << " iteration " << it;
            if (!finite) {
              ++n_nonfinite;
              EXPECT_FALSE(stats.accepted);
              EXPECT_TRUE(stats.divergent);
              EXPECT_EQ(stats.accept_stat, 0.0);
              for (int i = 0; i < d; ++i) ASSERT_EQ(state.x[i], x0[i]);
            } else {
              ++n_finite;
            }
          }
        }
      }
    }
  }
  // Both kinds of trajectories occur, so the test can fail either way.
  EXPECT_GT(n_nonfinite, 100);
  EXPECT_GT(n_finite, 100);
}

}  // namespace
}  // namespace pemc::kernels
