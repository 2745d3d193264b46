// Pooling the chains' windows: merged sums equal one pass over all draws (in any split), the
// metric is Stan's regularised estimate, and the convergence decision tells chains in one
// stationary distribution from chains stuck apart.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "rng/stream.hpp"
#include "warmup/pooled_messages.hpp"
#include "warmup/pooled_windows.hpp"

namespace pemc::warmup {
namespace {

Matrix draws(int n, int d, std::uint64_t seed) {
  rng::Stream s(seed, rng::Domain::kTest, 0, 0);
  Matrix x(n, d);
  Vector row(d);
  for (int i = 0; i < n; ++i) {
    s.fill_normal(row);
    x.row(i) = row.transpose();
  }
  return x;
}

TEST(WindowSums, MergeEqualsOnePass) {
  const Matrix x = draws(57, 3, 1);
  for (const bool dense : {false, true}) {
    WindowSums all(3, dense), a(3, dense), b(3, dense);
    for (int i = 0; i < x.rows(); ++i) {
      all.add(x.row(i).transpose());
      (i < 20 ? a : b).add(x.row(i).transpose());
    }
    WindowSums merged;
    merged.merge(a);
    merged.merge(b);
    EXPECT_EQ(merged.count(), 57);
    EXPECT_LT((merged.mean() - all.mean()).cwiseAbs().maxCoeff(), 1e-13);
    EXPECT_LT((merged.m2() - all.m2()).cwiseAbs().maxCoeff(), 1e-11);
  }
}

TEST(WindowSums, RegularisedAsStan) {
  const Matrix x = draws(40, 2, 2);
  WindowSums s(2, false);
  for (int i = 0; i < x.rows(); ++i) s.add(x.row(i).transpose());
  const Vector mean = x.colwise().mean().transpose();
  const double n = 40;
  const auto inv = regularised_inverse_metric(s);
  for (int j = 0; j < 2; ++j) {
    const double var = (x.col(j).array() - mean[j]).square().sum() / (n - 1);
    EXPECT_NEAR(inv[static_cast<std::size_t>(j)], n / (n + 5) * var + 1e-3 * 5 / (n + 5), 1e-12);
  }
  WindowSums d(2, true);
  for (int i = 0; i < x.rows(); ++i) d.add(x.row(i).transpose());
  const auto dense = regularised_inverse_metric(d);
  ASSERT_EQ(dense.size(), 4u);
  EXPECT_DOUBLE_EQ(dense[1], dense[2]);
  EXPECT_NEAR(dense[0], inv[0], 1e-12);
}

// `chains` chains of `n` draws per window: log density N(offset_c, 1) per chain.
void add_windows(WindowHistory& h, int windows, int chains, int n, const std::vector<double>& offset,
                 std::uint64_t seed) {
  for (int w = 1; w <= windows; ++w)
    for (int c = 0; c < chains; ++c) {
      const Matrix x = draws(n, 2, seed + 100 * w + c);
      ChainWindow cw{WindowSums(2, false), {}};
      for (int i = 0; i < n; ++i) {
        cw.sums.add(x.row(i).transpose());
        cw.log_density.push_back(offset[static_cast<std::size_t>(c)] + x(i, 0));
      }
      h.add(w, c, std::move(cw));
    }
}

TEST(WindowHistory, AgreeingChainsConverge) {
  WindowHistory h;
  add_windows(h, 2, 4, 50, {0, 0, 0, 0}, 3);
  const auto d = h.decide(2, {0, 1, 2, 3});
  EXPECT_TRUE(d.converged);
  EXPECT_LE(d.rhat, kRhatConverged);
  EXPECT_GE(d.bulk_ess, kEssConverged);
  EXPECT_EQ(d.first_window, 1);  // both windows qualify; together they have the larger ESS
  EXPECT_EQ(d.n_draws, 400);
  EXPECT_EQ(d.inverse_metric.size(), 2u);
}

TEST(WindowHistory, ChainsApartDoNotConverge) {
  WindowHistory h;
  add_windows(h, 3, 4, 50, {0, 0, 0, 5}, 4);  // chain 3 in another region
  const auto d = h.decide(3, {0, 1, 2, 3});
  EXPECT_FALSE(d.converged);
  EXPECT_GT(d.rhat, kRhatConverged);
  EXPECT_EQ(d.first_window, 3);  // the metric from the last window only
  EXPECT_EQ(d.n_draws, 200);
  // Without the stray chain the rest agree.
  EXPECT_TRUE(h.decide(3, {0, 1, 2}).converged);
}

TEST(WindowHistory, IncompleteOrRepeatedReportsRefused) {
  WindowHistory h;
  add_windows(h, 1, 2, 20, {0, 0}, 5);
  EXPECT_THROW(h.decide(1, {0, 1, 2}), DataError);
  EXPECT_THROW(h.add(1, 0, ChainWindow{WindowSums(2, false), {}}), DataError);
}

TEST(PooledMessages, RoundTrip) {
  ChainRoundReport r;
  r.chain_id = 7;
  r.round = 3;
  r.last_state = Vector::LinSpaced(3, -1, 1);
  r.final_step_size = 0.25;
  r.cost = {100, 100, 1.5, 1.25};
  r.window = ChainWindow{WindowSums(3, true), {-1.0, -2.0}};
  r.window->sums.add(r.last_state);
  r.window->sums.add(2 * r.last_state);
  const auto back = ChainRoundReport::decode(r.encode());
  EXPECT_EQ(back.chain_id, 7);
  EXPECT_EQ(back.round, 3);
  EXPECT_TRUE(back.ok);
  EXPECT_EQ(back.last_state, r.last_state);
  EXPECT_EQ(back.cost.gradient_evals, 100);
  ASSERT_TRUE(back.window);
  EXPECT_EQ(back.window->sums.m2(), r.window->sums.m2());
  EXPECT_EQ(back.window->log_density, r.window->log_density);

  RoundBroadcast b;
  b.round = 4;
  b.plan = {Phase::kSample, 0, 0, 275};
  b.inverse_metric = {1.0, 2.0};
  b.step_size = 0.5;
  b.chains[2] = {Vector::Ones(2), {10, 10, 0.5, 0.5}, 0.5};
  b.chains[11] = {Vector::Zero(2), {20, 20, 1.0, 1.0}, 0.25};
  b.fits[11] = ChainFit{r.window->sums, -3.5};
  const auto bb = RoundBroadcast::decode(b.encode());
  ASSERT_EQ(bb.fits.size(), 1u);
  EXPECT_EQ(bb.fits.at(11).sums.m2(), r.window->sums.m2());
  EXPECT_EQ(bb.fits.at(11).sums.count(), 2);
  EXPECT_EQ(bb.fits.at(11).mean_log_density, -3.5);
  EXPECT_TRUE(RoundBroadcast::decode(RoundBroadcast{}.encode()).fits.empty());
  EXPECT_EQ(bb.plan.phase, Phase::kSample);
  EXPECT_EQ(bb.plan.warmup_before, 275);
  EXPECT_EQ(bb.inverse_metric, b.inverse_metric);
  ASSERT_EQ(bb.chains.size(), 2u);
  EXPECT_EQ(bb.chains.at(11).totals.gradient_evals, 20);
  EXPECT_EQ(bb.chains.at(11).step_size, 0.25);
  EXPECT_THROW(RoundBroadcast::decode("not a message"), DataError);
  EXPECT_THROW(RoundBroadcast::decode(r.encode()), DataError);  // a report is not a broadcast
}

v1::ModelMessage model_message(v1::ModelMessage::Kind kind, const std::string& text,
                               std::int64_t count) {
  v1::ModelMessage m;
  m.set_kind(kind);
  m.set_text(text);
  m.set_count(count);
  return m;
}

// A chain's model messages travel with its totals (report, broadcast, checkpoint) and add up over
// rounds: the final summary says what the model rejected during warmup.
TEST(PooledMessages, ModelMessagesTravelAndAddUp) {
  ChainTotals first{10, 10, 0.5, 0.5,
                    {model_message(v1::ModelMessage::PROPOSAL, "max_num_steps exceeded", 3),
                     model_message(v1::ModelMessage::INITIAL_POINT, "log(0)", 1)}};
  RoundBroadcast b;
  b.plan = {Phase::kWindow, 1, 50, 75};
  b.chains[4] = {Vector::Ones(2), first, 0.0};
  const auto back = RoundBroadcast::decode(b.encode()).chains.at(4).totals.model_messages;
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].kind(), v1::ModelMessage::PROPOSAL);
  EXPECT_EQ(back[0].text(), "max_num_steps exceeded");
  EXPECT_EQ(back[0].count(), 3);
  EXPECT_EQ(back[1].kind(), v1::ModelMessage::INITIAL_POINT);

  ChainTotals second{5, 5, 0.25, 0.25,
                     {model_message(v1::ModelMessage::PROPOSAL, "max_num_steps exceeded", 2),
                      model_message(v1::ModelMessage::PROPOSAL, "step size too small", 1)}};
  first.add(second);
  ASSERT_EQ(first.model_messages.size(), 3u);
  EXPECT_EQ(first.model_messages[0].count(), 5);
  EXPECT_EQ(first.model_messages[2].text(), "step size too small");

  CoordinatorState c;
  c.totals[4] = first;
  const auto restored = CoordinatorState::decode(c.encode()).totals.at(4).model_messages;
  ASSERT_EQ(restored.size(), 3u);
  EXPECT_EQ(restored[2].text(), "step size too small");
  EXPECT_EQ(restored[0].count(), 5);
}

// Within chains: each chain's draws about its own mean, divided by the within-chain degrees of
// freedom; two chains whose means differ by 10 make the all-draws variance about 25 larger.
TEST(WindowHistory, WithinChainsPoolingLeavesOutTheChainsMeans) {
  WindowHistory h;
  const Matrix x = draws(200, 2, 3);
  for (int id = 0; id < 2; ++id)
    for (int w = 1; w <= 2; ++w) {
      ChainWindow cw{WindowSums(2, false), {}};
      for (int i = 0; i < 50; ++i) {
        const int row = id * 100 + (w - 1) * 50 + i;
        cw.sums.add(x.row(row).transpose() + Vector::Constant(2, 10.0 * id));
        cw.log_density.push_back(-0.5 * x.row(row).squaredNorm());
      }
      h.add(w, id, std::move(cw));
    }
  const auto all = h.decide(2, {0, 1}, Pooling::kAllDraws);
  const auto within = h.decide(2, {0, 1}, Pooling::kWithinChains);
  ASSERT_EQ(all.first_window, within.first_window);
  const int first = within.first_window, n_per_chain = 50 * (2 - first + 1);
  EXPECT_EQ(within.n_draws, 2 * n_per_chain);
  for (int j = 0; j < 2; ++j) {
    double m2 = 0.0;
    for (int id = 0; id < 2; ++id) {
      const auto block = x.col(j).segment(id * 100 + (first - 1) * 50, n_per_chain);
      m2 += (block.array() - block.mean()).square().sum();
    }
    const double n = 2.0 * n_per_chain, var = m2 / (n - 2);
    // Regularised with the count the variance divides by plus one (n - 1 draws).
    const double shrink = (n - 1) / (n - 1 + 5), ridge = 1e-3 * 5 / (n - 1 + 5);
    EXPECT_NEAR(within.inverse_metric[static_cast<std::size_t>(j)], shrink * var + ridge, 1e-12);
    const auto k = static_cast<std::size_t>(j);
    EXPECT_GT(all.inverse_metric[k], within.inverse_metric[k] + 20);
  }
}


// A chain's fit joins its draws over the decision's windows, with their mean log density; dense
// sums give the diagonal metric of diagonal sums when asked for one.
TEST(WindowHistory, ChainFitsJoinTheDecisionsWindowsAndDenseSumsCanGiveADiagonalMetric) {
  WindowHistory dense_history, diagonal_history;
  const Matrix x = draws(300, 2, 5);
  for (int id = 0; id < 2; ++id)
    for (int w = 1; w <= 3; ++w) {
      ChainWindow dense{WindowSums(2, true), {}}, diagonal{WindowSums(2, false), {}};
      for (int i = 0; i < 50; ++i) {
        const Vector row = x.row(id * 150 + (w - 1) * 50 + i).transpose();
        dense.sums.add(row);
        diagonal.sums.add(row);
        dense.log_density.push_back(-0.5 * row.squaredNorm());
      }
      diagonal.log_density = dense.log_density;
      dense_history.add(w, id, std::move(dense));
      diagonal_history.add(w, id, std::move(diagonal));
    }
  const auto d = dense_history.decide(3, {0, 1}, Pooling::kWithinChains, true);
  const auto diagonal = diagonal_history.decide(3, {0, 1}, Pooling::kWithinChains);
  ASSERT_EQ(d.inverse_metric.size(), 2u);
  EXPECT_EQ(d.first_window, diagonal.first_window);
  for (std::size_t j = 0; j < 2; ++j)
    EXPECT_NEAR(d.inverse_metric[j], diagonal.inverse_metric[j], 1e-12);
  EXPECT_EQ(dense_history.decide(3, {0, 1}).inverse_metric.size(), 4u);

  WindowDecision two_windows = d;
  two_windows.first_window = 2;
  two_windows.last_window = 3;
  const auto fits = dense_history.chain_fits(two_windows, {1});
  ASSERT_EQ(fits.size(), 1u);
  const auto& f = fits.at(1);
  EXPECT_EQ(f.sums.count(), 100);
  EXPECT_TRUE(f.sums.dense());
  const auto block = x.middleRows(150 + 50, 100);
  EXPECT_LT((f.sums.mean() - block.colwise().mean().transpose()).cwiseAbs().maxCoeff(), 1e-13);
  EXPECT_NEAR(f.mean_log_density, -0.5 * block.rowwise().squaredNorm().mean(), 1e-12);
}

}  // namespace
}  // namespace pemc::warmup
