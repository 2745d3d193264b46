// Bootstrap rounds of continuous tempering (src/extended/continuous_tempering_bootstrap.hpp): the
// round configs and seeds, the draw -> accumulator path, the messages, the pooled refit and the
// coordinator's bookkeeping (order independence is what makes pemc-dist rank-invariant).
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "extended/base_density_fit.hpp"
#include "extended/continuous_tempering.hpp"
#include "extended/continuous_tempering_bootstrap.hpp"
#include "rng/stream.hpp"

namespace pemc::extended {
namespace {

v1::RunConfig run_config(const std::string& bootstrap) {
  v1::RunConfig c;
  const std::string text =
      "name: 'r' warmup: 300 iterations: 5000 output { path: 'x.pemc' thin: 3 write_warmup: true "
      "estimates_every: 100 } sampler { continuous_tempering { hmc { step_size: 0.1 } base { "
      "gaussian { mean: [0.5] variance: [2] log_zeta: 1 } } " + bootstrap + " } }";
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &c));
  return c;
}

TEST(CtBootstrapSettings, FromTheConfig) {
  EXPECT_FALSE(bootstrap_settings(run_config("")).has_value());
  v1::RunConfig hmc;
  hmc.mutable_sampler()->mutable_hmc();
  EXPECT_FALSE(bootstrap_settings(hmc).has_value());
  EXPECT_EQ(bootstrap_extra_iterations(hmc), 0);
  const auto s = bootstrap_settings(run_config("bootstrap { rounds: 2 draws_per_round: 700 }"));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->rounds, 2);
  EXPECT_EQ(s->draws_per_round, 700);
  EXPECT_EQ(s->warmup, 300);  // the run's
  EXPECT_EQ(s->covariance_scale, 1.0);
  const auto c = run_config("bootstrap { rounds: 3 draws_per_round: 700 warmup: 50 covariance_scale: 2 }");
  EXPECT_EQ(bootstrap_settings(c)->warmup, 50);
  EXPECT_EQ(bootstrap_settings(c)->covariance_scale, 2.0);
  EXPECT_EQ(bootstrap_extra_iterations(c), 3 * (50 + 700));
}

TEST(CtBootstrapRoundConfig, BootstrapAndFinalRounds) {
  const auto run = run_config("bootstrap { rounds: 2 draws_per_round: 700 warmup: 50 }");
  v1::BaseDensityConfig base;
  base.mutable_gaussian()->add_mean(1.0);
  base.mutable_gaussian()->add_covariance(3.0);
  base.mutable_gaussian()->set_log_zeta(-0.5);

  const auto r0 = bootstrap_round_config(run, 0, nullptr);
  EXPECT_FALSE(r0.sampler().continuous_tempering().has_bootstrap());
  EXPECT_EQ(r0.sampler().continuous_tempering().base().gaussian().variance(0), 2.0);  // configured
  EXPECT_EQ(r0.warmup(), 50);
  EXPECT_EQ(r0.iterations(), 700);
  EXPECT_EQ(r0.output().thin(), 1);  // every transition feeds the accumulator
  EXPECT_FALSE(r0.output().write_warmup());
  EXPECT_EQ(r0.output().estimates_every(), 0);

  const auto r1 = bootstrap_round_config(run, 1, &base);
  EXPECT_EQ(r1.iterations(), 700);
  const auto& g = r1.sampler().continuous_tempering().base().gaussian();
  EXPECT_EQ(g.variance_size(), 0);  // replaced, not merged
  EXPECT_EQ(g.covariance(0), 3.0);
  EXPECT_EQ(g.log_zeta(), -0.5);

  const auto fin = bootstrap_round_config(run, 2, &base);  // the final round: the run's own lengths
  EXPECT_EQ(fin.warmup(), 300);
  EXPECT_EQ(fin.iterations(), 5000);
  EXPECT_EQ(fin.output().thin(), 3);
  EXPECT_TRUE(fin.output().write_warmup());
  EXPECT_EQ(fin.output().estimates_every(), 100);
  EXPECT_EQ(fin.sampler().continuous_tempering().base().gaussian().mean(0), 1.0);
  EXPECT_FALSE(fin.sampler().continuous_tempering().has_bootstrap());

  EXPECT_THROW(bootstrap_round_config(run, 1, nullptr), ConfigError);  // needs the refit
  EXPECT_THROW(bootstrap_round_config(run, 3, &base), ConfigError);
  EXPECT_THROW(bootstrap_round_config(run, -1, &base), ConfigError);
  EXPECT_THROW(bootstrap_round_config(run_config(""), 0, nullptr), ConfigError);
}

TEST(CtBootstrapSeeds, DistinctPerRoundAndFromTheSeed) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t seed : {0ull, 1ull, 2ull, 3ull, 1000ull})
    for (int r = 0; r < 10; ++r) {
      const auto s = bootstrap_round_seed(seed, r);
      EXPECT_EQ(s, bootstrap_round_seed(seed, r));  // a pure function
      EXPECT_NE(s, seed);
      seen.insert(s);
    }
  EXPECT_EQ(seen.size(), 50u);
}

v1::Draw ct_draw(const Vector& x, double lw0, double lw1, double log_zeta) {
  v1::Draw d;
  for (double v : x) d.add_extra_states(v);
  d.mutable_extra()->Resize(kExtraSize, 0.0);
  d.set_extra(kExtraLogW0, lw0);
  d.set_extra(kExtraLogW1, lw1);
  d.set_extra(kExtraLogZeta, log_zeta);
  return d;
}

TEST(CtBootstrapDraws, AccumulateLikeTheKernel) {
  estimators::TemperingRbAccumulator direct, from_draws;
  rng::Stream s(7, rng::Domain::kTest, 0, 0);
  for (int i = 0; i < 50; ++i) {
    const Vector x = Vector::NullaryExpr(3, [&](Eigen::Index) { return s.normal(); });
    const double lw0 = s.normal(), lw1 = s.normal();
    direct.add(x, lw0, lw1);
    EXPECT_EQ(add_ct_draw(from_draws, ct_draw(x, lw0, lw1, 2.5)), 2.5);
  }
  EXPECT_EQ(direct.serialize(), from_draws.serialize());  // bit for bit
  v1::Draw plain;
  plain.add_state(1.0);
  EXPECT_THROW(add_ct_draw(from_draws, plain), DataError);
}

estimators::TemperingRbAccumulator random_acc(std::uint64_t seed, int n, int d, double shift = 0.0) {
  estimators::TemperingRbAccumulator a(d);
  rng::Stream s(seed, rng::Domain::kTest, 1, 0);
  for (int i = 0; i < n; ++i) {
    const Vector x = Vector::NullaryExpr(d, [&](Eigen::Index j) { return shift + (j + 1) * s.normal(); });
    a.add(x, 0.3 * s.normal(), 0.3 * s.normal());
  }
  return a;
}

// The base of run_config's runs (round 0's).
v1::BaseDensityConfig configured_base() {
  return run_config("").sampler().continuous_tempering().base();
}

BootstrapChainReport report(int chain, int round, std::uint64_t seed, double shift = 0.0) {
  BootstrapChainReport r;
  r.chain_id = chain;
  r.round = round;
  r.log_zeta = 1.25;
  r.acc = random_acc(seed, 200, 2, shift);
  r.gradient_evals = 1000 + chain;
  r.extended_gradient_evals = 1000 + chain;
  r.log_z_se = 0.03125;
  r.log_z_batches = 40;
  r.wall_seconds = 0.5;
  r.cpu_seconds = 0.375;
  return r;
}

TEST(CtBootstrapMessages, RoundTrip) {
  auto r = report(4, 1, 9);
  r.status = "failed: something";
  const auto back = BootstrapChainReport::decode(r.encode());
  EXPECT_EQ(back.chain_id, 4);
  EXPECT_EQ(back.round, 1);
  EXPECT_EQ(back.status, "failed: something");
  EXPECT_EQ(back.log_zeta, 1.25);
  EXPECT_EQ(back.gradient_evals, 1004);
  EXPECT_EQ(back.extended_gradient_evals, 1004);
  EXPECT_EQ(back.log_z_se, 0.03125);
  EXPECT_EQ(back.log_z_batches, 40);
  EXPECT_EQ(back.wall_seconds, 0.5);
  EXPECT_EQ(back.cpu_seconds, 0.375);
  EXPECT_EQ(back.acc.serialize(), r.acc.serialize());
  auto bytes = r.encode();
  EXPECT_THROW(BootstrapChainReport::decode(bytes.substr(0, bytes.size() - 3)), DataError);
  EXPECT_THROW(BootstrapChainReport::decode(bytes + "x"), DataError);

  BootstrapBroadcast b;
  b.run_index = 2;
  b.round = 3;
  b.base.emplace();
  b.base->mutable_gaussian()->add_mean(1.0);
  b.base->mutable_gaussian()->set_log_zeta(4.0);
  b.totals[7].set_chain_id(7);
  b.totals[7].set_n_gradient_evals(99);
  const auto bb = BootstrapBroadcast::decode(b.encode());
  EXPECT_EQ(bb.run_index, 2);
  EXPECT_EQ(bb.round, 3);
  ASSERT_TRUE(bb.base.has_value());
  EXPECT_EQ(bb.base->gaussian().log_zeta(), 4.0);
  EXPECT_EQ(bb.totals.at(7).n_gradient_evals(), 99);
  b.base.reset();
  b.error = "refit failed";
  const auto bf = BootstrapBroadcast::decode(b.encode());
  EXPECT_FALSE(bf.base.has_value());
  EXPECT_EQ(bf.error, "refit failed");
}

TEST(CtBootstrapPool, RefitsThePooledEstimates) {
  const auto a = report(0, 0, 1), b = report(1, 0, 2, 0.4), c = report(2, 0, 3, -0.1);
  BootstrapSettings s{1, 200, 10, 1.5};
  const auto r = pool_bootstrap_round({&a, &b, &c}, s);
  ASSERT_TRUE(r.next_base.has_value()) << r.error;
  estimators::TemperingRbAccumulator pooled;
  for (const auto* x : {&a, &b, &c}) pooled.merge(x->acc);
  EXPECT_EQ(r.log_z, pooled.log_z(1.25));
  EXPECT_EQ(r.n_chains, 3);
  EXPECT_EQ(r.log_zeta_used, 1.25);
  // The next base: pooled mean, covariance x scale (row-major), log zeta = pooled log Z.
  const Vector m = pooled.mean();
  const Matrix cov = pooled.covariance();
  ASSERT_EQ(r.next_base->mean_size(), 2);
  ASSERT_EQ(r.next_base->covariance_size(), 4);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(r.next_base->mean(i), m[i]);
    for (int j = 0; j < 2; ++j) EXPECT_EQ(r.next_base->covariance(2 * i + j), 1.5 * cov(i, j));
  }
  EXPECT_EQ(r.next_base->log_zeta(), r.log_z);
  // The same as refit_base's.
  const auto refit = refit_base(pooled, 1.25, 1.5);
  EXPECT_NEAR((refit.density->covariance() - 1.5 * cov).norm(), 0.0, 1e-12);
  // Standard errors across chains: sd / sqrt(n) of the per-chain estimates.
  std::vector<double> lz = {a.acc.log_z(1.25), b.acc.log_z(1.25), c.acc.log_z(1.25)};
  const double mean_lz = (lz[0] + lz[1] + lz[2]) / 3.0;
  double ss = 0.0;
  for (double v : lz) ss += (v - mean_lz) * (v - mean_lz);
  EXPECT_NEAR(r.log_z_se, std::sqrt(ss / 2.0 / 3.0), 1e-14);
  const double m0[] = {a.acc.mean()[1], b.acc.mean()[1], c.acc.mean()[1]};
  const double mm = (m0[0] + m0[1] + m0[2]) / 3.0;
  ss = 0.0;
  for (double v : m0) ss += (v - mm) * (v - mm);
  EXPECT_NEAR(r.mean_se[1], std::sqrt(ss / 2.0 / 3.0), 1e-14);
  EXPECT_NEAR(r.variance[0], cov(0, 0), 0.0);

  // One chain: no standard errors.
  const auto one = pool_bootstrap_round({&a}, s);
  EXPECT_TRUE(std::isnan(one.log_z_se));
  EXPECT_TRUE(std::isnan(one.mean_se[0]));
  const auto rec = bootstrap_snapshot(one, "r", s, 3.0);
  EXPECT_EQ(rec.estimates().chain_id(), kBootstrapPooledChainId);
  EXPECT_EQ(rec.estimates().iteration(), 200);
  EXPECT_EQ(rec.estimates().estimates().count("log_z_se"), 0u);
  EXPECT_EQ(rec.estimates().estimates().at("mean_1"), one.mean[1]);
  EXPECT_EQ(rec.estimates().estimates().at("refit_ok"), 1.0);
}

TEST(CtBootstrapPool, FailedRefitsSayWhy) {
  BootstrapSettings s{1, 10, 0, 1.0};
  EXPECT_EQ(pool_bootstrap_round({}, s).error, "no chain finished the round");
  // Every draw at the same x: a singular covariance.
  BootstrapChainReport r;
  r.log_zeta = 0.0;
  r.acc = estimators::TemperingRbAccumulator(2);
  for (int i = 0; i < 10; ++i) r.acc.add(Vector::Ones(2), 0.0, 0.0);
  const auto bad = pool_bootstrap_round({&r}, s);
  EXPECT_FALSE(bad.next_base.has_value());
  EXPECT_NE(bad.error.find("bootstrap refit"), std::string::npos) << bad.error;
  EXPECT_EQ(bootstrap_snapshot(bad, "r", s, 0.0).estimates().estimates().at("refit_ok"), 0.0);
  // Different log zetas in one round cannot be pooled.
  auto x = report(0, 0, 1), y = report(1, 0, 2);
  y.log_zeta = 2.0;
  EXPECT_NE(pool_bootstrap_round({&x, &y}, s).error.find("used log zeta"), std::string::npos);
}

TEST(CtBootstrapRounds, OrderOfReportsDoesNotMatter) {
  BootstrapSettings s{2, 200, 10, 1.0};
  auto run = [&](const std::vector<int>& order) {
    BootstrapRounds rounds(0, s, {5, 3, 9}, configured_base());
    std::optional<BootstrapRoundResult> done;
    for (std::size_t k = 0; k < order.size(); ++k) {
      done = rounds.on_report(report(order[k], 0, 100 + order[k], 0.1 * order[k]));
      EXPECT_EQ(done.has_value(), k + 1 == order.size());
    }
    EXPECT_EQ(rounds.round(), 1);
    return rounds.broadcast(*done);
  };
  const auto a = run({3, 5, 9}), b = run({9, 3, 5});
  ASSERT_TRUE(a.base.has_value());
  EXPECT_EQ(a.base->SerializeAsString(), b.base->SerializeAsString());  // bit-identical
  EXPECT_EQ(a.round, 1);
  EXPECT_EQ(a.totals.at(9).n_gradient_evals(), 1009);
}

TEST(CtBootstrapRounds, FailedChainsLeaveThePool) {
  BootstrapSettings s{2, 200, 10, 1.0};
  BootstrapRounds rounds(0, s, {0, 1, 2}, configured_base());
  auto bad = report(1, 0, 11);
  bad.status = "failed: no finite initial point";
  EXPECT_FALSE(rounds.on_report(report(0, 0, 10)).has_value());
  EXPECT_FALSE(rounds.on_report(bad).has_value());
  EXPECT_THROW(rounds.on_report(report(0, 0, 10)), DataError);  // duplicate
  EXPECT_THROW(rounds.on_report(report(2, 1, 10)), DataError);  // wrong round
  EXPECT_THROW(rounds.on_report(report(7, 0, 10)), DataError);  // unknown chain
  const auto done = rounds.on_report(report(2, 0, 12));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->n_chains, 2);
  EXPECT_EQ(rounds.live_chains(), (std::vector<int>{0, 2}));
  const auto only = report(0, 0, 10), other = report(2, 0, 12);
  EXPECT_EQ(done->log_z, pool_bootstrap_round({&only, &other}, s).log_z);
  EXPECT_EQ(done->gradient_evals, 1000 + 1001 + 1002);
  const auto b = rounds.broadcast(*done);
  EXPECT_EQ(b.totals.count(1), 0u);
  // Round 2 pools the two live chains.
  EXPECT_FALSE(rounds.on_report(report(2, 1, 22)).has_value());
  EXPECT_TRUE(rounds.on_report(report(0, 1, 20)).has_value());
  EXPECT_EQ(rounds.round(), 2);
}

TEST(CtBootstrapTotals, AddedToTheFinalSummary) {
  v1::ChainSummary s, t;
  s.set_n_gradient_evals(100);
  s.set_n_gradient_evals_warmup(10);
  s.set_wall_seconds(1.0);
  t.set_n_gradient_evals(50);
  t.set_wall_seconds(0.5);
  add_bootstrap_totals(s, t, BootstrapSettings{2, 30, 5, 1.0});
  EXPECT_EQ(s.n_gradient_evals(), 150);
  EXPECT_EQ(s.n_gradient_evals_warmup(), 60);
  EXPECT_EQ(s.wall_seconds(), 1.5);
  EXPECT_EQ(s.estimates().at("bootstrap_rounds"), 2.0);
  EXPECT_EQ(s.estimates().at("bootstrap_draws"), 60.0);
  EXPECT_EQ(s.estimates().at("bootstrap_gradient_evals"), 50.0);
}

}  // namespace
}  // namespace pemc::extended

namespace pemc::extended {
namespace {

// Reports of one round with the chains' own (batch-means) log Z SE set: with se_within large the
// round is judged worse than one with small se_within (the larger of the two SEs counts).
// Every chain has the same draws (no spread across chains), and 32 batches behind its SE: the
// within-chain SE decides, with 3 x 31 degrees of freedom.
std::vector<BootstrapChainReport> round_reports(int round, std::uint64_t seed0, double se_within) {
  std::vector<BootstrapChainReport> out;
  for (int c = 0; c < 3; ++c) {
    auto r = report(c, round, seed0);
    r.log_z_se = se_within;
    r.log_z_batches = 32;
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<BootstrapRoundResult> feed(BootstrapRounds& rounds,
                                         const std::vector<BootstrapChainReport>& reports) {
  std::optional<BootstrapRoundResult> done;
  for (const auto& r : reports) done = rounds.on_report(r);
  return done;
}

TEST(CtBootstrapRounds, AWorseRoundsRefitIsReplacedByTheBetterBase) {
  BootstrapSettings s{3, 200, 10, 1.0};  // keep_variance_ratio 2 (the default)
  BootstrapRounds rounds(0, s, {0, 1, 2}, configured_base());
  // Round 1 with the configured base: small SEs; its refit goes to round 2.
  const auto r1 = feed(rounds, round_reports(0, 10, 0.001));
  ASSERT_TRUE(r1 && r1->chosen_base);
  EXPECT_TRUE(r1->choice.use_refit);
  EXPECT_EQ(r1->chosen_base_origin, 1);
  EXPECT_EQ(r1->chosen_base->gaussian().log_zeta(), r1->log_z);
  EXPECT_EQ(rounds.broadcast(*r1).totals.at(0).estimates().at("bootstrap_base_origin"), 1.0);
  // Round 2 (round 1's refit) is far noisier: round 3 gets the configured base again, with log
  // zeta = round 1's pooled log Z.
  const auto r2 = feed(rounds, round_reports(1, 10, 0.5));
  ASSERT_TRUE(r2 && r2->chosen_base);
  EXPECT_FALSE(r2->choice.use_refit);
  EXPECT_EQ(r2->choice.kept_round, 0);
  EXPECT_EQ(r2->base_origin, 1);
  EXPECT_EQ(r2->chosen_base_origin, kConfiguredBase);
  EXPECT_GT(r2->choice.variance_ratio, 2.0);
  auto expected = configured_base();
  expected.mutable_gaussian()->set_log_zeta(r1->log_z);
  EXPECT_EQ(r2->chosen_base->SerializeAsString(), expected.SerializeAsString());
  const auto b2 = rounds.broadcast(*r2);
  ASSERT_TRUE(b2.base.has_value());
  EXPECT_EQ(b2.base->SerializeAsString(), expected.SerializeAsString());
  EXPECT_TRUE(b2.error.empty());
  EXPECT_EQ(b2.totals.at(2).estimates().at("bootstrap_base_origin"), 0.0);
  // The snapshot says what happened.
  const auto snap = bootstrap_snapshot(*r2, "r", s, 1.0).estimates().estimates();
  EXPECT_EQ(snap.at("base_kept"), 1.0);
  EXPECT_EQ(snap.at("kept_round"), 1.0);
  EXPECT_EQ(snap.at("base_origin"), 1.0);
  EXPECT_EQ(snap.at("next_base_origin"), 0.0);
  EXPECT_EQ(snap.at("next_log_zeta"), r1->log_z);
  EXPECT_NEAR(snap.at("log_z_se_within"), 0.5 * std::sqrt(3.0) / 3.0, 1e-15);
  EXPECT_EQ(snap.at("log_z_var_x_draws"), r2->quality.variance_x_draws());
  EXPECT_GT(snap.at("variance_ratio"), snap.at("variance_threshold"));
  EXPECT_EQ(snap.at("log_z_se_dof"), 93.0);
  EXPECT_NE(describe(*r2, s).find("its refit is not used"), std::string::npos) << describe(*r2, s);
  // Round 3 (the configured base again) as good as round 1: its refit is used.
  const auto r3 = feed(rounds, round_reports(2, 10, 0.001));
  ASSERT_TRUE(r3 && r3->chosen_base);
  EXPECT_TRUE(r3->choice.use_refit);
  EXPECT_EQ(r3->base_origin, kConfiguredBase);
  EXPECT_EQ(r3->chosen_base_origin, 3);
}

TEST(CtBootstrapRounds, AFailedRefitFallsBackOnTheBestEarlierBase) {
  BootstrapSettings s{2, 200, 10, 1.0};
  BootstrapRounds rounds(0, s, {0, 1, 2}, configured_base());
  const auto r1 = feed(rounds, round_reports(0, 10, 0.001));
  ASSERT_TRUE(r1 && r1->choice.use_refit);
  // Round 2: every draw at one x, a singular covariance: no refit. Round 3 (the final one) gets
  // round 1's base (the configured one) with round 1's log Z, and the run goes on.
  auto degenerate = round_reports(1, 20, 0.001);
  for (auto& r : degenerate) {
    r.acc = estimators::TemperingRbAccumulator(2);
    for (int i = 0; i < 10; ++i) r.acc.add(Vector::Ones(2), 0.0, 0.0);
  }
  const auto r2 = feed(rounds, degenerate);
  ASSERT_TRUE(r2.has_value());
  EXPECT_FALSE(r2->next_base.has_value());
  ASSERT_TRUE(r2->chosen_base.has_value()) << r2->choice.reason;
  EXPECT_EQ(r2->choice.kept_round, 0);
  EXPECT_EQ(r2->chosen_base->gaussian().log_zeta(), r1->log_z);
  const auto b = rounds.broadcast(*r2);
  EXPECT_TRUE(b.base.has_value());
  EXPECT_TRUE(b.error.empty()) << b.error;
  EXPECT_NE(describe(*r2, s).find("refit failed"), std::string::npos) << describe(*r2, s);
  // With no earlier round to fall back on, a failed refit ends the run (the broadcast says why).
  BootstrapRounds first(0, s, {0, 1, 2}, configured_base());
  auto degenerate_first = degenerate;
  for (auto& r : degenerate_first) r.round = 0;
  const auto f = feed(first, degenerate_first);
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->chosen_base.has_value());
  const auto fb = first.broadcast(*f);
  EXPECT_FALSE(fb.base.has_value());
  EXPECT_NE(fb.error.find("bootstrap refit"), std::string::npos) << fb.error;
}

}  // namespace
}  // namespace pemc::extended
