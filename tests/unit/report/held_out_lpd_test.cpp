// Tests of the held-out log predictive density (HeldOutLpd, summarize's "held_out_lpd", compare's
// mean ± sd over seeds): the online log-sum-exp accumulation against the brute-force formula
//   lpd = sum_j log( sum_s w_s p(y_j | x_s) / sum_s w_s )
// on a tiny horseshoe logistic data set written to a temp dir, with unweighted draws, global
// weights and pseudo-extended draws (weights normalised within each draw).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/defaults.hpp"
#include "config/factories.hpp"
#include "config/load.hpp"
#include "core/error.hpp"
#include "core/numerics.hpp"
#include "records/record_writer.hpp"
#include "report/compare.hpp"
#include "report/summary.hpp"
#include "rng/stream.hpp"
#include "targets/horseshoe_logistic.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;
using pemc::v1::Record;

class HeldOutLpdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("pemc_lpd_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // 12 rows, 3 covariates: the 80/20 split keeps round(9.6) = 10 training rows and 2 test rows.
    data_ = dir_ / "tiny.csv";
    std::ofstream out(data_);
    out << "y,x1,x2,x3\n";
    const double rows[12][4] = {{1, 0.5, -1.0, 2.0},  {0, -0.3, 0.2, -1.0}, {1, 1.2, 0.0, 0.4},
                                {0, -2.0, 1.5, 0.1},  {1, 0.7, -0.6, -0.2}, {0, -0.1, 0.9, 1.3},
                                {1, 2.2, -1.4, 0.0},  {0, -1.1, 0.3, -0.7}, {1, 0.05, 0.05, 0.05},
                                {0, -0.8, -0.8, 0.8}, {1, 1.0, 1.0, -1.0},  {0, 0.3, 2.0, -2.0}};
    for (const auto& r : rows) out << r[0] << "," << r[1] << "," << r[2] << "," << r[3] << "\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The run's config as a file, for --config: the held-out lpd needs the target, which reports
  // build from a config the user names, never from a header.
  fs::path config_file(const std::string& name, bool pseudo_extended) const {
    const auto p = dir_ / (name + ".pbtxt");
    std::ofstream(p) << "name: \"" << name << "\"\ntarget { horseshoe_logistic { data_file: \""
                     << data_.string() << "\" split_seed: 3 p0: 1 } }\n"
                     << (pseudo_extended ? "sampler { pseudo_extended { n_pseudo: 3 } }\n"
                                         : "sampler { hmc { step_size: 0.1 } }\n")
                     << "iterations: 10\nseeds { values: [1] }\noutput { path: \"o.pemc\" }\n";
    return p;
  }
  // The same config as pemc-dist records it in the header (defaults filled in).
  v1::RunConfig config(const std::string& name, bool pseudo_extended) const {
    auto loaded = config::load_config(config_file(name, pseudo_extended));
    config::apply_defaults(loaded);
    return loaded.config;
  }
  SummarizeOptions with_config(const std::string& name, bool pseudo_extended) const {
    SummarizeOptions o;
    o.target_config = config_file(name, pseudo_extended);
    return o;
  }
  std::shared_ptr<const targets::HorseshoeLogistic> target() const {
    return targets::make_horseshoe_logistic(config("x", false).target().horseshoe_logistic());
  }

  fs::path dir_, data_;
};

// Points spread around the prior bulk (log tau near 0 so that the coefficients matter).
std::vector<Vector> random_points(int dim, int n, std::uint64_t id) {
  rng::Stream s(5, rng::Domain::kTest, id, 0);
  std::vector<Vector> xs;
  for (int k = 0; k < n; ++k) {
    Vector x(dim);
    for (int i = 0; i < dim; ++i) x[i] = s.normal();
    xs.push_back(x);
  }
  return xs;
}

// The formula, written out with exp/log over all samples at once (no online accumulation).
double brute_force_lpd(const targets::HorseshoeLogistic& t, const std::vector<Vector>& xs,
                       const std::vector<double>& w) {
  double lpd = 0.0, sum_w = 0.0;
  for (double v : w) sum_w += v;
  for (Eigen::Index j = 0; j < t.n_test(); ++j) {
    double num = 0.0;
    for (std::size_t s = 0; s < xs.size(); ++s) num += w[s] * std::exp(t.test_log_likelihoods(xs[s])[j]);
    lpd += std::log(num / sum_w);
  }
  return lpd;
}

void write_file(const fs::path& path, const v1::RunConfig& config, int original_dim, int chain,
                std::uint64_t seed, const std::vector<Record>& draws) {
  records::RecordWriter w(path, records::RecordWriter::Options{});
  Record h;
  *h.mutable_header()->mutable_config() = config;
  h.mutable_header()->set_dim(config.sampler().has_pseudo_extended() ? 3 * original_dim + 3
                                                                     : original_dim);
  h.mutable_header()->set_original_dim(original_dim);
  h.mutable_header()->set_n_chains(1);
  h.mutable_header()->set_sampler_name(config::sampler_kind_name(config.sampler()));
  auto* info = h.mutable_header()->add_runs();  // as pemc-dist describes the run
  info->set_name(config.name());
  info->set_dim(h.header().dim());
  info->set_original_dim(original_dim);
  info->set_n_test_points(2);
  w.write(h);
  for (Record r : draws) {
    r.mutable_draw()->set_run_id(config.name());
    r.mutable_draw()->set_chain_id(chain);
    r.mutable_draw()->set_seed(seed);
    w.write(r);
  }
  Record f;
  f.mutable_footer()->set_status("ok");
  auto* s = f.mutable_footer()->add_chains();
  s->set_chain_id(chain);
  s->set_seed(seed);
  s->set_status("ok");
  f.mutable_footer()->set_n_records(w.records_written());
  w.write(f);
  w.close();
}

Record plain_draw(const Vector& x, std::int64_t iteration) {
  Record r;
  r.mutable_draw()->set_iteration(iteration);
  for (Eigen::Index i = 0; i < x.size(); ++i) r.mutable_draw()->add_state(x[i]);
  return r;
}

TEST_F(HeldOutLpdTest, OnlineWeightedAccumulationEqualsTheBruteForceFormula) {
  const auto t = target();
  ASSERT_EQ(t->n_test_points(), 2);
  const auto xs = random_points(t->dim(), 7, 1);
  const std::vector<double> w = {0.5, 2.0, 1e-3, 1.0, 3.5, 0.25, 0.0};  // the last carries no weight
  HeldOutLpd acc(*t);
  // Weights as logs shifted by a huge constant: the accumulators must not overflow.
  for (std::size_t s = 0; s < xs.size(); ++s) acc.add(xs[s], std::log(w[s]) + 800.0);
  EXPECT_EQ(acc.n_samples(), 6);
  EXPECT_NEAR(acc.value(), brute_force_lpd(*t, xs, w), 1e-10);

  // Unit weights: the horseshoe's own (batch) log_predictive_density.
  HeldOutLpd unit(*t);
  for (const auto& x : xs) unit.add(x);
  EXPECT_NEAR(unit.value(), t->log_predictive_density(xs), 1e-10);
}

TEST_F(HeldOutLpdTest, NoSamplesIsNaNAndBadWeightsOrTargetsThrow) {
  const auto t = target();
  HeldOutLpd acc(*t);
  EXPECT_TRUE(std::isnan(acc.value()));
  acc.add(random_points(t->dim(), 1, 2)[0], -kInf);  // weightless: still nothing
  EXPECT_TRUE(std::isnan(acc.value()));
  EXPECT_THROW(acc.add(Vector::Zero(t->dim()), std::numeric_limits<double>::quiet_NaN()), NumericalError);
  EXPECT_THROW(acc.add(Vector::Zero(t->dim()), kInf), NumericalError);
  EXPECT_THROW(acc.add(Vector::Zero(t->dim() + 1)), NumericalError);
  // A target without a test set cannot have a held-out density.
  const auto gaussian = config::make_target([] {
    v1::TargetConfig c;
    c.mutable_gaussian()->add_mean(0.0);
    return c;
  }());
  EXPECT_EQ(gaussian->n_test_points(), 0);
  EXPECT_THROW(HeldOutLpd{*gaussian}, ConfigError);
}

TEST_F(HeldOutLpdTest, SummarizeReportsItForUnweightedDraws) {
  const auto t = target();
  const auto xs = random_points(t->dim(), 5, 3);
  std::vector<Record> draws;
  for (std::size_t s = 0; s < xs.size(); ++s) draws.push_back(plain_draw(xs[s], static_cast<std::int64_t>(s)));
  {
    Record warm = plain_draw(Vector::Constant(t->dim(), 3.0), -1);
    warm.mutable_draw()->set_warmup(true);  // warmup draws are not part of the posterior sample
    draws.insert(draws.begin(), warm);
  }
  const auto path = dir_ / "hmc.pemc";
  write_file(path, config("hs_hmc", false), t->dim(), 0, 11, draws);

  const FileSummary s = summarize_file(path, with_config("hs_hmc", false));
  ASSERT_EQ(s.runs.size(), 1u);
  ASSERT_TRUE(s.runs[0].held_out_lpd.has_value());
  EXPECT_NEAR(*s.runs[0].held_out_lpd, t->log_predictive_density(xs), 1e-10);
  const auto j = nlohmann::json::parse(summaries_to_json({s}));
  EXPECT_NEAR(j["runs"][0]["held_out_lpd"].get<double>(), t->log_predictive_density(xs), 1e-10);
  EXPECT_NE(summaries_to_table({s}).find("held-out lpd"), std::string::npos);

  // Skipped without the target (no --config), with a note saying how to get it.
  const FileSummary n = summarize_file(path);
  EXPECT_FALSE(n.runs[0].held_out_lpd.has_value());
  EXPECT_NE(n.lpd_note.find("no held-out lpd: the held-out lpd needs the target of run 'hs_hmc': "
                            "pass --config CONFIG"),
            std::string::npos)
      << n.lpd_note;
  EXPECT_FALSE(nlohmann::json::parse(summaries_to_json({n}))["runs"][0].contains("held_out_lpd"));
  EXPECT_EQ(summaries_to_table({n}).find("held-out lpd"), std::string::npos);
}

TEST_F(HeldOutLpdTest, SummarizeWeightsPseudoSamplesWithinEachDraw) {
  // Pseudo-extended (Theorem 2.1): draw d's pseudo-samples x_{d,i} have weights
  // w_{d,i} = exp(lw_{d,i}) / sum_k exp(lw_{d,k}), so each draw carries total weight 1.
  const auto t = target();
  const int dim = t->dim();
  const auto xs = random_points(dim, 9, 4);  // 3 draws x 3 pseudo-samples
  const double lw[9] = {0.0, 1.0, -2.0, 700.0, 701.5, 699.0, -3.0, -kInf, -1.0};
  std::vector<Record> draws;
  std::vector<double> w;
  for (int d = 0; d < 3; ++d) {
    Record r = plain_draw(Vector::Zero(3 * dim + 3), d);
    double norm = -kInf;
    for (int i = 0; i < 3; ++i) norm = log_add_exp(norm, lw[3 * d + i]);
    for (int i = 0; i < 3; ++i) {
      const Vector& x = xs[static_cast<std::size_t>(3 * d + i)];
      for (int k = 0; k < dim; ++k) r.mutable_draw()->add_extra_states(x[k]);
      r.mutable_draw()->add_log_weights(lw[3 * d + i]);
      w.push_back(std::exp(lw[3 * d + i] - norm));
    }
    draws.push_back(r);
  }
  const auto path = dir_ / "pe.pemc";
  write_file(path, config("hs_pe", true), dim, 0, 12, draws);
  const FileSummary s = summarize_file(path, with_config("hs_pe", true));
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_TRUE(s.runs[0].weighted);
  ASSERT_TRUE(s.runs[0].held_out_lpd.has_value());
  EXPECT_NEAR(*s.runs[0].held_out_lpd, brute_force_lpd(*t, xs, w), 1e-10);
  // Not the same as weighting globally (the draws' weights differ by e^700): the rule matters.
  std::vector<double> global(9);
  for (int i = 0; i < 9; ++i) global[static_cast<std::size_t>(i)] = std::exp(lw[i] - 702.0);
  EXPECT_GT(std::abs(brute_force_lpd(*t, xs, global) - brute_force_lpd(*t, xs, w)), 1e-6);
}

TEST_F(HeldOutLpdTest, CompareGivesMeanAndSdOverSeeds) {
  const auto t = target();
  std::vector<double> lpds;
  std::vector<fs::path> paths;
  for (int seed = 0; seed < 3; ++seed) {
    const auto xs = random_points(t->dim(), 4, 10 + static_cast<std::uint64_t>(seed));
    std::vector<Record> draws;
    for (std::size_t s = 0; s < xs.size(); ++s) draws.push_back(plain_draw(xs[s], static_cast<std::int64_t>(s)));
    paths.push_back(dir_ / ("seed" + std::to_string(seed) + ".pemc"));
    write_file(paths.back(), config("hs_hmc", false), t->dim(), seed, 100 + static_cast<std::uint64_t>(seed), draws);
    lpds.push_back(t->log_predictive_density(xs));
  }
  const double mean = (lpds[0] + lpds[1] + lpds[2]) / 3.0;
  double var = 0.0;
  for (double v : lpds) var += (v - mean) * (v - mean) / 2.0;
  ASSERT_GT(var, 1e-8);  // the seeds differ, so the sd is tested

  CompareOptions with_target;
  with_target.target_config = config_file("hs_hmc", false);
  const Comparison c = compare_files(paths, with_target);
  ASSERT_EQ(c.groups.size(), 1u);
  ASSERT_TRUE(c.groups[0].held_out_lpd.has_value());
  EXPECT_EQ(c.groups[0].held_out_lpd->n, 3);
  EXPECT_NEAR(c.groups[0].held_out_lpd->mean, mean, 1e-10);
  EXPECT_NEAR(c.groups[0].held_out_lpd->sd, std::sqrt(var), 1e-10);
  const auto j = nlohmann::json::parse(comparison_to_json(c));
  EXPECT_NEAR(j["groups"][0]["held_out_lpd"]["mean"].get<double>(), mean, 1e-10);
  EXPECT_NEAR(j["groups"][0]["held_out_lpd"]["sd"].get<double>(), std::sqrt(var), 1e-10);
  const CompareOptions o;
  EXPECT_NE(comparison_to_markdown(c, o).find("held-out lpd"), std::string::npos);
  EXPECT_NE(comparison_to_csv(c, o).find("held_out_lpd_mean"), std::string::npos);

  const Comparison n = compare_files(paths, CompareOptions{});  // no --config: no target
  EXPECT_FALSE(n.groups[0].held_out_lpd.has_value());
  EXPECT_FALSE(nlohmann::json::parse(comparison_to_json(n))["groups"][0].contains("held_out_lpd"));
}

}  // namespace
}  // namespace pemc::report
