// Tests of the run end's R-hat and bulk ESS check (src/report/draw_checks.hpp): files as the
// collector holds them before the footer; the numbers and the warning text are summarize's
// (diagnose_files with its default options, estimators/sampler_warnings.hpp); the bounds, a
// damaged file, a draw count that disagrees with the summaries and a run without ok chains leave
// the run unchecked, saying why.
#include "report/draw_checks.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "records/record_writer.hpp"
#include "report/diagnostics.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;
using pemc::v1::Record;

class DrawChecksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("pemc_draw_checks_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

Record header(int dim, std::int64_t iterations) {
  Record r;
  auto* h = r.mutable_header();
  h->set_dim(dim);
  h->set_original_dim(dim);
  auto* c = h->mutable_config();
  c->set_name("r");
  for (int i = 0; i < dim; ++i) c->mutable_target()->mutable_gaussian()->add_mean(0.0);
  c->mutable_sampler()->mutable_nuts()->set_step_size(0.1);
  c->set_iterations(iterations);
  return r;
}

Record draw(int chain, std::int64_t it, const std::vector<double>& x) {
  Record r;
  auto* d = r.mutable_draw();
  d->set_run_id("r");
  d->set_chain_id(chain);
  d->set_seed(100 + static_cast<std::uint64_t>(chain));
  d->set_iteration(it);
  for (double v : x) d->add_state(v);
  d->set_potential(0.5 * (x[0] * x[0] + x[1] * x[1]));
  return r;
}

// m chains of n iid draws of a 2-D state, x[1] ~ N(mu_c, 1), x[2] ~ N(0, 1), interleaved as
// the collector writes them; no footer (the run's end reads before writing it).
fs::path write_run(const fs::path& path, int m, int n, const std::vector<double>& mu) {
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  records::RecordWriter w(path, records::RecordWriter::Options{});
  w.write(header(2, n));
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < m; ++c) w.write(draw(c, i, {mu[c] + normal(gen), normal(gen)}));
  w.close();
  return path;
}

RunOkChains ok_chains(int m, std::int64_t n) {
  RunOkChains r{"r", {}};
  for (int c = 0; c < m; ++c) r.n_draws[c] = n;
  return r;
}

const estimators::QuantityHealth* find(const RunDrawCheck& c, const std::string& name) {
  for (const auto& q : c.quantities)
    if (q.name == name) return &q;
  return nullptr;
}

// The lines sampler_warnings gives for the check's quantities over m chains (of n draws).
std::vector<std::string> lines_of(const RunDrawCheck& c, int m, std::int64_t n) {
  estimators::RunHealth h;
  for (int i = 0; i < m; ++i) h.chains.push_back({i, n, 0, 0, 10, 1.0, {}});
  h.quantities = c.quantities;
  return estimators::sampler_warnings(h);
}

TEST_F(DrawChecksTest, ChainsThatDisagreeGetSummarizesNumbersAndRhatLine) {
  const auto path = write_run(dir_ / "run.pemc", 4, 300, {0.0, 0.0, 0.0, 3.0});
  const auto checks = check_draws(path, {ok_chains(4, 300)}, {});
  ASSERT_EQ(checks.size(), 1u);
  const auto& c = checks[0];
  ASSERT_TRUE(c.checked) << c.unchecked_reason;
  EXPECT_EQ(c.n_chains, 4);
  EXPECT_EQ(c.n_draws_used, 300);

  // summarize's numbers: diagnose_files with its default options over the same file.
  const auto full = diagnose_files({path}, {});
  ASSERT_EQ(full.runs.size(), 1u);
  const auto judged = judged_quantities(full.runs[0]);
  ASSERT_EQ(judged.size(), c.quantities.size());
  for (std::size_t i = 0; i < judged.size(); ++i) {
    EXPECT_EQ(c.quantities[i].name, judged[i].name);
    EXPECT_EQ(c.quantities[i].rhat, judged[i].rhat) << judged[i].name;
    EXPECT_EQ(c.quantities[i].ess_bulk, judged[i].ess_bulk) << judged[i].name;
  }
  ASSERT_NE(find(c, "x[1]"), nullptr);
  EXPECT_GT(find(c, "x[1]")->rhat, 1.2);
  EXPECT_LT(find(c, "x[2]")->rhat, 1.05);

  // The R-hat line is summarize's, word for word.
  std::string rhat_line;
  for (const auto& l : lines_of(c, 4, 300))
    if (l.rfind("R-hat: ", 0) == 0) rhat_line = l;
  ASSERT_FALSE(rhat_line.empty());
  EXPECT_NE(rhat_line.find("x[1]"), std::string::npos) << rhat_line;
  bool in_summarize = false;
  for (const auto& w : full.runs[0].warnings) in_summarize = in_summarize || w == rhat_line;
  EXPECT_TRUE(in_summarize) << rhat_line;
}

TEST_F(DrawChecksTest, ChainsThatAgreeGetNoRhatOrEssLine) {
  const auto path = write_run(dir_ / "run.pemc", 4, 1000, {0.0, 0.0, 0.0, 0.0});
  const auto c = check_draws(path, {ok_chains(4, 1000)}, {}).at(0);
  ASSERT_TRUE(c.checked) << c.unchecked_reason;
  EXPECT_TRUE(lines_of(c, 4, 1000).empty());
}

TEST_F(DrawChecksTest, OnlyTheOkChainsAreJudged) {
  // Chain 4 sits elsewhere but failed: it is not among the ok chains, so R-hat is fine.
  const auto path = write_run(dir_ / "run.pemc", 5, 300, {0.0, 0.0, 0.0, 0.0, 3.0});
  const auto c = check_draws(path, {ok_chains(4, 300)}, {}).at(0);
  ASSERT_TRUE(c.checked) << c.unchecked_reason;
  EXPECT_EQ(c.n_chains, 4);
  EXPECT_LT(find(c, "x[1]")->rhat, 1.05);
}

TEST_F(DrawChecksTest, AFileOverTheByteBoundIsNotRead) {
  const auto path = write_run(dir_ / "run.pemc", 4, 300, {0.0, 0.0, 0.0, 3.0});
  DrawCheckLimits limits;
  limits.max_file_bytes = 1000;
  const auto c = check_draws(path, {ok_chains(4, 300)}, limits).at(0);
  EXPECT_FALSE(c.checked);
  EXPECT_TRUE(c.quantities.empty());
  EXPECT_NE(c.unchecked_reason.find("bytes, more than the 1000 read back at the run's end"),
            std::string::npos)
      << c.unchecked_reason;
  EXPECT_EQ(unchecked_warning(c, path),
            "R-hat and bulk ESS unchecked: " + c.unchecked_reason + "; `pemc-report summarize " +
                path.string() + "` gives them");
}

TEST_F(DrawChecksTest, DrawsOverTheValueBoundAreNotRead) {
  const auto path = write_run(dir_ / "run.pemc", 4, 300, {0.0, 0.0, 0.0, 3.0});
  DrawCheckLimits limits;
  limits.max_values = 4 * 300 * 3 - 1;  // 4 chains x 300 draws x (2 coordinates + potential)
  auto c = check_draws(path, {ok_chains(4, 300)}, limits).at(0);
  EXPECT_FALSE(c.checked);
  EXPECT_NE(c.unchecked_reason.find("the draws to judge hold 3600 values, more than the 3599"),
            std::string::npos)
      << c.unchecked_reason;
  limits.max_values = 4 * 300 * 3;
  c = check_draws(path, {ok_chains(4, 300)}, limits).at(0);
  EXPECT_TRUE(c.checked) << c.unchecked_reason;
}

TEST_F(DrawChecksTest, ADamagedFileIsUnchecked) {
  const auto path = write_run(dir_ / "run.pemc", 4, 300, {0.0, 0.0, 0.0, 0.0});
  fs::resize_file(path, fs::file_size(path) / 2);  // a record cut in the middle, draws missing
  const auto c = check_draws(path, {ok_chains(4, 300)}, {}).at(0);
  EXPECT_FALSE(c.checked);
  EXPECT_EQ(c.unchecked_reason.rfind("reading the draws back stopped at byte ", 0), 0u)
      << c.unchecked_reason;
}

TEST_F(DrawChecksTest, DrawsTheSummariesDoNotCountAreUnchecked) {
  const auto path = write_run(dir_ / "run.pemc", 4, 300, {0.0, 0.0, 0.0, 0.0});
  auto runs = ok_chains(4, 300);
  runs.n_draws[2] = 301;
  auto c = check_draws(path, {runs}, {}).at(0);
  EXPECT_FALSE(c.checked);
  EXPECT_EQ(c.unchecked_reason, "the file holds 300 post-warmup draws of chain 2, its summary says 301");
  runs.n_draws[7] = 300;  // a chain the file does not have
  runs.n_draws[2] = 300;
  c = check_draws(path, {runs}, {}).at(0);
  EXPECT_FALSE(c.checked);
  EXPECT_EQ(c.unchecked_reason, "the file holds 0 post-warmup draws of chain 7, its summary says 300");
}

TEST_F(DrawChecksTest, ARunWithoutOkChainsAndAFileThatCannotBeReadAreUnchecked) {
  auto c = check_draws(dir_ / "run.pemc", {RunOkChains{"r", {}}}, {}).at(0);
  EXPECT_FALSE(c.checked);
  EXPECT_EQ(c.unchecked_reason, "no chain of the run finished ok");
  c = check_draws(dir_ / "missing.pemc", {ok_chains(4, 300)}, {}).at(0);
  EXPECT_FALSE(c.checked);
  EXPECT_EQ(c.unchecked_reason.rfind("reading the draws back failed: ", 0), 0u)
      << c.unchecked_reason;
}

TEST(DrawCheckEnvironment, MayOnlyLowerTheLimits) {
  ::unsetenv("PEMC_TEST_DRAW_CHECK_MAX_BYTES");
  ::unsetenv("PEMC_TEST_DRAW_CHECK_MAX_VALUES");
  auto l = draw_check_limits_from_environment();
  EXPECT_EQ(l.max_file_bytes, 512ull << 20);
  EXPECT_EQ(l.max_values, 20'000'000);
  ::setenv("PEMC_TEST_DRAW_CHECK_MAX_BYTES", "123", 1);
  ::setenv("PEMC_TEST_DRAW_CHECK_MAX_VALUES", "99999999999", 1);
  l = draw_check_limits_from_environment();
  EXPECT_EQ(l.max_file_bytes, 123u);
  EXPECT_EQ(l.max_values, 20'000'000);
  ::setenv("PEMC_TEST_DRAW_CHECK_MAX_BYTES", "12x", 1);
  ::setenv("PEMC_TEST_DRAW_CHECK_MAX_VALUES", "-5", 1);
  l = draw_check_limits_from_environment();
  EXPECT_EQ(l.max_file_bytes, 512ull << 20);
  EXPECT_EQ(l.max_values, 20'000'000);
  ::unsetenv("PEMC_TEST_DRAW_CHECK_MAX_BYTES");
  ::unsetenv("PEMC_TEST_DRAW_CHECK_MAX_VALUES");
}

}  // namespace
}  // namespace pemc::report
