// save_state/restore_state of the adaptation classes (checkpoint/resume): a restored adapter,
// dual averaging or Welford estimator continues with exactly the outputs of the original, and a
// state of the wrong kind or shape is refused with a DataError naming the entry.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "adapt/dual_averaging.hpp"
#include "adapt/warmup_adapter.hpp"
#include "adapt/welford.hpp"
#include "rng/stream.hpp"

namespace pemc::adapt {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(AdaptCheckpoint, WarmupAdapterContinuesIdentically) {
  for (const auto kind : {hmc::MetricKind::kDiagonal, hmc::MetricKind::kDense}) {
    const auto metric = kind == hmc::MetricKind::kDense ? hmc::Metric::dense(Matrix::Identity(3, 3))
                                                        : hmc::Metric::diagonal(Vector::Ones(3));
    WarmupAdapterOptions o;
    o.adapt_metric = true;
    const std::int64_t n = 300;
    for (const std::int64_t stop : {std::int64_t{10}, std::int64_t{90}, std::int64_t{200}}) {
      WarmupAdapter a(o, n, 0.1, metric), b(o, n, 0.1, metric);
      rng::Stream s(5, rng::Domain::kTest, 0, 0);
      Vector x(3);
      for (std::int64_t i = 0; i < stop; ++i) {
        s.fill_normal(x);
        a.observe(i, x, s.uniform());
      }
      KernelState saved;
      a.save_state(saved);
      b.restore_state(saved);
      int metric_updates = 0;
      for (std::int64_t i = stop; i < n; ++i) {
        s.fill_normal(x);
        const double acc = s.uniform();
        const auto ua = a.observe(i, x, acc);
        const auto ub = b.observe(i, x, acc);
        ASSERT_TRUE(same_bits(ua.step_size, ub.step_size)) << "iteration " << i;
        ASSERT_EQ(ua.metric.has_value(), ub.metric.has_value()) << "iteration " << i;
        if (ua.metric) {
          ++metric_updates;
          const Vector da = ua.metric->inverse_diagonal_or_dense_diagonal();
          const Vector db = ub.metric->inverse_diagonal_or_dense_diagonal();
          ASSERT_EQ(std::memcmp(da.data(), db.data(), sizeof(double) * 3), 0) << "iteration " << i;
        }
      }
      EXPECT_GT(metric_updates, 0);  // the windows after the stop were exercised
      EXPECT_TRUE(same_bits(a.final_step_size(), b.final_step_size()));
    }
  }
}

TEST(AdaptCheckpoint, MismatchesAreRefused) {
  WarmupAdapterOptions o;
  o.adapt_metric = true;
  const auto metric = hmc::Metric::diagonal(Vector::Ones(3));
  WarmupAdapter a(o, 300, 0.1, metric), shorter(o, 200, 0.1, metric);
  KernelState saved;
  a.save_state(saved);
  EXPECT_THROW(shorter.restore_state(saved), DataError);  // another warmup length

  DualAveraging da({}, 0.1);
  EXPECT_THROW(da.restore_state(saved), DataError);  // another kind

  WelfordCovariance w3(3, false), w2(2, false);
  KernelState ws;
  w3.save_state(ws);
  EXPECT_THROW(w2.restore_state(ws), DataError);  // another dimension
  WelfordCovariance dense(3, true);
  EXPECT_THROW(dense.restore_state(ws), DataError);  // diagonal into dense
}

}  // namespace
}  // namespace pemc::adapt
