// Tests of the streaming trace collection and the diagnostics report (src/report/diagnostics*.hpp):
// exact thinning (which draws are kept), the per-draw quantity of pseudo-sample draws, per-chain
// sampler statistics from draws and footer, R-hat/ESS of iid and stuck chains written to files,
// the JSON keys and damaged files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "estimators/ess.hpp"
#include "records/record_writer.hpp"
#include "report/diagnostics.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;
using pemc::v1::Record;

class DiagnosticsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("pemc_diagnostics_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

Record header(int dim, std::int64_t iterations = 0, const std::string& name = "r") {
  Record r;
  auto* h = r.mutable_header();
  h->set_dim(dim);
  h->set_original_dim(dim);
  auto* c = h->mutable_config();
  c->set_name(name);
  for (int i = 0; i < dim; ++i) c->mutable_target()->mutable_gaussian()->add_mean(0.0);
  c->mutable_sampler()->mutable_nuts()->set_step_size(0.1);
  if (iterations > 0) c->set_iterations(iterations);
  return r;
}

Record draw(int chain, std::int64_t it, const std::vector<double>& x, const std::string& run = "r") {
  Record r;
  auto* d = r.mutable_draw();
  d->set_run_id(run);
  d->set_chain_id(chain);
  d->set_seed(100 + static_cast<std::uint64_t>(chain));
  d->set_iteration(it);
  for (double v : x) d->add_state(v);
  d->set_potential(0.5 * x[0] * x[0]);
  return r;
}

Record footer(int n_chains) {
  Record r;
  auto* f = r.mutable_footer();
  f->set_status("ok");
  for (int c = 0; c < n_chains; ++c) {
    auto* s = f->add_chains();
    s->set_chain_id(c);
    s->set_status("ok");
    s->set_n_gradient_evals(1000 + c);
    s->set_wall_seconds(0.5 * (c + 1));
    (*s->mutable_estimates())["swap_accept_0"] = 0.25 * c;
  }
  return r;
}

void write(const fs::path& path, const std::vector<Record>& records) {
  records::RecordWriter w(path, records::RecordWriter::Options{});
  for (Record r : records) {
    // As pemc-dist writes it: the footer counts the records before it.
    if (r.has_footer() && r.footer().n_records() == 0)
      r.mutable_footer()->set_n_records(w.records_written());
    w.write(r);
  }
  w.close();
}

// m chains of n draws of a 2-D state, x0 ~ N(mu_c, 1) iid and x1 = draw index; interleaved.
std::vector<Record> iid_file(int m, int n, std::uint64_t seed, std::vector<double> mu = {},
                             std::int64_t iterations = 0) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<Record> v{header(2, iterations)};
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < m; ++c)
      v.push_back(draw(c, i, {(mu.empty() ? 0.0 : mu[c]) + normal(gen), static_cast<double>(i)}));
  v.push_back(footer(m));
  return v;
}

TEST_F(DiagnosticsTest, ThinningKeepsEvenlySpacedDrawsWithinTheBound) {
  // No iteration count in the header: the stride starts at 1 and doubles whenever 100 are held.
  write(dir_ / "a.pemc", iid_file(1, 1000, 1));
  TraceOptions o;
  o.max_draws_per_chain = 100;
  const FileTraces t = read_traces(dir_ / "a.pemc", o);
  ASSERT_EQ(t.chains.size(), 1u);
  const ChainTrace& c = t.chains[0];
  EXPECT_EQ(c.n_draws, 1000);
  EXPECT_EQ(c.stride, 16);  // 1000 draws need stride 16 to stay <= 100 (ceil(1000/16) = 63)
  ASSERT_EQ(c.coords.size(), 2u);
  ASSERT_EQ(c.coords[1].size(), 63u);
  for (std::size_t j = 0; j < c.coords[1].size(); ++j) EXPECT_EQ(c.coords[1][j], 16.0 * j);
  EXPECT_EQ(c.potential.size(), 63u);

  // With the header's iteration count the stride is right from the start: exactly 100 kept.
  write(dir_ / "b.pemc", iid_file(1, 1000, 1, {}, 1000));
  const FileTraces u = read_traces(dir_ / "b.pemc", o);
  EXPECT_EQ(u.chains[0].stride, 10);
  ASSERT_EQ(u.chains[0].coords[1].size(), 100u);
  EXPECT_EQ(u.chains[0].coords[1][99], 990.0);
}

TEST_F(DiagnosticsTest, OnlyTheFirstKCoordinatesAreKept) {
  write(dir_ / "a.pemc", iid_file(2, 50, 2));
  TraceOptions o;
  o.max_coordinates = 1;
  o.with_potential = false;
  const FileTraces t = read_traces(dir_ / "a.pemc", o);
  EXPECT_EQ(t.chains[0].coords.size(), 1u);
  EXPECT_TRUE(t.chains[0].potential.empty());
}

TEST(DrawCoordinates, PseudoSamplesGiveTheWithinDrawWeightedMean) {
  v1::Draw d;
  // Two pseudo-samples of a 2-D target: (1, 2) and (3, 6) with weights 1 : 3.
  for (double v : {1.0, 2.0, 3.0, 6.0}) d.add_extra_states(v);
  d.add_log_weights(10.0);
  d.add_log_weights(10.0 + std::log(3.0));
  for (double v : {9.0, 9.0, 9.0, 9.0, 0.0, 0.0}) d.add_state(v);  // extended state, not used
  std::vector<double> out;
  ASSERT_TRUE(draw_coordinates(d, 2, 2, out));
  EXPECT_NEAR(out[0], 0.25 * 1.0 + 0.75 * 3.0, 1e-14);
  EXPECT_NEAR(out[1], 0.25 * 2.0 + 0.75 * 6.0, 1e-14);
  // All weights zero: the plain mean keeps the trace defined.
  d.set_log_weights(0, -INFINITY);
  d.set_log_weights(1, -INFINITY);
  ASSERT_TRUE(draw_coordinates(d, 2, 2, out));
  EXPECT_EQ(out[0], 2.0);
  // A plain draw: the state; too short a state is refused.
  v1::Draw p;
  p.add_state(4.0);
  ASSERT_TRUE(draw_coordinates(p, 1, 1, out));
  EXPECT_EQ(out[0], 4.0);
  EXPECT_FALSE(draw_coordinates(p, 2, 2, out));
}

TEST_F(DiagnosticsTest, PerChainStatisticsComeFromDrawsAndFooter) {
  std::vector<Record> v{header(1)};
  for (int i = 0; i < 4; ++i) {
    Record r = draw(0, i, {static_cast<double>(i)});
    r.mutable_draw()->set_accept_stat(0.25 * i);         // mean 0.375
    r.mutable_draw()->set_tree_depth(i + 1);             // mean 2.5, max 4
    r.mutable_draw()->set_n_leapfrog(2 * i + 1);         // mean 4
    r.mutable_draw()->set_divergent(i == 2);
    r.mutable_draw()->set_step_size(0.1 * (i + 1));      // last: 0.4
    v.push_back(r);
  }
  Record w = draw(0, 0, {100.0});
  w.mutable_draw()->set_warmup(true);  // ignored
  v.insert(v.begin() + 1, w);
  v.push_back(footer(1));
  write(dir_ / "a.pemc", v);
  const DiagnosticsReport rep = diagnose_files({dir_ / "a.pemc"}, TraceOptions{});
  ASSERT_EQ(rep.runs.size(), 1u);
  const auto& c = rep.runs[0].chains.at(0);
  EXPECT_EQ(c.n_draws, 4);
  EXPECT_DOUBLE_EQ(c.mean_accept_stat, 0.375);
  EXPECT_DOUBLE_EQ(c.mean_tree_depth, 2.5);
  EXPECT_EQ(c.max_tree_depth, 4);
  EXPECT_DOUBLE_EQ(c.mean_n_leapfrog, 4.0);
  EXPECT_EQ(c.n_divergent, 1);
  EXPECT_DOUBLE_EQ(c.step_size, 0.4);
  EXPECT_EQ(c.n_gradient_evals, 1000);
  EXPECT_DOUBLE_EQ(c.wall_seconds, 0.5);
  EXPECT_EQ(c.status, "ok");
  EXPECT_EQ(c.estimates.at("swap_accept_0"), 0.0);
  EXPECT_FALSE(c.weighted);
  EXPECT_DOUBLE_EQ(c.kish_ess, 4.0);
  EXPECT_EQ(rep.runs[0].n_divergent, 1);
  EXPECT_DOUBLE_EQ(rep.runs[0].parameters[0].mean, 1.5);
}

TEST_F(DiagnosticsTest, LogZTrustIsJudgedAcrossTheRun) {
  // Three PT-like chains: chain 1 had too few round trips; the three estimates 10, 10.5, 11 with
  // SEs 0.01 disagree (chi2 = 5000 on 2 dof). Written without the trust keys (an older file):
  // diagnose derives them.
  auto v = iid_file(3, 50, 7);
  auto* f = v.back().mutable_footer();
  for (int c = 0; c < 3; ++c) {
    auto& e = *f->mutable_chains(c)->mutable_estimates();
    e["log_z"] = 10.0 + 0.5 * c;
    e["log_z_se"] = 0.01;
    e["round_trips"] = c == 1 ? 3.0 : 200.0;
    e["log_z_batches"] = 40.0;
  }
  write(dir_ / "a.pemc", v);
  const DiagnosticsReport rep = diagnose_files({dir_ / "a.pemc"}, TraceOptions{});
  ASSERT_EQ(rep.runs.size(), 1u);
  const auto& r = rep.runs[0];
  ASSERT_TRUE(r.log_z_check.has_value());
  EXPECT_TRUE(r.log_z_check->agreement.disagree);
  EXPECT_NEAR(r.log_z_check->agreement.spread_ratio, 50.0, 1e-9);
  for (const auto& c : r.chains) {
    EXPECT_EQ(c.estimates.at("log_z_untrusted"), 1.0);
    EXPECT_EQ(c.estimates.at("log_z_untrusted_chains_disagree"), 1.0);
    EXPECT_EQ(c.estimates.count("log_z_untrusted_round_trips"), c.chain_id == 1 ? 1u : 0u);
  }
  int notes = 0;
  for (const auto& n : r.notes) notes += n.find("cannot be trusted") != std::string::npos;
  EXPECT_EQ(notes, 3);
  const auto j = nlohmann::json::parse(diagnostics_to_json(rep));
  EXPECT_EQ(j["runs"][0]["log_z_trust"]["n_untrusted"], 3);
  EXPECT_EQ(j["runs"][0]["log_z_trust"]["chains_disagree"], true);
  const std::string table = diagnostics_to_table(rep);
  EXPECT_NE(table.find("log Z: 3 of 3 chains cannot be trusted"), std::string::npos) << table;

  // A run without a log Z has no such check.
  write(dir_ / "b.pemc", iid_file(2, 50, 8));
  const DiagnosticsReport plain = diagnose_files({dir_ / "b.pemc"}, TraceOptions{});
  EXPECT_FALSE(plain.runs.at(0).log_z_check.has_value());
  EXPECT_FALSE(nlohmann::json::parse(diagnostics_to_json(plain))["runs"][0].contains("log_z_trust"));
}

TEST_F(DiagnosticsTest, ARunOfOneChainHasAnUncheckedLogZ) {
  // One chain whose own rules pass (plenty of round trips): nothing can compare its log Z with an
  // independent estimate, so diagnose says unchecked rather than "0 of 1 cannot be trusted".
  auto v = iid_file(1, 50, 9);
  auto& e = *v.back().mutable_footer()->mutable_chains(0)->mutable_estimates();
  e["log_z"] = 10.0;
  e["log_z_se"] = 0.01;
  e["round_trips"] = 200.0;
  write(dir_ / "a.pemc", v);
  const DiagnosticsReport rep = diagnose_files({dir_ / "a.pemc"}, TraceOptions{});
  const auto& r = rep.runs.at(0);
  ASSERT_TRUE(r.log_z_check.has_value());
  EXPECT_TRUE(r.log_z_check->unchecked);
  EXPECT_EQ(r.chains.at(0).estimates.at("log_z_unchecked"), 1.0);
  const std::string table = diagnostics_to_table(rep);
  EXPECT_NE(table.find("log Z: 0 of 1 chains cannot be trusted; 1 unchecked: 1 chain with a log Z "
                       "and an SE, and the check that the chains agree within their SEs needs 3, "
                       "so none is trusted"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("note: chain 0: log_z 10 ± 0.01 is unchecked"), std::string::npos) << table;
  const auto j = nlohmann::json::parse(diagnostics_to_json(rep));
  EXPECT_EQ(j["runs"][0]["log_z_trust"]["unchecked"], true);
  EXPECT_EQ(j["runs"][0]["log_z_trust"]["n_unchecked"], 1);
  EXPECT_EQ(j["runs"][0]["log_z_trust"]["n_untrusted"], 0);
}

// 4 iid chains of 2000: R-hat < 1.01 (R-hat - 1 ≈ (F - 1) / (2n) with n = 1000 per split chain;
// see tests/unit/estimators/rhat_test.cpp) and bulk ESS within 25% of N = 8000 (sd of tau-hat
// ≈ 2 sqrt(L / N) <= 0.09 for a window L <= 15 lags: 25% is about 3 sd).
TEST_F(DiagnosticsTest, IidChainsLookConverged) {
  write(dir_ / "a.pemc", iid_file(4, 2000, 3));
  const DiagnosticsReport rep = diagnose_files({dir_ / "a.pemc"}, TraceOptions{});
  ASSERT_EQ(rep.runs.size(), 1u);
  const RunDiagnostics& r = rep.runs[0];
  EXPECT_EQ(r.n_chains, 4);
  EXPECT_EQ(r.n_draws_used, 2000);
  EXPECT_EQ(r.quantity, "state");
  ASSERT_EQ(r.parameters.size(), 3u);  // x[1], x[2], potential
  EXPECT_EQ(r.parameters[0].name, "x[1]");
  EXPECT_EQ(r.parameters[2].name, "potential");
  EXPECT_LT(r.parameters[0].rhat, 1.01);
  EXPECT_NEAR(r.parameters[0].ess_bulk / 8000.0, 1.0, 0.25);
  EXPECT_NEAR(r.parameters[0].ess_tail / 8000.0, 1.0, 0.25);
  // x[2] is the draw index: a perfect trend, which split R-hat must flag.
  EXPECT_GT(r.parameters[1].rhat, 1.5);
  EXPECT_GT(r.max_rhat, 1.5);
  // Per chain: 2000 iid draws each.
  EXPECT_NEAR(r.chains[0].parameters[0].ess_bulk / 2000.0, 1.0, 0.4);
}

TEST_F(DiagnosticsTest, ChainsWithDifferentMeansOrAStuckChainGiveLargeRhat) {
  write(dir_ / "a.pemc", iid_file(4, 1000, 4, {0.0, 1.0, 2.0, 3.0}));
  const auto far = diagnose_files({dir_ / "a.pemc"}, TraceOptions{});
  // Split means 0, 0, 1, 1, 2, 2, 3, 3 (variance 10/7) against W = 1: R-hat ≈ sqrt(1 + 10/7) =
  // 1.56 on the raw scale, ≈ 1.5 after rank normalisation.
  EXPECT_GT(far.runs[0].parameters[0].rhat, 1.3);

  // One chain stuck at 3: its draws are all the largest (see rhat_test: expected R-hat ≈ 1.5).
  std::vector<Record> v = iid_file(3, 1000, 5);
  v.pop_back();
  for (int i = 0; i < 1000; ++i) v.push_back(draw(3, i, {3.0, 0.0}));
  v.push_back(footer(4));
  write(dir_ / "b.pemc", v);
  const auto stuck = diagnose_files({dir_ / "b.pemc"}, TraceOptions{});
  EXPECT_GT(stuck.runs[0].parameters[0].rhat, 1.3);
}

TEST_F(DiagnosticsTest, ConstantDrawsGiveUndefinedRhatWithANote) {
  std::vector<Record> v{header(1)};
  for (int i = 0; i < 100; ++i) v.push_back(draw(0, i, {0.1}));
  write(dir_ / "a.pemc", v);  // no footer either
  TraceOptions o;
  o.with_potential = false;
  const auto rep = diagnose_files({dir_ / "a.pemc"}, o);
  const auto& r = rep.runs[0];
  EXPECT_TRUE(std::isnan(r.parameters[0].rhat));
  EXPECT_TRUE(std::isnan(r.parameters[0].ess_bulk));
  bool constant = false, status = false;
  for (const auto& n : r.notes) {
    constant = constant || n.find("same value") != std::string::npos;
    status = status || n.find("incomplete: no footer") != std::string::npos;
  }
  EXPECT_TRUE(constant);
  EXPECT_TRUE(status);
  const auto j = nlohmann::json::parse(diagnostics_to_json(rep));
  EXPECT_TRUE(j["runs"][0]["parameters"][0]["rhat"].is_null());
  EXPECT_FALSE(j["files"][0]["complete"].get<bool>());
}

TEST_F(DiagnosticsTest, PseudoSampleDrawsAreWeightedAndDiagnosedThroughTheirMean) {
  std::vector<Record> v{header(1)};
  v[0].mutable_header()->set_dim(4);  // 2 pseudo-samples of a 1-D target + 2 temperatures
  v[0].mutable_header()->mutable_config()->mutable_sampler()->mutable_pseudo_extended()->set_n_pseudo(2);
  std::mt19937_64 gen(6);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int i = 0; i < 400; ++i) {
    Record r = draw(0, i, {9.0, 9.0, 0.0, 0.0});
    const double a = normal(gen), b = normal(gen);
    r.mutable_draw()->add_extra_states(a);
    r.mutable_draw()->add_extra_states(b);
    r.mutable_draw()->add_log_weights(0.0);
    r.mutable_draw()->add_log_weights(i % 2 ? 0.0 : -50.0);  // every other draw: b weighs nothing
    v.push_back(r);
  }
  v.push_back(footer(1));
  write(dir_ / "a.pemc", v);
  const auto rep = diagnose_files({dir_ / "a.pemc"}, TraceOptions{});
  const auto& r = rep.runs[0];
  EXPECT_EQ(r.quantity, "pseudo_sample_weighted_mean");
  EXPECT_EQ(r.sampler, "pseudo_extended");
  const auto& c = r.chains[0];
  EXPECT_TRUE(c.weighted);
  // 800 samples with weights 1/2, 1/2 (200 draws) and 1, ~0 (200 draws): Kish ESS =
  // (sum w)^2 / sum w^2 = 400^2 / (400 * 0.25 + 200) = 533.3.
  EXPECT_NEAR(c.kish_ess, 160000.0 / 300.0, 1e-6);
}

TEST(AddWeightedDraw, OneWeightedSampleWeighsAcrossDrawsExceptForPseudoExtended) {
  // Continuous tempering's view: x with log w1(x). Weights 1 and 3 over two draws: Kish ESS
  // (1 + 3)^2 / (1 + 9) = 1.6, mean (1 * 0 + 3 * 4) / 4 = 3.
  estimators::WeightedMoments ct, pe;
  Vector scratch;
  for (auto [x, w] : {std::pair{0.0, 1.0}, std::pair{4.0, 3.0}}) {
    v1::Draw d;
    d.add_state(x);
    d.add_state(0.5);  // the temperature coordinate
    d.add_extra_states(x);
    d.add_log_weights(std::log(w));
    EXPECT_TRUE(add_weighted_draw(d, 1, "continuous_tempering", ct, scratch));
    EXPECT_TRUE(add_weighted_draw(d, 1, "pseudo_extended", pe, scratch));
  }
  EXPECT_NEAR(ct.kish_ess(), 1.6, 1e-12);
  EXPECT_NEAR(ct.mean()[0], 3.0, 1e-12);
  // Pseudo-extended with N = 1: the weight normalises to 1 within the draw.
  EXPECT_NEAR(pe.kish_ess(), 2.0, 1e-12);
  EXPECT_NEAR(pe.mean()[0], 2.0, 1e-12);
}

TEST_F(DiagnosticsTest, ChainsOfARunAreGroupedAcrossFilesAndThinningIsNoted) {
  auto a = iid_file(2, 600, 7);
  write(dir_ / "a.pemc", a);
  // The same run's chains 2 and 3 in another file.
  std::vector<Record> b{header(2)};
  std::mt19937_64 gen(8);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int i = 0; i < 600; ++i)
    for (int c = 2; c < 4; ++c) b.push_back(draw(c, i, {normal(gen), 0.0}));
  write(dir_ / "b.pemc", b);
  TraceOptions o;
  o.max_draws_per_chain = 200;
  const auto rep = diagnose_files({dir_ / "a.pemc", dir_ / "b.pemc"}, o);
  ASSERT_EQ(rep.runs.size(), 1u);
  EXPECT_EQ(rep.runs[0].n_chains, 4);
  EXPECT_EQ(rep.runs[0].thinned_by, 4);  // 600 draws -> stride 4 -> 150 kept
  EXPECT_EQ(rep.runs[0].n_draws_used, 150);
  bool noted = false;
  for (const auto& n : rep.runs[0].notes) noted = noted || n.find("thinned") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST_F(DiagnosticsTest, DamagedFileIsDiagnosedUpToTheDamage) {
  write(dir_ / "a.pemc", iid_file(2, 200, 9));
  const auto size = fs::file_size(dir_ / "a.pemc");
  fs::resize_file(dir_ / "a.pemc", size - 30);
  const auto rep = diagnose_files({dir_ / "a.pemc"}, TraceOptions{});
  ASSERT_EQ(rep.files.size(), 1u);
  EXPECT_TRUE(rep.files[0].problem.has_value());
  EXPECT_EQ(rep.runs.size(), 1u);
  const auto j = nlohmann::json::parse(diagnostics_to_json(rep));
  EXPECT_TRUE(j["files"][0].contains("problem"));
  EXPECT_NE(diagnostics_to_table(rep).find("DAMAGED"), std::string::npos);
}

TEST_F(DiagnosticsTest, JsonHasTheStableKeys) {
  write(dir_ / "a.pemc", iid_file(2, 100, 10));
  const auto j = nlohmann::json::parse(
      diagnostics_to_json(diagnose_files({dir_ / "a.pemc"}, TraceOptions{})));
  const auto& r = j["runs"][0];
  for (const char* key : {"run_id", "sampler", "target", "quantity", "n_chains", "n_draws_used",
                          "thinned_by", "max_rhat", "min_ess_bulk", "min_ess_tail", "n_divergent",
                          "parameters", "chains", "notes"})
    EXPECT_TRUE(r.contains(key)) << key;
  for (const char* key : {"name", "mean", "sd", "rhat", "rhat_bulk", "rhat_folded", "ess_bulk",
                          "ess_tail"})
    EXPECT_TRUE(r["parameters"][0].contains(key)) << key;
  for (const char* key : {"file", "chain_id", "seed", "n_draws", "n_draws_used", "thinned_by",
                          "status", "mean_accept_stat", "n_divergent", "mean_tree_depth",
                          "max_tree_depth", "mean_n_leapfrog", "step_size", "weighted", "kish_ess",
                          "n_gradient_evals", "wall_seconds", "estimates", "parameters"})
    EXPECT_TRUE(r["chains"][0].contains(key)) << key;
  for (const char* key : {"path", "n_records", "complete"})
    EXPECT_TRUE(j["files"][0].contains(key)) << key;
}

// A draw too short for its header ends the read there, as damage does, naming the record.
TEST_F(DiagnosticsTest, ADrawTooShortForItsHeaderEndsTheReadThere) {
  std::vector<Record> v{header(2), draw(0, 0, {1.0, 2.0}), draw(0, 1, {1.0})};
  write(dir_ / "a.pemc", v);
  const auto t = read_traces(dir_ / "a.pemc", TraceOptions{});
  ASSERT_TRUE(t.problem.has_value());
  EXPECT_EQ(t.problem->record_index, 2);
  EXPECT_EQ(t.problem->message,
            "inconsistent file: a draw of run 'r' with a state of 1 coordinates, the header says 2");
  ASSERT_EQ(t.chains.size(), 1u);
  EXPECT_EQ(t.chains[0].n_draws, 1);
}

// A Stan run whose header says which named outputs are parameters (RunInfo.n_parameter_outputs):
// the table lists them (worst first) before the generated quantities (worst first), even when the
// generated quantities mix worse; a file that does not say keeps one worst-first order.
TEST_F(DiagnosticsTest, StanParametersAreListedBeforeGeneratedQuantities) {
  const auto write_run = [&](const fs::path& path, std::optional<int> n_parameters) {
    std::mt19937_64 gen(4);
    std::normal_distribution<double> normal(0.0, 1.0);
    Record h = header(2);
    auto* info = h.mutable_header()->add_runs();
    info->set_name("r");
    info->set_dim(2);
    info->set_original_dim(2);
    for (const char* n : {"mu", "sigma", "log_lik[1]", "log_lik[2]", "log_lik[3]"})
      info->add_output_names(n);
    if (n_parameters) info->set_n_parameter_outputs(*n_parameters);
    std::vector<Record> v{h};
    for (int i = 0; i < 400; ++i)
      for (int c = 0; c < 2; ++c) {
        Record d = draw(c, i, {normal(gen), normal(gen)});
        d.mutable_draw()->add_outputs(normal(gen));      // mu
        d.mutable_draw()->add_outputs(1 + normal(gen));  // sigma
        for (int k = 1; k <= 3; ++k)  // log_lik: trends, the worst R-hats
          d.mutable_draw()->add_outputs(k * static_cast<double>(i) + normal(gen));
        v.push_back(d);
      }
    v.push_back(footer(2));
    write(path, v);
  };
  write_run(dir_ / "new.pemc", 2);
  write_run(dir_ / "old.pemc", std::nullopt);
  const DiagnosticsReport rep = diagnose_files({dir_ / "new.pemc"}, TraceOptions{});
  ASSERT_EQ(rep.runs[0].n_model_parameters, std::optional<std::size_t>(2));
  const std::string table = diagnostics_to_table(rep, 2);
  ASSERT_NE(table.find("  mu "), std::string::npos) << table;
  ASSERT_NE(table.find("  sigma "), std::string::npos) << table;
  EXPECT_LT(table.find("  lp__ "), table.find("  mu "));
  EXPECT_EQ(table.find("  log_lik["), std::string::npos) << table;  // cut after the parameters
  EXPECT_NE(table.find("parameters before generated quantities"), std::string::npos) << table;
  const std::string all = diagnostics_to_table(rep, 10);
  EXPECT_LT(std::max(all.find("  mu "), all.find("  sigma ")), all.find("  log_lik[")) << all;
  const std::string picked = diagnostics_to_table(rep, 10, {"log_lik[3]", "sigma"});
  EXPECT_LT(picked.find("  sigma "), picked.find("  log_lik[3] ")) << picked;
  EXPECT_NE(diagnostics_to_json(rep).find("\"n_model_parameters\": 2"), std::string::npos);

  const DiagnosticsReport old = diagnose_files({dir_ / "old.pemc"}, TraceOptions{});
  EXPECT_FALSE(old.runs[0].n_model_parameters.has_value());
  const std::string old_table = diagnostics_to_table(old, 2);
  EXPECT_NE(old_table.find("  log_lik["), std::string::npos) << old_table;  // worst first only
  EXPECT_EQ(old_table.find("  mu "), std::string::npos) << old_table;
  EXPECT_EQ(diagnostics_to_json(old).find("n_model_parameters"), std::string::npos);
}

// Every quantity is diagnosed by default (here 12 coordinates, more than the table shows); the
// table lists lp__ (which stands for the potential) first, then the worst, and says how many it
// left out; the headline covers all of them. --vars lists exactly the quantities named.
TEST_F(DiagnosticsTest, EveryQuantityIsDiagnosedAndTheTableShowsTheWorstFirst) {
  std::mt19937_64 gen(9);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<Record> v{header(12)};
  for (int i = 0; i < 400; ++i)
    for (int c = 0; c < 2; ++c) {
      std::vector<double> x(12);
      for (auto& xi : x) xi = normal(gen);
      x[10] = static_cast<double>(i);  // x[11] trends: the worst R-hat
      v.push_back(draw(c, i, x));
    }
  v.push_back(footer(2));
  write(dir_ / "a.pemc", v);
  const DiagnosticsReport rep = diagnose_files({dir_ / "a.pemc"}, TraceOptions{});
  const RunDiagnostics& r = rep.runs[0];
  ASSERT_EQ(r.parameters.size(), 13u);  // x[1] .. x[12], potential
  EXPECT_EQ(r.parameters[11].name, "x[12]");
  EXPECT_EQ(r.max_rhat, r.parameters[10].rhat);
  EXPECT_EQ(worst_first(r.parameters).front(), 10u);
  const std::string table = diagnostics_to_table(rep, 4);
  EXPECT_NE(table.find("tail ESS\n  lp__ "), std::string::npos) << table;
  EXPECT_LT(table.find("  lp__ "), table.find("  x[11] ")) << table;
  EXPECT_EQ(table.find("  potential "), std::string::npos) << table;
  EXPECT_NE(table.find("and 8 more (the worst 4 shown"), std::string::npos) << table;
  EXPECT_NE(table.find("over all 13 parameters"), std::string::npos) << table;
  EXPECT_EQ(diagnostics_to_table(rep, 20).find("more (the worst"), std::string::npos);
  const std::string picked = diagnostics_to_table(rep, 4, {"x[2]", "x[11]"});
  EXPECT_LT(picked.find("  x[11] "), picked.find("  x[2] ")) << picked;  // worst first
  EXPECT_EQ(picked.find("  lp__ "), std::string::npos) << picked;
  EXPECT_EQ(picked.find("  x[3] "), std::string::npos) << picked;
  EXPECT_THROW(diagnostics_to_table(rep, 4, {"theta"}), ConfigError);
}

// A run with named outputs (a Stan model's) is diagnosed on them, not on its unconstrained state.
TEST_F(DiagnosticsTest, NamedOutputsAreDiagnosedByName) {
  Record h = header(1);
  auto* info = h.mutable_header()->add_runs();
  info->set_name("r");
  info->set_dim(1);
  info->set_original_dim(1);
  for (const char* n : {"sigma", "theta[1]"}) info->add_output_names(n);
  std::vector<Record> v{h};
  for (int i = 0; i < 50; ++i)
    for (int c = 0; c < 2; ++c) {
      Record d = draw(c, i, {0.1 * i});
      d.mutable_draw()->add_outputs(std::exp(0.1 * i));
      d.mutable_draw()->add_outputs(-1.0 * c);
      v.push_back(d);
    }
  write(dir_ / "a.pemc", v);
  const auto rep = diagnose_files({dir_ / "a.pemc"}, TraceOptions{});
  const auto& r = rep.runs[0];
  ASSERT_EQ(r.parameters.size(), 3u);
  EXPECT_EQ(r.quantity, "outputs");
  EXPECT_EQ(r.parameters[0].name, "sigma");
  EXPECT_EQ(r.parameters[1].name, "theta[1]");
  EXPECT_DOUBLE_EQ(r.parameters[1].mean, -0.5);  // the outputs, not the state
  // Outputs of the wrong size name the record.
  v[3].mutable_draw()->add_outputs(1.0);
  write(dir_ / "b.pemc", v);
  EXPECT_THROW(read_traces(dir_ / "b.pemc", TraceOptions{}), DataError);
}

// posterior's quantile2 (type 7 on the pooled draws) and mcse_mean, by hand: draws 1 .. 20 in two
// chains, pooled order statistics x_(1..20) = 1 .. 20; type 7 at p: h = 19 p, x_(floor h + 1)
// interpolated: 5 %: 1.95, 50 %: 10.5, 95 %: 19.05.
TEST(DiagnoseQuantity, QuantilesAndMcseAsPosterior) {
  std::vector<double> a, b;
  for (int i = 1; i <= 10; ++i) {
    a.push_back(i);
    b.push_back(10 + i);
  }
  const ParameterDiagnostics p = diagnose_quantity("q", {a, b}, nullptr);
  EXPECT_DOUBLE_EQ(p.mean, 10.5);
  EXPECT_DOUBLE_EQ(p.q5, 1.95);
  EXPECT_DOUBLE_EQ(p.q50, 10.5);
  EXPECT_DOUBLE_EQ(p.q95, 19.05);
  EXPECT_TRUE(std::isfinite(p.mcse_mean));
  EXPECT_DOUBLE_EQ(p.mcse_mean, estimators::mcse_mean({a, b}));
  std::vector<double> bad = a;
  bad[3] = std::nan("");
  std::vector<std::string> notes;
  const ParameterDiagnostics u = diagnose_quantity("u", {bad, b}, &notes);
  EXPECT_TRUE(std::isnan(u.q50) && std::isnan(u.mcse_mean) && std::isnan(u.rhat));
  EXPECT_FALSE(notes.empty());
}

// The HMC chain statistics: draws at the configured maximum tree depth, E-BFMI of energy__, the
// divergences as a warning with their share, and lp__ = -potential.
TEST_F(DiagnosticsTest, TreeDepthEbfmiDivergencesAndLp) {
  Record h = header(1);
  h.mutable_header()->mutable_config()->mutable_sampler()->mutable_nuts()->set_max_tree_depth(3);
  h.mutable_header()->mutable_config()->set_warmup(7);
  std::vector<Record> v{h};
  const int depth[] = {1, 3, 3, 2};
  const double energy[] = {1, 2, 4, 7};  // E-BFMI 0.5 (estimators/ebfmi_test.cpp)
  for (int i = 0; i < 4; ++i) {
    Record d = draw(0, i, {1.0 + i});
    d.mutable_draw()->set_tree_depth(depth[i]);
    d.mutable_draw()->set_energy(energy[i]);
    d.mutable_draw()->set_divergent(i == 1);
    v.push_back(d);
  }
  v.push_back(footer(1));
  write(dir_ / "a.pemc", v);
  const DiagnosticsReport rep = diagnose_files({dir_ / "a.pemc"}, TraceOptions{});
  const RunDiagnostics& r = rep.runs[0];
  EXPECT_EQ(r.warmup, 7);
  ASSERT_EQ(r.chains.size(), 1u);
  const ChainDiagnostics& c = r.chains[0];
  ASSERT_TRUE(c.n_max_tree_depth.has_value());
  EXPECT_EQ(*c.n_max_tree_depth, 2);
  EXPECT_EQ(c.configured_max_tree_depth, 3);
  EXPECT_DOUBLE_EQ(c.ebfmi, 0.5);
  EXPECT_TRUE(c.records_divergences);
  ASSERT_TRUE(r.lp.has_value());
  // potential 0.5 x^2 at x = 1 .. 4: lp__ = -(0.5 + 2 + 4.5 + 8) / 4.
  EXPECT_DOUBLE_EQ(r.lp->mean, -15.0 / 4.0);
  EXPECT_NEAR(r.lp->q95, -(0.5 + 0.15 * 1.5), 1e-12);  // -(potential's 5 % quantile)
  bool divergences = false, depth_warned = false;
  for (const auto& w : r.warnings) {
    divergences = divergences || w.rfind("divergences: 1 of 4 post-warmup draws (25.0%)", 0) == 0;
    depth_warned = depth_warned || w.rfind("tree depth: 2 of 4 post-warmup draws (50.0%) hit the maximum tree depth 3", 0) == 0;
  }
  EXPECT_TRUE(divergences && depth_warned);
}

}  // namespace
}  // namespace pemc::report
