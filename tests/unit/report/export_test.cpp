// Tests of pemc-report export (src/report/export*.hpp) on hand-made record files: CmdStan CSV
// (comments, columns, lp__, names), weighted runs refused or resampled, studies whose runs have
// different columns, output directories, unknown formats, damaged files and named outputs.
#include "report/export.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "records/record_writer.hpp"
#include "report/quantities.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;
using pemc::v1::Record;

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("pemc_export_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// A study header: run "nuts" (2-D Gaussian, plain NUTS) and run "pe" (the same target,
// pseudo-extended NUTS with 3 pseudo-samples), optionally a Stan-like run with named outputs.
Record study_header() {
  Record r;
  auto* h = r.mutable_header();
  auto* c = h->mutable_config();
  c->set_name("study");
  auto add_run = [&](const std::string& name, bool pe) {
    auto* run = c->add_runs();
    run->set_name(name);
    for (int i = 0; i < 2; ++i) run->mutable_target()->mutable_gaussian()->add_mean(0.0);
    run->set_iterations(3);
    run->set_warmup(2);
    auto* nuts = pe ? run->mutable_sampler()->mutable_pseudo_extended()->mutable_nuts()
                    : run->mutable_sampler()->mutable_nuts();
    nuts->set_step_size(0.25);
    nuts->set_metric(v1::DIAGONAL);
    nuts->mutable_adaptation()->set_enabled(true);
    auto* info = h->add_runs();
    info->set_name(name);
    info->set_dim(pe ? 6 : 2);
    info->set_original_dim(2);
    info->set_sampler_name(pe ? "pseudo_extended" : "nuts");
  };
  add_run("nuts", false);
  add_run("pe", true);
  h->set_dim(2);
  h->set_original_dim(2);
  return r;
}

// A config of the 2-D Gaussian with the given runs (a plain config named after the one run, or a
// study of several): --resample evaluates lp__ with the target built from it (--config).
fs::path gaussian_config(const fs::path& dir, const std::vector<std::string>& runs) {
  const auto p = dir / "gaussian.pbtxt";
  std::ofstream out(p);
  if (runs.size() == 1) out << "name: \"" << runs[0] << "\"\n";
  out << "target { gaussian { mean: [0, 0] } }\nsampler { nuts { step_size: 0.25 } }\n"
         "iterations: 3\nseeds { values: [1] }\noutput { path: \"o.pemc\" }\n";
  if (runs.size() > 1)
    for (const auto& r : runs) out << "runs { name: \"" << r << "\" }\n";
  return p;
}

Record plain_draw(int chain, std::int64_t it, double a, double b, bool warmup = false) {
  Record r;
  auto* d = r.mutable_draw();
  d->set_run_id("nuts");
  d->set_chain_id(chain);
  d->set_seed(40 + chain);
  d->set_iteration(it);
  d->set_warmup(warmup);
  d->add_state(a);
  d->add_state(b);
  d->set_potential(0.5 * (a * a + b * b));
  d->set_accept_stat(0.75);
  d->set_step_size(0.5);
  d->set_tree_depth(2);
  d->set_n_leapfrog(3);
  d->set_energy(1.25);
  return r;
}

// Three pseudo-samples (k, -k), (10 + k, 0), (20 + k, 1) with log weights log 1, log 3, -inf:
// normalised within the draw 1/4, 3/4, 0.
Record pe_draw(int chain, std::int64_t it) {
  Record r;
  auto* d = r.mutable_draw();
  d->set_run_id("pe");
  d->set_chain_id(chain);
  d->set_seed(50 + chain);
  d->set_iteration(it);
  const double k = static_cast<double>(it);
  for (double v : {k, -k, 10 + k, 0.0, 20 + k, 1.0}) {
    d->add_state(v);
    d->add_extra_states(v);
  }
  for (double w : {0.0, std::log(3.0), -HUGE_VAL}) d->add_log_weights(w + 7.0);
  d->set_potential(100.0);
  return r;
}

Record footer() {
  Record r;
  r.mutable_footer()->set_status("ok");
  for (int c : {0, 1}) {
    auto* s = r.mutable_footer()->add_chains();
    s->set_chain_id(c);
    s->set_status("ok");
    s->set_final_step_size(0.5);
    s->set_run_id("nuts");
    s->set_wall_seconds(1.5);
  }
  return r;
}

void write_file(const fs::path& path, const std::vector<Record>& records) {
  records::RecordWriter w(path, records::RecordWriter::Options{});
  for (Record r : records) {
    // As pemc-dist writes it: the footer counts the records before it.
    if (r.has_footer() && r.footer().n_records() == 0)
      r.mutable_footer()->set_n_records(w.records_written());
    w.write(r);
  }
  w.close();
}

std::vector<Record> study_records(bool with_pe = true) {
  std::vector<Record> v{study_header()};
  v.push_back(plain_draw(0, 0, 9, 9, true));
  for (int it = 0; it < 3; ++it) {
    v.push_back(plain_draw(0, it, it, 2.0 * it));
    v.push_back(plain_draw(1, it, -it, 0.5));
    if (with_pe) v.push_back(pe_draw(2, it));
  }
  v.push_back(footer());
  return v;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The end of a row whose last two cells are a and b.
std::string ending(double a, double b) { return fmt::format(",{:.17g},{:.17g}", a, b); }

std::vector<std::string> data_lines(const std::string& s) {
  std::vector<std::string> out;
  for (const auto& l : lines_of(s))
    if (!l.empty() && l[0] != '#') out.push_back(l);
  return out;
}

TEST(QuantityNames, StanAndCmdStanForms) {
  EXPECT_EQ(coordinate_name(0), "x[1]");
  EXPECT_EQ(cmdstan_name("theta[1]"), "theta.1");
  EXPECT_EQ(cmdstan_name("Sigma[2,1]"), "Sigma.2.1");
  EXPECT_EQ(cmdstan_name("mu"), "mu");
  EXPECT_EQ(quantity_names({}, 2), (std::vector<std::string>{"x[1]", "x[2]"}));
  EXPECT_EQ(quantity_names({"mu", "tau"}, 5), (std::vector<std::string>{"mu", "tau"}));
}

TEST_F(ExportTest, CmdStanCsvPerChainWithCommentsColumnsAndLp) {
  write_file(dir_ / "s.pemc", study_records(false));
  ExportOptions o;
  o.format = "cmdstan";
  o.output_dir = dir_ / "out";
  std::ostringstream unused;
  const auto r = export_draws(dir_ / "s.pemc", unused, o);
  EXPECT_TRUE(unused.str().empty());
  EXPECT_EQ(r.rows, 6);
  EXPECT_EQ(r.incomplete_reason(), "");
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.files[0], dir_ / "out" / "nuts_0.csv");
  const std::string text = read_text(r.files[0]);
  for (const char* key : {"# model = gaussian", "#     num_samples = 3", "#     num_warmup = 2",
                          "#     save_warmup = 0", "#     thin = 1", "#         engine = nuts",
                          "#         metric = diag_e", "# id = 1", "#   seed = 40",
                          "# Adaptation terminated", "# Step size = 0.5", "Elapsed Time: 1.5"})
    EXPECT_NE(text.find(key), std::string::npos) << key << "\n" << text;
  const auto rows = data_lines(text);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0],
            "lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,x.1,x.2");
  // Draw 2 of chain 0: x = (2, 4), lp__ = -potential = -10.
  EXPECT_EQ(rows[3], "-10,0.75,0.5,2,3,0,1.25,2,4");
}

TEST_F(ExportTest, WeightedRunsAreRefusedForCmdStanUnlessResampled) {
  write_file(dir_ / "s.pemc", study_records());
  ExportOptions o;
  o.format = "cmdstan";
  o.output_dir = dir_ / "out";
  std::ostringstream unused;
  try {
    export_draws(dir_ / "s.pemc", unused, o);
    FAIL() << "weighted run written to CmdStan CSV";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--resample"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "out" / "pe_2.csv"));

  o.resample = true;
  o.seed = 7;
  try {  // lp__ at the resampled samples needs the target: only from --config
    export_draws(dir_ / "s.pemc", unused, o);
    FAIL() << "resampled without the target";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("export --format cmdstan: lp__ of the samples (the "
                                         "pseudo_extended draws record an extended density) "
                                         "needs the target of run 'pe': pass --config CONFIG"),
              std::string::npos)
        << e.what();
  }
  o.target_config = gaussian_config(dir_, {"nuts", "pe"});
  const auto r = export_draws(dir_ / "s.pemc", unused, o);
  ASSERT_EQ(r.files.size(), 3u);
  const auto rows = data_lines(read_text(dir_ / "out" / "pe_2.csv"));
  ASSERT_EQ(rows.size(), 4u);  // header + one sample per draw
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const double k = static_cast<double>(i - 1);
    // Never the zero-weight third pseudo-sample; lp__ is the Gaussian's at the sample.
    EXPECT_TRUE(rows[i].ends_with(ending(k, -k)) || rows[i].ends_with(ending(10 + k, 0.0)))
        << rows[i];
    EXPECT_FALSE(rows[i].starts_with("-100,"))
        << "lp__ must be the target's, not the extended draw's";
  }
  // The same seed gives the same file; the resampling is not the identity over seeds.
  const std::string once = read_text(dir_ / "out" / "pe_2.csv");
  o.overwrite = true;
  export_draws(dir_ / "s.pemc", unused, o);
  EXPECT_EQ(read_text(dir_ / "out" / "pe_2.csv"), once);
}

TEST_F(ExportTest, StudyCsvIsNeverRagged) {
  write_file(dir_ / "s.pemc", study_records());
  std::ostringstream out;
  try {
    export_csv(dir_ / "s.pemc", out, ExportOptions{});
    FAIL() << "runs of different columns written as one table";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--output-dir"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(out.str().empty()) << "nothing is written before the refusal";

  ExportOptions o;
  o.output_dir = dir_ / "csv";
  const auto r = export_draws(dir_ / "s.pemc", out, o);
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.rows, 6 + 9);  // 6 plain draws, 3 PE draws of 3 samples
  for (const auto& f : r.files) {
    const auto lines = lines_of(read_text(f));
    const auto n = std::count(lines[0].begin(), lines[0].end(), ',');
    for (const auto& l : lines) EXPECT_EQ(std::count(l.begin(), l.end(), ','), n) << f << ": " << l;
  }
  const auto pe = lines_of(read_text(dir_ / "csv" / "pe.csv"));
  // Without --config no lp__ (the model's density needs the target), and a note says so; the
  // draw's own density is extended_lp__, its Hamiltonian extended_energy__.
  EXPECT_EQ(pe[0],
            "run_id,chain_id,seed,iteration,warmup,sample,log_weight,extended_lp__,"
            "accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,extended_energy__,"
            "x[1],x[2]");
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("run 'pe' (pseudo_extended) is exported without lp__"),
            std::string::npos)
      << r.notes[0];
  ASSERT_EQ(pe.size(), 10u);
  // Pseudo-extended weights normalised within the draw: log 1/4, log 3/4, -inf.
  EXPECT_TRUE(pe[1].starts_with("pe,2,52,0,0,1,-1.38629436111989")) << pe[1];
  EXPECT_NE(pe[1].find("08,-100,"), std::string::npos) << pe[1];  // extended_lp__ after it
  EXPECT_TRUE(pe[3].starts_with("pe,2,52,0,0,3,-inf,")) << pe[3];
  EXPECT_TRUE(pe[2].ends_with(ending(10.0, 0.0))) << pe[2];

  // One run to the stream is one table.
  std::ostringstream one;
  o = ExportOptions{};
  o.run_filter = "pe";
  EXPECT_EQ(export_draws(dir_ / "s.pemc", one, o).rows, 9);
  EXPECT_EQ(lines_of(one.str()).size(), 10u);
}

// With --config, lp__ of a pseudo-extended run is the target's at each pseudo-sample (N(0, I):
// -|x|^2 / 2), next to the draw's extended density; every format gets it.
TEST_F(ExportTest, ExtendedSamplersLpIsTheTargetsAtEachSample) {
  write_file(dir_ / "s.pemc", study_records());
  ExportOptions o;
  o.output_dir = dir_ / "csv";
  o.run_filter = "pe";
  o.target_config = gaussian_config(dir_, {"nuts", "pe"});
  std::ostringstream unused;
  const auto r = export_draws(dir_ / "s.pemc", unused, o);
  EXPECT_TRUE(r.notes.empty());
  const auto pe = lines_of(read_text(dir_ / "csv" / "pe.csv"));
  ASSERT_EQ(pe.size(), 10u);
  EXPECT_EQ(pe[0],
            "run_id,chain_id,seed,iteration,warmup,sample,log_weight,lp__,extended_lp__,"
            "accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,extended_energy__,"
            "x[1],x[2]");
  for (int it = 0; it < 3; ++it) {
    const double k = it;
    const double want[] = {-k * k, -0.5 * (10 + k) * (10 + k), -0.5 * ((20 + k) * (20 + k) + 1)};
    for (int j = 0; j < 3; ++j) {
      const std::string& row = pe[static_cast<std::size_t>(1 + 3 * it + j)];
      std::vector<std::string> cells;
      std::stringstream in(row);
      for (std::string c; std::getline(in, c, ',');) cells.push_back(c);
      ASSERT_EQ(cells.size(), 17u) << row;
      EXPECT_EQ(std::stod(cells[7]), want[j]) << row;  // exact: the sums are of small integers
      EXPECT_EQ(cells[8], "-100") << row;
    }
  }
}

// Parallel tempering records no tree depth or energy: no column for them in any format (they
// would be zeros: rstan's E-BFMI of a constant is NaN).
TEST_F(ExportTest, ParallelTemperingHasNoTreeDepthOrEnergyColumns) {
  Record h = study_header();
  auto* run = h.mutable_header()->mutable_config()->mutable_runs(0);
  run->mutable_sampler()->mutable_parallel_tempering()->mutable_nuts()->set_step_size(0.25);
  h.mutable_header()->mutable_runs(0)->set_sampler_name("parallel_tempering");
  std::vector<Record> v{h};
  for (int it = 0; it < 3; ++it) {
    Record d = plain_draw(0, it, it, 1.0);
    d.mutable_draw()->set_tree_depth(0);
    d.mutable_draw()->set_energy(0.0);
    v.push_back(d);
  }
  write_file(dir_ / "pt.pemc", v);
  ExportOptions o;
  o.format = "cmdstan";
  o.output_dir = dir_ / "cmdstan";
  std::ostringstream out;
  const auto r = export_draws(dir_ / "pt.pemc", out, o);
  ASSERT_EQ(r.files.size(), 1u);
  const auto rows = data_lines(read_text(r.files[0]));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], "lp__,accept_stat__,stepsize__,n_leapfrog__,divergent__,x.1,x.2");
  EXPECT_EQ(rows[3], "-2.5,0.75,0.5,3,0,2,1");  // lp__ = -potential: the cold level's target
  export_csv(dir_ / "pt.pemc", out, ExportOptions{.run_filter = "nuts"});  // without the PE run
  EXPECT_EQ(lines_of(out.str())[0],
            "run_id,chain_id,seed,iteration,warmup,lp__,accept_stat__,stepsize__,n_leapfrog__,"
            "divergent__,x[1],x[2]");
}

// One csv table of a NUTS and a parallel tempering run: the columns of both, and the PT rows'
// cells of NUTS-only columns empty (not 0).
TEST_F(ExportTest, OneTableOfSeveralSamplersLeavesCellsEmptyNotZero) {
  Record h = study_header();
  auto* c = h.mutable_header()->mutable_config();
  *c->mutable_runs(1)->mutable_sampler() = v1::SamplerConfig{};
  c->mutable_runs(1)->mutable_sampler()->mutable_parallel_tempering()->mutable_nuts();
  c->mutable_runs(1)->set_name("pt");
  auto* info = h.mutable_header()->mutable_runs(1);
  info->set_name("pt");
  info->set_dim(2);
  info->set_sampler_name("parallel_tempering");
  Record pt = plain_draw(1, 0, 1.0, 2.0);
  pt.mutable_draw()->set_run_id("pt");
  write_file(dir_ / "two.pemc", {h, plain_draw(0, 0, 1.0, 2.0), pt});
  std::ostringstream out;
  EXPECT_EQ(export_csv(dir_ / "two.pemc", out, ExportOptions{}), 2);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "run_id,chain_id,seed,iteration,warmup,lp__,accept_stat__,stepsize__,treedepth__,"
            "n_leapfrog__,divergent__,energy__,x[1],x[2]");
  EXPECT_EQ(lines[1], "nuts,0,40,0,0,-2.5,0.75,0.5,2,3,0,1.25,1,2");
  EXPECT_EQ(lines[2], "pt,1,41,0,0,-2.5,0.75,0.5,,3,0,,1,2");
}

TEST_F(ExportTest, OutputDirectoriesFormatsAndDamage) {
  write_file(dir_ / "s.pemc", study_records(false));
  std::ostringstream out;
  ExportOptions o;
  o.format = "parquet";
  try {
    export_draws(dir_ / "s.pemc", out, o);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("csv, cmdstan, netcdf"), std::string::npos) << e.what();
  }
  o.format = "cmdstan";
  EXPECT_THROW(export_draws(dir_ / "s.pemc", out, o), ConfigError);  // no --output-dir
  fs::create_directories(dir_ / "full");
  std::ofstream(dir_ / "full" / "keep.txt") << "mine";
  o.output_dir = dir_ / "full";
  EXPECT_THROW(export_draws(dir_ / "s.pemc", out, o), ConfigError);
  EXPECT_EQ(read_text(dir_ / "full" / "keep.txt"), "mine");
  o.overwrite = true;
  EXPECT_EQ(export_draws(dir_ / "s.pemc", out, o).rows, 6);

  // A torn tail: the draws before it, and the result says the export is incomplete.
  const std::string bytes = read_text(dir_ / "s.pemc");
  {
    std::ofstream cut(dir_ / "cut.pemc", std::ios::binary);
    cut.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  o.output_dir = dir_ / "cut";
  const auto r = export_draws(dir_ / "cut.pemc", out, o);
  EXPECT_TRUE(r.problem.has_value());
  EXPECT_NE(r.incomplete_reason().find("damaged at byte"), std::string::npos);
  EXPECT_LT(r.rows, 6);
  EXPECT_GT(r.rows, 0);
  // Without a footer: complete frames, but the run did not finish.
  std::vector<Record> v = study_records(false);
  v.pop_back();
  write_file(dir_ / "nofooter.pemc", v);
  const auto nf = export_draws(dir_ / "nofooter.pemc", out, ExportOptions{});
  EXPECT_NE(nf.incomplete_reason().find("no footer"), std::string::npos);
}

TEST_F(ExportTest, NamedOutputsAreTheQuantities) {
  // A Stan-like run: unconstrained state (2 numbers), three named outputs per draw.
  Record h = study_header();
  auto* info = h.mutable_header()->mutable_runs(0);
  for (const char* n : {"mu", "theta[1]", "Sigma[2,1]"}) info->add_output_names(n);
  std::vector<Record> v{h};
  for (int it = 0; it < 2; ++it) {
    Record d = plain_draw(0, it, 0.5, 0.25);
    for (double x : {1.0 + it, 2.0, 3.0}) d.mutable_draw()->add_outputs(x);
    v.push_back(d);
  }
  write_file(dir_ / "stan.pemc", v);
  std::ostringstream out;
  export_csv(dir_ / "stan.pemc", out, ExportOptions{.run_filter = "nuts"});
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 3u);
  // RFC 4180: a name holding a comma is quoted.
  EXPECT_TRUE(lines[0].ends_with(",energy__,mu,theta[1],\"Sigma[2,1]\"")) << lines[0];
  EXPECT_TRUE(lines[2].ends_with(",2,2,3")) << lines[2];

  ExportOptions o;
  o.format = "cmdstan";
  o.output_dir = dir_ / "cmdstan";
  const auto r = export_draws(dir_ / "stan.pemc", out, o);
  ASSERT_EQ(r.files.size(), 1u);
  const auto rows = data_lines(read_text(r.files[0]));
  EXPECT_TRUE(rows[0].ends_with(",x.1,x.2") == false);
  EXPECT_TRUE(rows[0].ends_with(",energy__,mu,theta.1,Sigma.2.1")) << rows[0];

  // Outputs of the wrong size are refused before anything is written.
  v[1].mutable_draw()->add_outputs(4.0);
  write_file(dir_ / "bad.pemc", v);
  std::ostringstream bad;
  EXPECT_THROW(export_csv(dir_ / "bad.pemc", bad, ExportOptions{}), DataError);
  EXPECT_TRUE(bad.str().empty());
}

// A Stan run sampled with the full density (propto: false): where the header records its lp offset
// (RunInfo.lp_offset, the constants Stan drops) every export writes Stan's lp__ = -potential -
// offset; a file without it (older, or an offset pemc-dist could not trust) keeps -potential and a
// note says that lp__ then differs from Stan's.
TEST_F(ExportTest, StanLpIsThePotentialMinusTheRecordedOffset) {
  const auto write_stan = [&](const fs::path& path, std::optional<double> offset) {
    Record h = study_header();
    auto* run = h.mutable_header()->mutable_config()->mutable_runs(0);
    run->mutable_target()->mutable_stan()->set_model_file("m.stan");
    auto* info = h.mutable_header()->mutable_runs(0);
    info->add_output_names("mu");
    if (offset) info->set_lp_offset(*offset);
    std::vector<Record> v{h};
    Record d = plain_draw(0, 0, 2.0, 4.0);  // potential 10
    d.mutable_draw()->add_outputs(2.0);
    v.push_back(d);
    write_file(path, v);
  };
  write_stan(dir_ / "offset.pemc", -8.5);
  write_stan(dir_ / "old.pemc", std::nullopt);
  for (const auto& [file, lp, noted] :
       {std::tuple{"offset.pemc", "-1.5", false}, std::tuple{"old.pemc", "-10", true}}) {
    std::ostringstream out;
    ExportOptions csv;
    csv.run_filter = "nuts";
    const auto r = export_draws(dir_ / file, out, csv);
    const auto lines = lines_of(out.str());
    ASSERT_EQ(lines.size(), 2u) << file;
    EXPECT_NE(lines[1].find(std::string(",") + lp + ",0.75,"), std::string::npos)
        << file << ": " << lines[1];
    const bool has_note =
        !r.notes.empty() && r.notes[0].find("run 'nuts': lp__ is -potential, the Stan model's log "
                                            "density with every constant") != std::string::npos;
    EXPECT_EQ(has_note, noted) << file;

    ExportOptions cmdstan;
    cmdstan.format = "cmdstan";
    cmdstan.run_filter = "nuts";
    cmdstan.output_dir = dir_ / (std::string("cmdstan_") + file);
    const auto c = export_draws(dir_ / file, out, cmdstan);
    ASSERT_EQ(c.files.size(), 1u);
    const auto rows = data_lines(read_text(c.files[0]));
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_TRUE(rows[1].starts_with(std::string(lp) + ",0.75,")) << file << ": " << rows[1];
  }
}

// Global weights (continuous tempering: one weighted sample per draw): --resample draws as many
// samples as the chain has draws, each with probability proportional to its weight. Draws
// alternate between x = (0, 0) with weight 1 and x = (1, 1) with weight 3: the resampled
// fraction of (1, 1) is 3/4 (sd sqrt(3/16 / 4000) = 0.007; 5 sd allowed).
TEST_F(ExportTest, GlobalWeightsAreResampledAcrossTheChain) {
  Record h;
  auto* c = h.mutable_header()->mutable_config();
  c->set_name("ct");
  for (int i = 0; i < 2; ++i) c->mutable_target()->mutable_gaussian()->add_mean(0.0);
  c->mutable_sampler()->mutable_continuous_tempering()->mutable_nuts()->set_step_size(0.1);
  c->set_iterations(4000);
  auto* info = h.mutable_header()->add_runs();
  info->set_name("ct");
  info->set_dim(3);
  info->set_original_dim(2);
  info->set_sampler_name("continuous_tempering");
  std::vector<Record> v{h};
  for (int it = 0; it < 4000; ++it) {
    Record r;
    auto* d = r.mutable_draw();
    d->set_run_id("ct");
    d->set_iteration(it);
    const double x = it % 2;
    for (double e : {x, x, 0.5}) d->add_state(e);
    d->add_extra_states(x);
    d->add_extra_states(x);
    d->add_log_weights(std::log(1.0 + 2.0 * x) - 20.0);
    d->set_potential(50.0);
    v.push_back(r);
  }
  write_file(dir_ / "ct.pemc", v);
  ExportOptions o;
  o.format = "cmdstan";
  o.resample = true;
  o.seed = 11;
  o.output_dir = dir_ / "out";
  o.target_config = gaussian_config(dir_, {"ct"});
  std::ostringstream unused;
  const auto r = export_draws(dir_ / "ct.pemc", unused, o);
  EXPECT_EQ(r.rows, 4000);
  const auto rows = data_lines(read_text(dir_ / "out" / "ct_0.csv"));
  ASSERT_EQ(rows.size(), 4001u);
  // Continuous tempering: no energy (its inner kernel's is no Hamiltonian of the draws), and
  // extended_lp__ is pemc's own, which CmdStan CSV does not hold.
  EXPECT_EQ(rows[0], "lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,x.1,x.2");
  int ones = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ASSERT_TRUE(rows[i].ends_with(",0,0") || rows[i].ends_with(",1,1")) << rows[i];
    if (rows[i].ends_with(",1,1")) {
      ++ones;
      EXPECT_TRUE(rows[i].starts_with("-1,"))
          << "lp__ = -potential of N(0, I) at (1, 1) up to a constant: " << rows[i];
    }
  }
  EXPECT_NEAR(ones / 4000.0, 0.75, 5 * 0.007);
  // CSV keeps every draw with its weight instead (without --config: extended_lp__, no lp__).
  o = ExportOptions{};
  std::ostringstream csv;
  EXPECT_EQ(export_draws(dir_ / "ct.pemc", csv, o).rows, 4000);
  EXPECT_NE(lines_of(csv.str())[2].find(fmt::format(",1,{},-50,", std::log(3.0) - 20.0)),
            std::string::npos)
      << lines_of(csv.str())[2];
}

// --resample with csv: a weighted run's rows are plain draws (one per draw, no sample and
// log_weight columns), the same samples as the CmdStan export's for the same seed; a study of a
// resampled weighted run and a plain run is then one table on stdout.
TEST_F(ExportTest, CsvResampleWritesPlainDraws) {
  write_file(dir_ / "s.pemc", study_records());
  ExportOptions o;
  o.resample = true;
  o.seed = 7;
  std::ostringstream out;
  const auto r = export_draws(dir_ / "s.pemc", out, o);
  EXPECT_EQ(r.rows, 6 + 3);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_EQ(lines[0].find("sample,log_weight"), std::string::npos) << lines[0];
  std::vector<std::string> pe_rows;
  for (const auto& l : lines)
    if (l.starts_with("pe,")) pe_rows.push_back(l);
  ASSERT_EQ(pe_rows.size(), 3u);
  o.format = "cmdstan";
  o.output_dir = dir_ / "cmdstan";
  o.target_config = gaussian_config(dir_, {"nuts", "pe"});
  export_draws(dir_ / "s.pemc", out, o);
  const auto cmdstan = data_lines(read_text(dir_ / "cmdstan" / "pe_2.csv"));
  ASSERT_EQ(cmdstan.size(), 4u);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto cells = cmdstan[i + 1].substr(cmdstan[i + 1].find_last_of(',', cmdstan[i + 1].rfind(',') - 1));
    EXPECT_TRUE(pe_rows[i].ends_with(cells)) << pe_rows[i] << " vs " << cmdstan[i + 1];
  }
  // Without --resample csv keeps the weighted samples.
  std::ostringstream weighted;
  o = ExportOptions{};
  o.run_filter = "pe";
  EXPECT_EQ(export_draws(dir_ / "s.pemc", weighted, o).rows, 9);
}

// --include-warmup asks for warmup draws: a file without any is refused with what to set; a
// resampled weighted run cannot have them (its warmup is not resampled).
TEST_F(ExportTest, IncludeWarmupNeedsWarmupDrawsAndUnresampledWeights) {
  auto records = study_records();
  records.erase(records.begin() + 1);  // the one warmup draw
  write_file(dir_ / "nowarm.pemc", records);
  ExportOptions o;
  o.include_warmup = true;
  std::ostringstream out;
  try {
    export_draws(dir_ / "nowarm.pemc", out, o);
    FAIL() << "--include-warmup without warmup draws";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("nowarm.pemc holds no warmup draws"), std::string::npos) << m;
    EXPECT_NE(m.find("write_warmup: true"), std::string::npos) << m;
  }
  EXPECT_TRUE(out.str().empty());

  write_file(dir_ / "s.pemc", study_records());
  o.format = "netcdf";
  o.output_dir = dir_ / "nc";
  try {  // netcdf resamples by default
    export_draws(dir_ / "s.pemc", out, o);
    FAIL() << "warmup of a resampled weighted run";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--no-resample"), std::string::npos) << e.what();
  }
  o.resample = false;
  EXPECT_EQ(export_draws(dir_ / "s.pemc", out, o).files.size(), 2u);
}

// --log-lik: only netcdf has a log_likelihood group, and a name no run has is an error.
TEST_F(ExportTest, LogLikNamesAreChecked) {
  write_file(dir_ / "s.pemc", study_records());
  ExportOptions o;
  o.log_lik = {"log_lik"};
  std::ostringstream out;
  EXPECT_THROW(export_draws(dir_ / "s.pemc", out, o), ConfigError);
  o.format = "netcdf";
  o.output_dir = dir_ / "nc";
  o.log_lik = {"ll"};
  try {
    export_draws(dir_ / "s.pemc", out, o);
    FAIL() << "--log-lik of no quantity";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("export --log-lik 'll': no exported run has quantities "
                                         "of that base name (run 'nuts': x; run 'pe': x)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "nc")) << "refused before anything is written";
  o.log_lik = {"x"};
  const auto r = export_draws(dir_ / "s.pemc", out, o);
  EXPECT_EQ(r.rows, 6 + 3);  // the weighted run resampled: one sample per draw
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_NE(r.notes[1].find("weighted run 'pe' (pseudo_extended, 3 draws over 1 chains) was "
                            "resampled"),
            std::string::npos)
      << r.notes[1];
}

}  // namespace
}  // namespace pemc::report
