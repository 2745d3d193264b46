// Tests of multi-seed comparisons (src/report/compare.hpp) on hand-made record files whose
// per-chain moments are exact: group means, standard deviations, RMSE against the Gaussian's
// exact truth, costs, MSE x cost and log Z statistics against hand computations; exclusion of
// failed chains; grouping; the JSON keys, markdown and CSV layouts; config field paths.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "config/factories.hpp"
#include "core/error.hpp"
#include "records/record_writer.hpp"
#include "report/compare.hpp"
#include "run_info_support.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;
using pemc::v1::Record;

class CompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("pemc_compare_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

struct ChainSpec {
  int chain_id = 0;
  std::uint64_t seed = 0;
  std::vector<std::vector<double>> draws;
  std::string status = "ok";
  double wall_seconds = 0.0;
  std::int64_t n_gradient_evals = 0;
  std::map<std::string, double> estimates;
};

// Gaussian N((1, -1), I): E[x] = (1, -1), E[x^2] = (2, 2).
v1::RunConfig gaussian_config(const std::string& name, bool nuts = false) {
  v1::RunConfig c;
  c.set_name(name);
  c.mutable_target()->mutable_gaussian()->add_mean(1.0);
  c.mutable_target()->mutable_gaussian()->add_mean(-1.0);
  if (nuts)
    c.mutable_sampler()->mutable_nuts()->set_step_size(0.2);
  else
    c.mutable_sampler()->mutable_hmc()->set_step_size(0.1);
  return c;
}

// The header describes the run with its truth, as pemc-dist writes it, unless `with_truth` is
// false (a file of a pemc-dist that did not record truths).
void write_run(const fs::path& path, const v1::RunConfig& config,
               const std::vector<ChainSpec>& chains, bool with_footer = true,
               bool with_truth = true) {
  records::RecordWriter w(path, records::RecordWriter::Options{});
  Record h;
  *h.mutable_header()->mutable_config() = config;
  h.mutable_header()->set_dim(2);
  h.mutable_header()->set_original_dim(2);
  h.mutable_header()->set_n_chains(static_cast<int>(chains.size()));
  testing::describe_run(*h.mutable_header(), config, 2, 2);
  if (!with_truth) h.mutable_header()->mutable_runs(0)->clear_truth();
  w.write(h);
  for (const auto& c : chains)
    for (std::size_t i = 0; i < c.draws.size(); ++i) {
      Record r;
      auto* d = r.mutable_draw();
      d->set_run_id(config.name());
      d->set_chain_id(c.chain_id);
      d->set_seed(c.seed);
      d->set_iteration(static_cast<std::int64_t>(i));
      for (double x : c.draws[i]) d->add_state(x);
      w.write(r);
    }
  if (with_footer) {
    Record f;
    f.mutable_footer()->set_status("ok");
    for (const auto& c : chains) {
      auto* s = f.mutable_footer()->add_chains();
      s->set_chain_id(c.chain_id);
      s->set_seed(c.seed);
      s->set_status(c.status);
      s->set_wall_seconds(c.wall_seconds);
      s->set_n_gradient_evals(c.n_gradient_evals);
      for (const auto& [k, v] : c.estimates) (*s->mutable_estimates())[k] = v;
    }
    f.mutable_footer()->set_n_records(w.records_written());
    w.write(f);
  }
  w.close();
}

// Two draws m +- 1 per coordinate: mean m, second moment m^2 + 1, exactly.
std::vector<std::vector<double>> pair_around(double m0, double m1) {
  return {{m0 + 1.0, m1 + 1.0}, {m0 - 1.0, m1 - 1.0}};
}

double gaussian_log_z() {
  return config::make_target(gaussian_config("x").target())->truth().log_z.value();
}

// Run "a": chain means (1.5, -1), (0.5, -1), (1, -0.5); a fourth chain failed.
std::vector<ChainSpec> run_a_chains() {
  const double lz = gaussian_log_z();
  return {
      {0, 11, pair_around(1.5, -1.0), "ok", 1.0, 100, {{"log_z", lz + 0.1}, {"other", 5.0}}},
      {1, 12, pair_around(0.5, -1.0), "ok", 2.0, 200, {{"log_z", lz - 0.1}, {"other", 7.0}}},
      {2, 13, pair_around(1.0, -0.5), "ok", 3.0, 300, {{"log_z", lz + 0.3}}},
      {3, 14, pair_around(50.0, 50.0), "failed: numerics", 4.0, 400, {}},
  };
}

TEST_F(CompareTest, GroupStatisticsMatchHandComputations) {
  write_run(dir_ / "a.pemc", gaussian_config("a"), run_a_chains());
  const Comparison c = compare_files({dir_ / "a.pemc"}, CompareOptions{});
  ASSERT_EQ(c.groups.size(), 1u);
  const CompareGroup& g = c.groups[0];
  EXPECT_EQ(g.key, "a");
  EXPECT_EQ(g.sampler, "hmc");
  EXPECT_EQ(g.target, "gaussian");
  EXPECT_EQ(g.dim, 2);
  EXPECT_EQ(g.n_chains, 3);
  ASSERT_EQ(g.excluded.size(), 1u);
  EXPECT_EQ(g.excluded[0].chain_id, 3);
  EXPECT_NE(g.excluded[0].reason.find("failed: numerics"), std::string::npos);

  // E[x]: x0 over chains (1.5, 0.5, 1), x1 (-1, -1, -0.5); truth (1, -1).
  EXPECT_NEAR(g.mean.mean[0], 1.0, 1e-14);
  EXPECT_NEAR(g.mean.mean[1], -5.0 / 6.0, 1e-14);
  EXPECT_NEAR(g.mean.sd[0], 0.5, 1e-14);
  EXPECT_NEAR(g.mean.sd[1], std::sqrt(1.0 / 12.0), 1e-14);
  EXPECT_NEAR(g.mean.rmse[0], std::sqrt(0.5 / 3.0), 1e-14);
  EXPECT_NEAR(g.mean.rmse[1], std::sqrt(0.25 / 3.0), 1e-14);
  EXPECT_EQ(g.mean.truth, (Vector(2) << 1.0, -1.0).finished());
  ASSERT_TRUE(g.rmse_all_mean.has_value());
  EXPECT_NEAR(*g.rmse_all_mean, std::sqrt(0.75 / 6.0), 1e-14);
  // E[x^2] = m^2 + 1: (3.25, 2), (1.25, 2), (2, 1.25) against (2, 2).
  EXPECT_NEAR(g.second_moment.mean[0], 6.5 / 3.0, 1e-14);
  EXPECT_NEAR(*g.rmse_all_second_moment, std::sqrt((1.5625 + 0.5625 + 0.5625) / 6.0), 1e-14);
  // Costs: wall 1, 2, 3 s; gradients 100, 200, 300.
  EXPECT_NEAR(g.wall_seconds_mean, 2.0, 1e-14);
  EXPECT_NEAR(g.n_gradient_evals_mean, 200.0, 1e-12);
  EXPECT_NEAR(g.n_draws_mean, 2.0, 1e-14);
  EXPECT_NEAR(*g.mse_x_time_mean, 0.125 * 2.0, 1e-14);
  EXPECT_NEAR(*g.mse_x_grad_evals_mean, 0.125 * 200.0, 1e-12);
  EXPECT_NEAR(*g.mse_x_time_second_moment, (2.6875 / 6.0) * 2.0, 1e-13);
  // log Z: truth + (0.1, -0.1, 0.3).
  const auto& lz = g.estimates.at("log_z");
  EXPECT_EQ(lz.n, 3);
  EXPECT_NEAR(lz.mean, gaussian_log_z() + 0.1, 1e-13);
  EXPECT_NEAR(lz.sd, 0.2, 1e-13);
  ASSERT_TRUE(lz.truth.has_value());
  EXPECT_NEAR(*lz.rmse, std::sqrt((0.01 + 0.01 + 0.09) / 3.0), 1e-13);
  EXPECT_NEAR(*g.truth_log_z, gaussian_log_z(), 1e-15);
  // An estimate without a truth: statistics but no RMSE.
  const auto& other = g.estimates.at("other");
  EXPECT_EQ(other.n, 2);
  EXPECT_NEAR(other.mean, 6.0, 1e-14);
  EXPECT_FALSE(other.rmse.has_value());
}

TEST_F(CompareTest, ReportedStandardErrorsBesideTheSpread) {
  // Errors (0.1, -0.1, 0.3) with reported SEs (0.05, 0.1, 0.1): mean SE 0.25 / 3, rms z =
  // sqrt((4 + 1 + 9) / 3); one chain flagged its log Z untrusted.
  auto chains = run_a_chains();
  chains[0].estimates["log_z_se"] = 0.05;
  chains[1].estimates["log_z_se"] = 0.1;
  chains[2].estimates["log_z_se"] = 0.1;
  chains[2].estimates["log_z_untrusted"] = 1.0;
  chains[1].estimates["log_z_untrusted"] = 0.0;
  write_run(dir_ / "a.pemc", gaussian_config("a"), chains);
  const Comparison c = compare_files({dir_ / "a.pemc"}, CompareOptions{});
  const auto& lz = c.groups.at(0).estimates.at("log_z");
  ASSERT_TRUE(lz.se_mean && lz.rms_z && lz.n_untrusted);
  EXPECT_NEAR(*lz.se_mean, 0.25 / 3.0, 1e-13);
  EXPECT_NEAR(*lz.rms_z, std::sqrt(14.0 / 3.0), 1e-9);
  EXPECT_EQ(*lz.n_untrusted, 1);
  EXPECT_FALSE(c.groups.at(0).estimates.at("other").se_mean.has_value());
  const auto j = nlohmann::json::parse(comparison_to_json(c));
  const auto& jz = j["groups"][0]["estimates"]["log_z"];
  EXPECT_NEAR(jz["se_mean"].get<double>(), 0.25 / 3.0, 1e-13);
  EXPECT_NEAR(jz["rms_z"].get<double>(), std::sqrt(14.0 / 3.0), 1e-9);
  EXPECT_EQ(jz["n_untrusted"].get<int>(), 1);
  const std::string md = comparison_to_markdown(c, CompareOptions{});
  EXPECT_NE(md.find("± 0.2 (mean SE 0.08333) 1 of 3 untrusted"), std::string::npos) << md;
  EXPECT_NE(md.find("(rms z 2.16)"), std::string::npos) << md;
  const std::string csv = comparison_to_csv(c, CompareOptions{});
  EXPECT_NE(csv.find("estimate_log_z_se_mean,estimate_log_z_rms_z,estimate_log_z_n_untrusted"),
            std::string::npos);
}

TEST_F(CompareTest, UncheckedLogZIsCountedBesideTheUntrusted) {
  // A run whose footer said its log Z is unchecked (too few chains to compare): compare never
  // shows such chains as trusted.
  auto chains = run_a_chains();
  for (auto& c : chains) {
    c.estimates["log_z_se"] = 0.1;
    c.estimates["log_z_untrusted"] = 0.0;
    c.estimates["log_z_unchecked"] = 1.0;
  }
  chains[0].estimates["log_z_untrusted"] = 1.0;
  write_run(dir_ / "a.pemc", gaussian_config("a"), chains);
  const Comparison c = compare_files({dir_ / "a.pemc"}, CompareOptions{});
  const auto& lz = c.groups.at(0).estimates.at("log_z");
  ASSERT_TRUE(lz.n_unchecked.has_value());
  EXPECT_EQ(*lz.n_untrusted, 1);
  EXPECT_EQ(*lz.n_unchecked, 2);
  EXPECT_EQ(nlohmann::json::parse(comparison_to_json(c))["groups"][0]["estimates"]["log_z"]
                ["n_unchecked"].get<int>(),
            2);
  const std::string md = comparison_to_markdown(c, CompareOptions{});
  EXPECT_NE(md.find("1 of 3 untrusted, 2 of 3 unchecked"), std::string::npos) << md;
}

TEST_F(CompareTest, IncludeIncompleteUsesFailedChainsToo) {
  write_run(dir_ / "a.pemc", gaussian_config("a"), run_a_chains());
  CompareOptions o;
  o.include_incomplete = true;
  const Comparison c = compare_files({dir_ / "a.pemc"}, o);
  EXPECT_EQ(c.groups.at(0).n_chains, 4);
  EXPECT_TRUE(c.groups.at(0).excluded.empty());
  EXPECT_NEAR(c.groups.at(0).mean.mean[0], (1.5 + 0.5 + 1.0 + 50.0) / 4.0, 1e-13);
}

TEST_F(CompareTest, ChainsOfOneRunAreGroupedAcrossFilesAndRunsStaySeparate) {
  auto chains = run_a_chains();
  write_run(dir_ / "a1.pemc", gaussian_config("a"), {chains[0], chains[1]});
  write_run(dir_ / "a2.pemc", gaussian_config("a"), {chains[2]});
  write_run(dir_ / "b.pemc", gaussian_config("b", /*nuts=*/true),
            {{0, 1, pair_around(1.0, -1.0), "ok", 1.0, 10, {}},
             {1, 2, pair_around(1.0, -1.0), "ok", 3.0, 30, {}}});
  const Comparison c =
      compare_files({dir_ / "a1.pemc", dir_ / "a2.pemc", dir_ / "b.pemc"}, CompareOptions{});
  ASSERT_EQ(c.groups.size(), 2u);
  EXPECT_EQ(c.groups[0].key, "a");
  EXPECT_EQ(c.groups[0].n_chains, 3);
  EXPECT_EQ(c.groups[0].files.size(), 2u);
  EXPECT_NEAR(c.groups[0].mean.sd[0], 0.5, 1e-14);  // the same as from one file
  EXPECT_EQ(c.groups[1].key, "b");
  EXPECT_EQ(c.groups[1].sampler, "nuts");
  EXPECT_NEAR(*c.groups[1].rmse_all_mean, 0.0, 1e-15);  // both chains exact
  EXPECT_NEAR(c.groups[1].wall_seconds_mean, 2.0, 1e-15);

  CompareOptions by_sampler;
  by_sampler.by = "sampler";
  const Comparison s =
      compare_files({dir_ / "a1.pemc", dir_ / "a2.pemc", dir_ / "b.pemc"}, by_sampler);
  ASSERT_EQ(s.groups.size(), 2u);
  EXPECT_EQ(s.groups[0].key, "hmc");
  EXPECT_EQ(s.groups[1].key, "nuts");
  EXPECT_EQ(s.by, "sampler");

  // The same file twice: its chains count twice, with a note.
  const Comparison twice = compare_files({dir_ / "b.pemc", dir_ / "b.pemc"}, CompareOptions{});
  EXPECT_EQ(twice.groups.at(0).n_chains, 4);
  bool noted = false;
  for (const auto& n : twice.notes) noted = noted || n.find("appears more than once") != std::string::npos;
  EXPECT_TRUE(noted);

  CompareOptions bad;
  bad.by = "colour";
  EXPECT_THROW(compare_files({dir_ / "b.pemc"}, bad), ConfigError);
}

TEST_F(CompareTest, AFileWithoutFooterIsNotedAndItsChainsExcluded) {
  write_run(dir_ / "torn.pemc", gaussian_config("a"), run_a_chains(), /*with_footer=*/false);
  const Comparison c = compare_files({dir_ / "torn.pemc"}, CompareOptions{});
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.groups[0].n_chains, 0);
  EXPECT_EQ(c.groups[0].excluded.size(), 4u);
  bool noted = false;
  for (const auto& n : c.notes) noted = noted || n.find("no footer") != std::string::npos;
  EXPECT_TRUE(noted);
  // Still reported, and usable with --include-incomplete.
  CompareOptions o;
  o.include_incomplete = true;
  EXPECT_EQ(compare_files({dir_ / "torn.pemc"}, o).groups[0].n_chains, 4);
}

TEST_F(CompareTest, JsonHasTheStableKeys) {
  write_run(dir_ / "a.pemc", gaussian_config("a"), run_a_chains());
  const auto j = nlohmann::json::parse(
      comparison_to_json(compare_files({dir_ / "a.pemc"}, CompareOptions{})));
  EXPECT_EQ(j["by"], "run_id");
  const auto& g = j["groups"][0];
  for (const char* key : {"key", "sampler", "target", "dim", "n_chains", "files", "excluded", "mean",
                          "second_moment", "rmse_all", "wall_seconds_mean", "n_gradient_evals_mean",
                          "n_draws_mean", "kish_ess_mean", "mse_x_time", "mse_x_grad_evals",
                          "estimates", "truth_log_z"})
    EXPECT_TRUE(g.contains(key)) << key;
  for (const char* key : {"mean", "sd", "rmse", "truth"}) EXPECT_TRUE(g["mean"].contains(key)) << key;
  EXPECT_TRUE(g["rmse_all"].contains("mean"));
  EXPECT_TRUE(g["rmse_all"].contains("second_moment"));
  for (const char* key : {"n", "mean", "sd", "n_nonfinite", "truth", "rmse"})
    EXPECT_TRUE(g["estimates"]["log_z"].contains(key)) << key;
  EXPECT_EQ(g["excluded"][0]["chain_id"], 3);
  EXPECT_NEAR(g["mean"]["sd"][0].get<double>(), 0.5, 1e-14);
  EXPECT_TRUE(j.contains("notes"));
}

TEST_F(CompareTest, UnknownTruthLeavesOutRmseKeysAndOneChainHasNullSd) {
  // A plugin target whose truth the file does not hold (and which is never rebuilt).
  v1::RunConfig c = gaussian_config("p");
  c.mutable_target()->mutable_plugin()->set_library("/nonexistent/libmodel.so");
  write_run(dir_ / "p.pemc", c, {{0, 1, pair_around(1.0, 2.0), "ok", 1.0, 10, {}}}, true,
            /*with_truth=*/false);
  const Comparison cmp = compare_files({dir_ / "p.pemc"}, CompareOptions{});
  const auto j = nlohmann::json::parse(comparison_to_json(cmp));
  const auto& g = j["groups"][0];
  EXPECT_FALSE(g.contains("rmse_all"));
  EXPECT_FALSE(g.contains("mse_x_time"));
  EXPECT_FALSE(g["mean"].contains("rmse"));
  EXPECT_TRUE(g["mean"]["sd"][0].is_null());  // one chain: no sd
  bool noted = false;
  for (const auto& n : cmp.notes) noted = noted || n.find("truth not available") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST_F(CompareTest, MarkdownAndCsvLayouts) {
  write_run(dir_ / "a.pemc", gaussian_config("a"), run_a_chains());
  write_run(dir_ / "b.pemc", gaussian_config("b", true),
            {{0, 1, pair_around(1.0, -1.0), "ok", 1.0, 10, {}}});
  CompareOptions o;
  const Comparison c = compare_files({dir_ / "a.pemc", dir_ / "b.pemc"}, o);
  const std::string md = comparison_to_markdown(c, o);
  EXPECT_NE(md.find("| run | sampler | chains | E[x[1]] | E[x[2]] | E[x[1]²] | E[x[2]²] | log_z |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| *truth* |"), std::string::npos);
  EXPECT_NE(md.find("| a | hmc | 3 | 1 ± 0.5 |"), std::string::npos) << md;
  EXPECT_NE(md.find("RMSE against the exact truth"), std::string::npos);
  EXPECT_EQ(md.find("Showing the first"), std::string::npos) << "no cut, no note";
  CompareOptions one = o;
  one.show_coordinates = 1;
  const std::string md1 = comparison_to_markdown(c, one);
  EXPECT_NE(md1.find("Showing the first 1 of 2 quantities"), std::string::npos) << md1;
  EXPECT_EQ(md1.find("E[x[2]]"), std::string::npos) << md1;

  const std::string csv = comparison_to_csv(c, o);
  std::stringstream lines(csv);
  std::string header, row_a, row_b, extra;
  std::getline(lines, header);
  std::getline(lines, row_a);
  std::getline(lines, row_b);
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_EQ(header.rfind("key,sampler,target,dim,n_chains,n_excluded,", 0), 0u);
  EXPECT_NE(header.find("mean_rmse_x[2]"), std::string::npos);
  EXPECT_NE(header.find("estimate_log_z_rmse"), std::string::npos);
  EXPECT_EQ(row_a.rfind("a,hmc,gaussian,2,3,1,", 0), 0u) << row_a;
  // Same number of cells in every row.
  auto cells = [](const std::string& s) { return std::count(s.begin(), s.end(), ','); };
  EXPECT_EQ(cells(row_a), cells(header));
  EXPECT_EQ(cells(row_b), cells(header));
}

TEST(ConfigNumber, ReadsDottedPathsThroughSetMessages) {
  v1::RunConfig c = gaussian_config("x");
  c.set_iterations(500);
  EXPECT_EQ(config_number(c, "iterations"), 500.0);
  EXPECT_EQ(config_number(c, "sampler.hmc.step_size"), 0.1);
  EXPECT_EQ(config_number(c, "sampler.nuts.step_size"), std::nullopt);  // not the active sampler
  EXPECT_EQ(config_number(c, "warmup"), std::nullopt);                  // optional, unset
  EXPECT_THROW(config_number(c, "sampler.hmc.no_such_field"), ConfigError);
  EXPECT_THROW(config_number(c, "name"), ConfigError);                 // a string
  EXPECT_THROW(config_number(c, "target.gaussian.mean"), ConfigError); // repeated
}

}  // namespace
}  // namespace pemc::report
