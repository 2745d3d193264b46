// Tests of record-file summaries and CSV export (src/report/): exact moments of small hand-made
// files, per-draw self-normalised weights for pseudo-samples, damaged files, the JSON keys
// scripts depend on, and the CSV layout.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "records/record_reader.hpp"
#include "records/record_writer.hpp"
#include "report/export.hpp"
#include "report/summary.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;
using pemc::v1::Record;

constexpr std::uint64_t kBigSeed = (1ull << 63) + 5;  // needs the unsigned range in JSON

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("pemc_report_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

Record header(int dim) {
  Record r;
  auto* h = r.mutable_header();
  h->set_dim(dim);
  h->set_n_chains(2);
  h->set_target_name("gaussian");
  h->set_sampler_name("hmc");
  auto* c = h->mutable_config();
  c->set_name("run-a");
  for (int i = 0; i < dim; ++i) c->mutable_target()->mutable_gaussian()->add_mean(0.0);
  c->mutable_sampler()->mutable_hmc()->set_step_size(0.1);
  return r;
}

Record draw(int chain, std::int64_t iteration, std::vector<double> x, bool warmup = false,
            double accept = 0.5, bool divergent = false) {
  Record r;
  auto* d = r.mutable_draw();
  d->set_run_id("run-a");
  d->set_chain_id(chain);
  d->set_seed(chain == 0 ? kBigSeed : 17);
  d->set_iteration(iteration);
  d->set_warmup(warmup);
  for (double v : x) d->add_state(v);
  d->set_accept_stat(accept);
  d->set_divergent(divergent);
  d->set_potential(0.5 * iteration);
  return r;
}

Record footer(std::int64_t n_records) {
  Record r;
  auto* f = r.mutable_footer();
  f->set_n_records(n_records);
  f->set_status("ok");
  auto* c0 = f->add_chains();
  c0->set_chain_id(0);
  c0->set_seed(kBigSeed);
  c0->set_n_gradient_evals(123);
  c0->set_wall_seconds(1.5);
  c0->set_cpu_seconds(1.25);
  c0->set_status("ok");
  auto* c1 = f->add_chains();
  c1->set_chain_id(1);
  c1->set_seed(17);
  c1->set_n_gradient_evals(456);
  c1->set_wall_seconds(2.5);
  c1->set_status("failed: test");
  return r;
}

// Header, one warmup draw (must be ignored), chain 0: (1,2), (3,4), (5,6); chain 1: (-1, 0.5),
// (0.25, 0.75), interleaved as a collector would write them; then the footer.
std::vector<Record> two_chain_records() {
  std::vector<Record> v;
  v.push_back(header(2));
  v.push_back(draw(0, 0, {100.0, -100.0}, /*warmup=*/true));
  v.push_back(draw(0, 0, {1.0, 2.0}, false, 0.25));
  v.push_back(draw(1, 0, {-1.0, 0.5}, false, 1.0, /*divergent=*/true));
  v.push_back(draw(0, 1, {3.0, 4.0}, false, 0.5));
  v.push_back(draw(1, 1, {0.25, 0.75}, false, 0.5));
  v.push_back(draw(0, 2, {5.0, 6.0}, false, 0.75));
  v.push_back(footer(static_cast<std::int64_t>(v.size())));
  return v;
}

void write_file(const fs::path& path, const std::vector<Record>& records) {
  records::RecordWriter w(path, records::RecordWriter::Options{});
  for (const auto& r : records) w.write(r);
  w.close();
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// --- summarize_file --------------------------------------------------------------------------------

TEST_F(ReportTest, SummaryGivesExactMomentsPerChain) {
  const auto path = dir_ / "two.pemc";
  write_file(path, two_chain_records());
  const FileSummary s = summarize_file(path);
  EXPECT_EQ(s.path, path);
  EXPECT_EQ(s.n_records, 8);
  EXPECT_TRUE(s.has_footer);
  EXPECT_FALSE(s.problem.has_value());
  ASSERT_EQ(s.runs.size(), 2u);

  const auto& c0 = s.runs[0];
  EXPECT_EQ(c0.run_id, "run-a");
  EXPECT_EQ(c0.chain_id, 0);
  EXPECT_EQ(c0.seed, kBigSeed);
  EXPECT_EQ(c0.sampler, "hmc");
  EXPECT_EQ(c0.target, "gaussian");
  EXPECT_EQ(c0.n_draws, 3);
  ASSERT_EQ(c0.mean.size(), 2);
  // Small integers: every sum is exact, so the results are the correctly rounded quotients.
  EXPECT_EQ(c0.mean[0], 3.0);
  EXPECT_EQ(c0.mean[1], 4.0);
  EXPECT_EQ(c0.second_moment[0], 35.0 / 3.0);  // (1 + 9 + 25) / 3
  EXPECT_EQ(c0.second_moment[1], 56.0 / 3.0);  // (4 + 16 + 36) / 3
  EXPECT_FALSE(c0.weighted);
  EXPECT_EQ(c0.kish_ess, 3.0);
  EXPECT_EQ(c0.mean_accept_stat, 0.5);  // (0.25 + 0.5 + 0.75) / 3
  EXPECT_EQ(c0.n_divergent, 0);
  EXPECT_EQ(c0.n_gradient_evals, 123);
  EXPECT_EQ(c0.wall_seconds, 1.5);
  EXPECT_EQ(c0.status, "ok");

  const auto& c1 = s.runs[1];
  EXPECT_EQ(c1.chain_id, 1);
  EXPECT_EQ(c1.seed, 17u);
  EXPECT_EQ(c1.n_draws, 2);
  EXPECT_EQ(c1.mean[0], -0.375);                           // (-1 + 0.25) / 2
  EXPECT_EQ(c1.mean[1], 0.625);                            // (0.5 + 0.75) / 2
  EXPECT_EQ(c1.second_moment[0], (1.0 + 0.0625) / 2.0);    // dyadic: exact
  EXPECT_EQ(c1.second_moment[1], (0.25 + 0.5625) / 2.0);
  EXPECT_EQ(c1.mean_accept_stat, 0.75);
  EXPECT_EQ(c1.n_divergent, 1);
  EXPECT_EQ(c1.n_gradient_evals, 456);
  EXPECT_EQ(c1.wall_seconds, 2.5);
  EXPECT_EQ(c1.status, "failed: test");
}

TEST_F(ReportTest, PseudoSamplesGiveTheSelfNormalisedWeightedMean) {
  // dim 2, three pseudo-samples per draw (extra_states row-major 3 x 2) with one log weight each.
  // Pseudo-extended MCMC (Nemeth et al., Theorem 2.1): each draw's pseudo-samples are weighted by
  // weights normalised within that draw, so every draw carries total weight 1.
  std::vector<Record> v;
  v.push_back(header(2));
  v.back().mutable_header()->set_sampler_name("pseudo_extended");
  {
    Record r = draw(0, 0, {0.0, 0.0});
    auto* d = r.mutable_draw();
    for (double e : {0.0, 0.0, 8.0, 8.0, 16.0, -8.0}) d->add_extra_states(e);
    for (double w : {1.0, 3.0, 4.0}) d->add_log_weights(std::log(w));  // -> 1/8, 3/8, 1/2
    v.push_back(r);
  }
  {
    Record r = draw(0, 1, {0.0, 0.0});
    auto* d = r.mutable_draw();
    for (double e : {4.0, 0.0, 0.0, 4.0, 2.0, 2.0}) d->add_extra_states(e);
    // Huge log weights (exp overflows a double): -> 1/4, 1/4, 1/2.
    for (double w : {2.0, 2.0, 4.0}) d->add_log_weights(750.0 + std::log(w));
    v.push_back(r);
  }
  const auto path = dir_ / "pseudo.pemc";
  write_file(path, v);
  const FileSummary s = summarize_file(path);
  ASSERT_EQ(s.runs.size(), 1u);
  const auto& r = s.runs[0];
  EXPECT_TRUE(r.weighted);
  EXPECT_EQ(r.n_draws, 2);
  // By hand. Draw 1: E_w[x] = (0/8 + 8*3/8 + 16/2, 0 + 8*3/8 - 8/2) = (11, -1),
  //                  E_w[x^2] = (64*3/8 + 256/2, 64*3/8 + 64/2) = (152, 56).
  //          Draw 2: E_w[x] = (4/4 + 0 + 2/2, 0 + 4/4 + 2/2) = (2, 2),
  //                  E_w[x^2] = (16/4 + 4/2, 16/4 + 4/2) = (6, 6).
  // Average over the two draws (each of total weight 1).
  EXPECT_NEAR(r.mean[0], (11.0 + 2.0) / 2, 1e-12);
  EXPECT_NEAR(r.mean[1], (-1.0 + 2.0) / 2, 1e-12);
  EXPECT_NEAR(r.second_moment[0], (152.0 + 6.0) / 2, 1e-12);
  EXPECT_NEAR(r.second_moment[1], (56.0 + 6.0) / 2, 1e-12);
  // Kish ESS of the six normalised weights: 2^2 / sum w^2.
  const double sum_w2 = (1.0 + 9.0 + 16.0) / 64.0 + (1.0 + 1.0 + 4.0) / 16.0;
  EXPECT_NEAR(r.kish_ess, 4.0 / sum_w2, 1e-12);
}

// Simulated tempering and AIS stream one weighted sample per draw (extra_states + one log weight);
// their weights are global (thesis eq. 2.73; CT paper eq. 10), not normalised within the draw.
TEST_F(ReportTest, TemperingSamplersWeightTheirSamplesGlobally) {
  for (const char* sampler : {"simulated_tempering", "annealed_importance", "continuous_tempering"}) {
    SCOPED_TRACE(sampler);
    std::vector<Record> v;
    v.push_back(header(1));
    v.back().mutable_header()->set_sampler_name(sampler);
    const double xs[] = {1.0, 2.0, 4.0};
    const double ws[] = {1.0, 1.0, 2.0};
    for (int i = 0; i < 3; ++i) {
      Record r = draw(0, i, {-50.0});  // the state (e.g. x at a low temperature) is not used
      r.mutable_draw()->add_extra_states(xs[i]);
      r.mutable_draw()->add_log_weights(std::log(ws[i]) + 700.0);
      v.push_back(r);
    }
    const auto path = dir_ / (std::string(sampler) + ".pemc");
    write_file(path, v);
    const auto s = summarize_file(path);
    ASSERT_EQ(s.runs.size(), 1u);
    EXPECT_TRUE(s.runs[0].weighted);
    EXPECT_NEAR(s.runs[0].mean[0], (1.0 + 2.0 + 8.0) / 4.0, 1e-12);
    EXPECT_NEAR(s.runs[0].kish_ess, 16.0 / 6.0, 1e-12);
  }
}

// A file that does not name its sampler is read by shape: several weighted samples per draw are
// pseudo-samples (normalised within the draw), a single one carries a global weight.
TEST_F(ReportTest, UnnamedSamplerWeightsAreReadByShape) {
  std::vector<Record> v;
  v.push_back(header(1));
  v.back().mutable_header()->set_sampler_name("");
  for (int i = 0; i < 2; ++i) {
    Record r = draw(0, i, {0.0});
    r.mutable_draw()->add_extra_states(i == 0 ? 0.0 : 10.0);
    r.mutable_draw()->add_extra_states(i == 0 ? 2.0 : 10.0);
    r.mutable_draw()->add_log_weights(0.0);
    r.mutable_draw()->add_log_weights(i == 0 ? std::log(3.0) : 40.0);
    v.push_back(r);
  }
  auto path = dir_ / "unnamed_pseudo.pemc";
  write_file(path, v);
  auto s = summarize_file(path);
  ASSERT_EQ(s.runs.size(), 1u);
  // Per draw: draw 0 -> 0 * 1/4 + 2 * 3/4 = 1.5, draw 1 -> 10; each of weight 1.
  EXPECT_NEAR(s.runs[0].mean[0], (1.5 + 10.0) / 2, 1e-12);

  v.resize(1);
  for (int i = 0; i < 2; ++i) {
    Record r = draw(0, i, {0.0});
    r.mutable_draw()->add_extra_states(i == 0 ? 1.0 : 4.0);
    r.mutable_draw()->add_log_weights(i == 0 ? 0.0 : std::log(3.0));
    v.push_back(r);
  }
  path = dir_ / "unnamed_single.pemc";
  write_file(path, v);
  s = summarize_file(path);
  EXPECT_NEAR(s.runs[0].mean[0], (1.0 + 12.0) / 4, 1e-12);
}

TEST_F(ReportTest, SingleLogWeightWeightsTheStateItself) {
  std::vector<Record> v;
  v.push_back(header(1));
  const double xs[] = {1.0, 2.0, 4.0};
  const double ws[] = {1.0, 1.0, 2.0};
  for (int i = 0; i < 3; ++i) {
    Record r = draw(0, i, {xs[i]});
    r.mutable_draw()->add_log_weights(std::log(ws[i]) - 600.0);
    v.push_back(r);
  }
  const auto path = dir_ / "single.pemc";
  write_file(path, v);
  const auto s = summarize_file(path);
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_TRUE(s.runs[0].weighted);
  EXPECT_NEAR(s.runs[0].mean[0], (1.0 + 2.0 + 8.0) / 4.0, 1e-12);
  EXPECT_NEAR(s.runs[0].second_moment[0], (1.0 + 4.0 + 32.0) / 4.0, 1e-12);
  EXPECT_NEAR(s.runs[0].kish_ess, 16.0 / 6.0, 1e-12);
  EXPECT_EQ(s.runs[0].status, "incomplete: no footer");
}

TEST_F(ReportTest, TruncatedFileIsSummarisedUpToTheDamage) {
  const auto full = dir_ / "full.pemc";
  const auto records = two_chain_records();
  write_file(full, records);
  const std::string bytes = read_bytes(full);

  // Cut in the middle of record 5 (the draw (1, 1)): header, warmup, (0,0), (1,0), (0,1) survive.
  const auto cut = dir_ / "cut.pemc";
  std::size_t offset = 8;  // magic
  for (int i = 0; i < 5; ++i) offset += 8 + records[i].ByteSizeLong();
  const std::size_t cut_at = offset + 8 + records[5].ByteSizeLong() / 2;
  {
    std::ofstream out(cut, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(cut_at));
  }
  const FileSummary s = summarize_file(cut);
  EXPECT_EQ(s.n_records, 5);
  EXPECT_FALSE(s.has_footer);
  ASSERT_TRUE(s.problem.has_value());
  EXPECT_EQ(s.problem->offset, offset);
  EXPECT_EQ(s.problem->record_index, 5);
  ASSERT_EQ(s.runs.size(), 2u);
  EXPECT_EQ(s.runs[0].n_draws, 2);
  EXPECT_EQ(s.runs[0].mean[0], 2.0);  // (1 + 3) / 2
  EXPECT_EQ(s.runs[0].mean[1], 3.0);  // (2 + 4) / 2
  EXPECT_EQ(s.runs[0].second_moment[0], 5.0);
  EXPECT_EQ(s.runs[0].status, "incomplete: no footer");
  EXPECT_EQ(s.runs[0].n_gradient_evals, 0);
  EXPECT_EQ(s.runs[1].n_draws, 1);
  EXPECT_EQ(s.runs[1].mean[0], -1.0);

  // A corrupted byte inside a payload (checksum mismatch) is damage too.
  std::string corrupt = bytes;
  corrupt[offset + 8 + 2] ^= 0x5a;
  const auto bad = dir_ / "bad.pemc";
  {
    std::ofstream out(bad, std::ios::binary);
    out.write(corrupt.data(), static_cast<std::streamsize>(corrupt.size()));
  }
  const FileSummary b = summarize_file(bad);
  EXPECT_EQ(b.n_records, 5);
  ASSERT_TRUE(b.problem.has_value());
  EXPECT_EQ(b.problem->offset, offset);
  EXPECT_FALSE(b.has_footer);
}

TEST_F(ReportTest, NotARecordFileIsAnIoError) {
  const auto path = dir_ / "junk.pemc";
  std::ofstream(path) << "definitely not a record file";
  EXPECT_THROW(summarize_file(path), IoError);
  EXPECT_THROW(summarize_file(dir_ / "missing.pemc"), IoError);
}

TEST_F(ReportTest, DrawsWithAllZeroPseudoWeightsCarryNoWeight) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Record> v;
  v.push_back(header(1));
  Record a = draw(0, 0, {0.0});
  for (double e : {1.0, 3.0}) a.mutable_draw()->add_extra_states(e);
  for (double w : {0.0, 0.0}) a.mutable_draw()->add_log_weights(w);
  v.push_back(a);
  Record b = draw(0, 1, {0.0});
  for (double e : {1e6, -1e6}) b.mutable_draw()->add_extra_states(e);
  for (int i = 0; i < 2; ++i) b.mutable_draw()->add_log_weights(-inf);
  v.push_back(b);
  const auto path = dir_ / "zero.pemc";
  write_file(path, v);
  const auto s = summarize_file(path);
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_EQ(s.runs[0].n_draws, 2);
  EXPECT_EQ(s.runs[0].mean[0], 2.0);  // only the first draw counts
  EXPECT_EQ(s.runs[0].second_moment[0], 5.0);
}

TEST_F(ReportTest, UnusableDrawContentIsADataErrorNamingTheRecord) {
  {
    // A state of the wrong dimension (header says 2): the read ends there, as at damage.
    std::vector<Record> v{header(2), draw(0, 0, {1.0, 2.0}), draw(0, 1, {1.0, 2.0, 3.0})};
    write_file(dir_ / "dim.pemc", v);
    const auto s = summarize_file(dir_ / "dim.pemc");
    ASSERT_TRUE(s.problem.has_value());
    EXPECT_EQ(s.problem->record_index, 2);
    EXPECT_EQ(s.problem->message,
              "inconsistent file: a draw of run 'run-a' with a state of 3 coordinates, the header "
              "says 2");
    EXPECT_EQ(s.n_records, 2);
  }
  {
    // A NaN log weight.
    Record d = draw(0, 0, {1.0});
    d.mutable_draw()->add_log_weights(std::nan(""));
    write_file(dir_ / "nan.pemc", {header(1), d});
    try {
      summarize_file(dir_ / "nan.pemc");
      ADD_FAILURE() << "no exception";
    } catch (const DataError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("record 1"), std::string::npos) << m;
      EXPECT_NE(m.find("NaN"), std::string::npos) << m;
    }
  }
}

TEST_F(ReportTest, TableShowsCpuSecondsBesideWallSeconds) {
  const auto path = dir_ / "two.pemc";
  write_file(path, two_chain_records());
  const std::string table = summaries_to_table({summarize_file(path)});
  EXPECT_NE(table.find("wall s    cpu s"), std::string::npos) << table;
  EXPECT_NE(table.find("    1.50     1.25"), std::string::npos) << table;
}

// --- JSON ----------------------------------------------------------------------------------------

TEST_F(ReportTest, JsonHasTheStableKeys) {
  const auto path = dir_ / "two.pemc";
  write_file(path, two_chain_records());
  const auto records = two_chain_records();
  std::string bytes = read_bytes(path);
  const auto cut = dir_ / "cut.pemc";
  {
    std::ofstream out(cut, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 3));  // tears the footer
  }
  const std::string text = summaries_to_json({summarize_file(path), summarize_file(cut)});
  const nlohmann::json j = nlohmann::json::parse(text);

  ASSERT_TRUE(j.contains("runs"));
  ASSERT_TRUE(j.contains("files"));
  ASSERT_EQ(j["runs"].size(), 4u);
  for (const auto& r : j["runs"])
    for (const char* key : {"run_id", "sampler", "target", "seed", "n_draws", "mean",
                            "second_moment", "n_gradient_evals", "wall_seconds", "cpu_seconds"})
      EXPECT_TRUE(r.contains(key)) << key << " missing in " << r.dump();

  const auto& r0 = j["runs"][0];
  EXPECT_EQ(r0["run_id"], "run-a");
  EXPECT_EQ(r0["sampler"], "hmc");
  EXPECT_EQ(r0["target"], "gaussian");
  EXPECT_EQ(r0["seed"].get<std::uint64_t>(), kBigSeed);
  EXPECT_EQ(r0["chain_id"], 0);
  EXPECT_EQ(r0["n_draws"], 3);
  EXPECT_EQ(r0["mean"], (std::vector<double>{3.0, 4.0}));
  EXPECT_EQ(r0["second_moment"], (std::vector<double>{35.0 / 3.0, 56.0 / 3.0}));  // round-trip
  EXPECT_EQ(r0["n_gradient_evals"], 123);
  EXPECT_EQ(r0["wall_seconds"], 1.5);
  EXPECT_EQ(r0["cpu_seconds"], 1.25);
  EXPECT_EQ(r0["status"], "ok");
  const auto& r1 = j["runs"][1];
  EXPECT_EQ(r1["seed"].get<std::uint64_t>(), 17u);
  EXPECT_EQ(r1["n_gradient_evals"], 456);

  ASSERT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files"][0]["path"], path.string());
  EXPECT_EQ(j["files"][0]["n_records"], 8);
  EXPECT_EQ(j["files"][0]["complete"], true);
  EXPECT_FALSE(j["files"][0].contains("problem"));
  EXPECT_EQ(j["files"][1]["complete"], false);
  ASSERT_TRUE(j["files"][1].contains("problem"));
  EXPECT_EQ(j["files"][1]["problem"]["record_index"], 7);
  EXPECT_EQ(j["runs"][2]["n_gradient_evals"], 0);  // no footer in the torn file
}

TEST_F(ReportTest, JsonOfNothingIsEmptyArrays) {
  const nlohmann::json j = nlohmann::json::parse(summaries_to_json({}));
  EXPECT_TRUE(j["runs"].is_array());
  EXPECT_TRUE(j["runs"].empty());
  EXPECT_TRUE(j["files"].empty());
}

// A run with named outputs (a Stan model's) is summarised on them: constrained-scale quantities
// by their Stan names, not the unconstrained state.
TEST_F(ReportTest, SummaryOfNamedOutputs) {
  Record h = header(1);
  auto* info = h.mutable_header()->add_runs();
  info->set_name("run-a");
  info->set_dim(1);
  info->set_original_dim(1);
  for (const char* n : {"sigma", "theta[1]"}) info->add_output_names(n);
  std::vector<Record> v{h};
  for (int i = 0; i < 4; ++i) {
    Record d = draw(0, i, {std::log(1.0 + i)});
    d.mutable_draw()->add_outputs(1.0 + i);
    d.mutable_draw()->add_outputs(-2.0);
    v.push_back(d);
  }
  const auto path = dir_ / "stan.pemc";
  write_file(path, v);
  const FileSummary s = summarize_file(path, SummarizeOptions{.with_truth = false});
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_EQ(s.runs[0].names, (std::vector<std::string>{"sigma", "theta[1]"}));
  ASSERT_EQ(s.runs[0].mean.size(), 2);
  EXPECT_EQ(s.runs[0].mean[0], 2.5);  // (1 + 2 + 3 + 4) / 4
  EXPECT_EQ(s.runs[0].mean[1], -2.0);
  const auto j = nlohmann::json::parse(summaries_to_json({s}));
  EXPECT_EQ(j["runs"][0]["names"][1], "theta[1]");
}

// --- CSV export ----------------------------------------------------------------------------------

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::size_t n_columns(const std::string& line) {
  return static_cast<std::size_t>(std::count(line.begin(), line.end(), ',')) + 1;
}

TEST_F(ReportTest, ExportCsvRowsAndHeader) {
  const auto path = dir_ / "two.pemc";
  write_file(path, two_chain_records());

  std::ostringstream out;
  const auto rows = export_csv(path, out, ExportOptions{});
  EXPECT_EQ(rows, 5);  // post-warmup draws only
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 6u);  // header + rows
  EXPECT_EQ(lines[0],
            "run_id,chain_id,seed,iteration,warmup,lp__,accept_stat__,stepsize__,"
            "n_leapfrog__,divergent__,energy__,x[1],x[2]");  // static HMC: no tree depth
  for (const auto& l : lines) EXPECT_EQ(n_columns(l), 13u) << l;
  // Rows in file order; the first one is chain 0's first post-warmup draw.
  EXPECT_EQ(lines[1].rfind("run-a,0," + std::to_string(kBigSeed) + ",0,0,", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find(",1,2"), std::string::npos) << lines[1];

  std::ostringstream with_warmup;
  EXPECT_EQ(export_csv(path, with_warmup, ExportOptions{.include_warmup = true}), 6);
  const auto wl = lines_of(with_warmup.str());
  ASSERT_EQ(wl.size(), 7u);
  EXPECT_EQ(wl[1].rfind("run-a,0," + std::to_string(kBigSeed) + ",0,1,", 0), 0u) << wl[1];
}

TEST_F(ReportTest, ExportCsvWithWeightsAndDamage) {
  std::vector<Record> v;
  v.push_back(header(1));
  for (int i = 0; i < 4; ++i) {
    // Two weighted samples per draw (extra_states), one log weight each: one row per sample.
    Record r = draw(0, i, {0.5 * i});
    r.mutable_draw()->add_extra_states(0.5 * i);
    r.mutable_draw()->add_extra_states(1.0 + 0.5 * i);
    r.mutable_draw()->add_log_weights(-1.0 * i);
    r.mutable_draw()->add_log_weights(2.0 * i);
    v.push_back(r);
  }
  const auto path = dir_ / "w.pemc";
  write_file(path, v);
  std::ostringstream out;
  EXPECT_EQ(export_csv(path, out, ExportOptions{}), 8);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_NE(lines[0].find(",warmup,sample,log_weight,lp__,"), std::string::npos) << lines[0];
  EXPECT_TRUE(lines[0].ends_with(",x[1]")) << lines[0];
  for (const auto& l : lines) EXPECT_EQ(n_columns(l), 14u) << l;
  // Draw 3's second sample: x = 2.5 with its recorded log weight 6 (hmc's weights are global).
  EXPECT_TRUE(lines[8].starts_with("run-a,0," + std::to_string(kBigSeed) + ",3,0,2,6,")) << lines[8];
  EXPECT_TRUE(lines[8].ends_with(",2.5")) << lines[8];

  // Torn tail: the rows before the damage, no exception.
  const std::string bytes = read_bytes(path);
  const auto cut = dir_ / "wcut.pemc";
  {
    std::ofstream o(cut, std::ios::binary);
    o.write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 4));
  }
  std::ostringstream out2;
  EXPECT_EQ(export_csv(cut, out2, ExportOptions{}), 6);
  EXPECT_EQ(lines_of(out2.str()).size(), 7u);
}

TEST_F(ReportTest, ExportCsvQuotesRunIdsWithCommas) {
  Record d = draw(0, 0, {1.0});
  d.mutable_draw()->set_run_id("a,b \"c\"");
  write_file(dir_ / "q.pemc", {header(1), d});
  std::ostringstream out;
  EXPECT_EQ(export_csv(dir_ / "q.pemc", out, ExportOptions{}), 1);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].rfind("\"a,b \"\"c\"\"\",0,", 0), 0u) << lines[1];
}

}  // namespace
}  // namespace pemc::report
