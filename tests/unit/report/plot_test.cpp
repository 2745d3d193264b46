// Tests of the gnuplot figures (src/report/plot.hpp): every kind produces a non-trivial PNG (magic
// bytes, size) or SVG (an <svg> document with paths); the weighted resampling picks pseudo-samples
// and weighted draws with the right frequencies (binomial tolerances); bad options and a missing
// gnuplot give clear errors. Tests that need gnuplot are skipped when it is not installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "records/record_writer.hpp"
#include "report/plot.hpp"
#include "report/quantities.hpp"
#include "run_info_support.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;
using pemc::v1::Record;

bool have_gnuplot() {
  static const bool found = std::system("gnuplot --version > /dev/null 2>&1") == 0;
  return found;
}

class PlotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("pemc_plot_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void expect_png(const fs::path& p, std::uintmax_t min_bytes) {
  ASSERT_TRUE(fs::exists(p)) << p;
  const std::string bytes = read_bytes(p);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << p;
  EXPECT_GT(bytes.size(), min_bytes) << p;
}

void expect_svg(const fs::path& p) {
  ASSERT_TRUE(fs::exists(p)) << p;
  const std::string text = read_bytes(p);
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("</svg>"), std::string::npos);
  std::size_t paths = 0;
  for (std::size_t pos = text.find("<path"); pos != std::string::npos; pos = text.find("<path", pos + 1))
    ++paths;
  EXPECT_GT(paths, 10u) << p;
}

// A plain run of `n` 2-D draws per chain from N((mu, -mu), I) with a Gaussian target config; the
// config's iterations field is set to `iterations` (for rmse-vs-n).
void write_gaussian_run(const fs::path& path, const std::string& name, int chains, int n,
                        double mu, std::int64_t iterations, std::uint64_t seed,
                        double wall_seconds = 1.0) {
  records::RecordWriter w(path, records::RecordWriter::Options{});
  Record h;
  auto* c = h.mutable_header()->mutable_config();
  c->set_name(name);
  c->mutable_target()->mutable_gaussian()->add_mean(0.0);
  c->mutable_target()->mutable_gaussian()->add_mean(0.0);
  c->mutable_sampler()->mutable_hmc()->set_step_size(0.1);
  c->set_iterations(iterations);
  h.mutable_header()->set_dim(2);
  h.mutable_header()->set_original_dim(2);
  testing::describe_run(*h.mutable_header(), *c, 2, 2);
  w.write(h);
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < chains; ++k) {
      Record r;
      auto* d = r.mutable_draw();
      d->set_run_id(name);
      d->set_chain_id(k);
      d->set_iteration(i);
      d->add_state(mu + normal(gen));
      d->add_state(-mu + normal(gen));
      w.write(r);
    }
  Record f;
  f.mutable_footer()->set_status("ok");
  for (int k = 0; k < chains; ++k) {
    auto* s = f.mutable_footer()->add_chains();
    s->set_chain_id(k);
    s->set_status("ok");
    s->set_wall_seconds(wall_seconds);
    s->set_n_gradient_evals(1000);
    (*s->mutable_estimates())["log_z"] = 1.8378770664093453 + 0.1 * (k + 1);  // log 2 pi + error
  }
  f.mutable_footer()->set_n_records(w.records_written());
  w.write(f);
  w.close();
}

PlotOptions options_for(PlotKind kind, const fs::path& out) {
  PlotOptions o;
  o.kind = kind;
  o.output = out;
  return o;
}

TEST_F(PlotTest, ScatterWithContoursAsPngAndSvg) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not installed";
  write_gaussian_run(dir_ / "a.pemc", "a", 2, 2000, 0.0, 2000, 1);
  write_gaussian_run(dir_ / "b.pemc", "b", 2, 2000, 1.0, 2000, 2);
  auto o = options_for(PlotKind::kScatter, dir_ / "s.png");
  o.keep_temp = true;
  // The contours need the target, built from the config the user names (--config).
  o.target_config = dir_ / "ab.pbtxt";
  std::ofstream(o.target_config)
      << "target { gaussian { mean: [0, 0] } }\nsampler { hmc { step_size: 0.1 } }\n"
         "iterations: 2000\nseeds { values: [1] }\noutput { path: \"o.pemc\" }\n"
         "runs { name: \"a\" }\nruns { name: \"b\" }\n";
  const PlotResult r = plot_files({dir_ / "a.pemc", dir_ / "b.pemc"}, o);
  expect_png(dir_ / "s.png", 20000);
  // The contour pre-pass produced contour lines of the 2-D target.
  ASSERT_FALSE(r.work_dir.empty());
  EXPECT_GT(fs::file_size(r.work_dir / "contours_0.dat"), 1000u);
  EXPECT_TRUE(fs::exists(r.work_dir / "points_1.dat"));
  fs::remove_all(r.work_dir);

  o.output = dir_ / "s.svg";
  o.keep_temp = false;
  const PlotResult s = plot_files({dir_ / "a.pemc"}, o);
  expect_svg(dir_ / "s.svg");
  EXPECT_TRUE(s.work_dir.empty());
}

TEST_F(PlotTest, TraceHistAndRmsePlots) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not installed";
  // Three runs whose iteration counts differ: rmse-vs-n picks "iterations" automatically.
  write_gaussian_run(dir_ / "n1.pemc", "n1", 2, 200, 0.2, 200, 3, 0.5);
  write_gaussian_run(dir_ / "n2.pemc", "n2", 2, 800, 0.1, 800, 4, 2.0);
  write_gaussian_run(dir_ / "n3.pemc", "n3", 2, 3200, 0.05, 3200, 5, 8.0);
  const std::vector<fs::path> files{dir_ / "n1.pemc", dir_ / "n2.pemc", dir_ / "n3.pemc"};

  auto trace = options_for(PlotKind::kTrace, dir_ / "t.svg");
  trace.dims = {0, 1};
  plot_files(files, trace);
  expect_svg(dir_ / "t.svg");

  auto hist = options_for(PlotKind::kHist, dir_ / "h.png");
  hist.dims = {0, 1};
  plot_files(files, hist);
  expect_png(dir_ / "h.png", 15000);

  auto n = options_for(PlotKind::kRmseVsN, dir_ / "n.png");
  const PlotResult rn = plot_files(files, n);
  expect_png(dir_ / "n.png", 10000);
  bool axis = false;
  for (const auto& note : rn.notes) axis = axis || note == "x axis: iterations";
  EXPECT_TRUE(axis);

  auto t = options_for(PlotKind::kRmseVsTime, dir_ / "rt.svg");
  t.metric = "log_z";
  plot_files(files, t);
  expect_svg(dir_ / "rt.svg");
}

// Pseudo-sample draws: sample A = (0, 0) with weight 0.9 and B = (1, 1) with weight 0.1 in every
// draw. With every draw kept (max_points >= draws), the fraction of A points is binomial(n, 0.9):
// sd = sqrt(0.09 / n); 4 sd allowed.
TEST_F(PlotTest, ScatterResamplesPseudoSamplesByTheirWeights) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not installed";
  const int n = 3000;
  {
    records::RecordWriter w(dir_ / "pe.pemc", records::RecordWriter::Options{});
    Record h;
    auto* c = h.mutable_header()->mutable_config();
    c->set_name("pe");
    c->mutable_target()->mutable_gaussian()->add_mean(0.0);
    c->mutable_target()->mutable_gaussian()->add_mean(0.0);
    c->mutable_sampler()->mutable_pseudo_extended()->set_n_pseudo(2);
    h.mutable_header()->set_dim(6);
    h.mutable_header()->set_original_dim(2);
    w.write(h);
    for (int i = 0; i < n; ++i) {
      Record r;
      auto* d = r.mutable_draw();
      d->set_run_id("pe");
      d->set_iteration(i);
      for (int k = 0; k < 6; ++k) d->add_state(7.0);
      for (double v : {0.0, 0.0, 1.0, 1.0}) d->add_extra_states(v);
      d->add_log_weights(std::log(0.9) + 3.0);  // unnormalised: a shift changes nothing
      d->add_log_weights(std::log(0.1) + 3.0);
      w.write(r);
    }
    w.close();
  }
  auto o = options_for(PlotKind::kScatter, dir_ / "pe.png");
  o.max_points = n;
  o.keep_temp = true;
  const PlotResult r = plot_files({dir_ / "pe.pemc"}, o);
  expect_png(dir_ / "pe.png", 10000);
  std::ifstream in(r.work_dir / "points_0.dat");
  double x, y;
  int a = 0, b = 0;
  while (in >> x >> y) (x == 0.0 ? a : b)++;
  fs::remove_all(r.work_dir);
  ASSERT_EQ(a + b, n);
  EXPECT_NEAR(static_cast<double>(a) / n, 0.9, 4.0 * std::sqrt(0.09 / n));
}

// Draws with one log weight each (continuous tempering style): half the draws at (0, 0) with
// weight 9, half at (1, 1) with weight 1. A weighted sample of k = 500 of 20000 draws without
// replacement picks (0, 0) with probability ≈ 0.9 (the finite-population correction at
// k / n = 2.5% is negligible); sd = sqrt(0.09 / k), 4 sd allowed.
TEST_F(PlotTest, ScatterReservoirFollowsDrawWeights) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not installed";
  const int n = 20000, k = 500;
  {
    records::RecordWriter w(dir_ / "ct.pemc", records::RecordWriter::Options{});
    Record h;
    auto* c = h.mutable_header()->mutable_config();
    c->set_name("ct");
    c->mutable_target()->mutable_gaussian()->add_mean(0.0);
    c->mutable_target()->mutable_gaussian()->add_mean(0.0);
    c->mutable_sampler()->mutable_hmc()->set_step_size(0.1);
    h.mutable_header()->set_dim(2);
    h.mutable_header()->set_original_dim(2);
    w.write(h);
    for (int i = 0; i < n; ++i) {
      Record r;
      auto* d = r.mutable_draw();
      d->set_run_id("ct");
      d->set_iteration(i);
      const double v = i % 2 ? 1.0 : 0.0;
      d->add_state(v);
      d->add_state(v);
      d->add_log_weights(i % 2 ? -700.0 : -700.0 + std::log(9.0));  // tiny weights: no underflow
      w.write(r);
    }
    w.close();
  }
  auto o = options_for(PlotKind::kScatter, dir_ / "ct.png");
  o.max_points = k;
  o.keep_temp = true;
  o.contours = false;
  const PlotResult r = plot_files({dir_ / "ct.pemc"}, o);
  std::ifstream in(r.work_dir / "points_0.dat");
  double x, y;
  int a = 0, b = 0;
  while (in >> x >> y) (x == 0.0 ? a : b)++;
  fs::remove_all(r.work_dir);
  ASSERT_EQ(a + b, k);
  EXPECT_NEAR(static_cast<double>(a) / k, 0.9, 4.0 * std::sqrt(0.09 / k));
}

// A run with named outputs, as a Stan model writes it: the state is unconstrained (mu, log sigma),
// the outputs are (mu, sigma = exp(log sigma), pair[1,2] = mu + sigma). Plots show and label the
// outputs, chosen by name or position, never the unconstrained coordinates.
void write_named_output_run(const fs::path& path, int n) {
  records::RecordWriter w(path, records::RecordWriter::Options{});
  Record h;
  auto* c = h.mutable_header()->mutable_config();
  c->set_name("stan");
  c->mutable_target()->mutable_gaussian()->add_mean(0.0);  // stands in for the Stan target
  c->mutable_target()->mutable_gaussian()->add_mean(0.0);
  c->mutable_sampler()->mutable_hmc()->set_step_size(0.1);
  h.mutable_header()->set_dim(2);
  h.mutable_header()->set_original_dim(2);
  auto* info = h.mutable_header()->add_runs();
  info->set_name("stan");
  info->set_dim(2);
  info->set_original_dim(2);
  for (const char* name : {"mu", "sigma", "pair[1,2]"}) info->add_output_names(name);
  w.write(h);
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int i = 0; i < n; ++i) {
    Record r;
    auto* d = r.mutable_draw();
    d->set_run_id("stan");
    d->set_iteration(i);
    const double mu = normal(gen), log_sigma = -3.0 + 0.1 * normal(gen);
    d->add_state(mu);
    d->add_state(log_sigma);
    d->add_outputs(mu);
    d->add_outputs(std::exp(log_sigma));
    d->add_outputs(mu + std::exp(log_sigma));
    w.write(r);
  }
  w.close();
}

std::vector<std::pair<double, double>> read_points(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::pair<double, double>> out;
  double x, y;
  while (in >> x >> y) out.emplace_back(x, y);
  return out;
}

TEST_F(PlotTest, NamedOutputsAreShownAndLabelledByName) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not installed";
  const int n = 400;
  write_named_output_run(dir_ / "stan.pemc", n);
  auto o = options_for(PlotKind::kScatter, dir_ / "s.png");
  o.quantities = {"sigma", "pair[1,2]"};
  o.max_points = n;
  o.keep_temp = true;
  const PlotResult r = plot_files({dir_ / "stan.pemc"}, o);
  expect_png(dir_ / "s.png", 5000);
  const auto points = read_points(r.work_dir / "points_0.dat");
  ASSERT_EQ(points.size(), static_cast<std::size_t>(n));
  for (const auto& [sigma, pair] : points) {
    EXPECT_GT(sigma, 0.0);  // the constrained scale: exp(log sigma), never log sigma (< -2)
    EXPECT_LT(sigma, 0.2);
  }
  const std::string script = read_bytes(r.work_dir / "plot.gp");
  EXPECT_NE(script.find("set xlabel \"sigma\""), std::string::npos) << script;
  EXPECT_NE(script.find("set ylabel \"pair[1,2]\""), std::string::npos) << script;
  EXPECT_FALSE(fs::exists(r.work_dir / "contours_0.dat"));  // no density over outputs
  fs::remove_all(r.work_dir);

  // By position: --dims 1,0 is (sigma, mu), the same points as --quantities sigma,mu.
  auto by_position = options_for(PlotKind::kScatter, dir_ / "p.png");
  by_position.dims = {1, 0};
  by_position.max_points = n;
  by_position.keep_temp = true;
  const PlotResult rp = plot_files({dir_ / "stan.pemc"}, by_position);
  auto by_name = by_position;
  by_name.dims.clear();
  by_name.quantities = {"sigma", "mu"};
  by_name.output = dir_ / "q.png";
  const PlotResult rq = plot_files({dir_ / "stan.pemc"}, by_name);
  EXPECT_EQ(read_points(rp.work_dir / "points_0.dat"), read_points(rq.work_dir / "points_0.dat"));
  fs::remove_all(rp.work_dir);
  fs::remove_all(rq.work_dir);

  auto trace = options_for(PlotKind::kTrace, dir_ / "t.svg");
  trace.quantities = {"pair[1,2]"};
  trace.keep_temp = true;
  const PlotResult rt = plot_files({dir_ / "stan.pemc"}, trace);
  expect_svg(dir_ / "t.svg");
  EXPECT_NE(read_bytes(rt.work_dir / "plot.gp").find("trace of pair[1,2]"), std::string::npos);
  fs::remove_all(rt.work_dir);

  auto hist = options_for(PlotKind::kHist, dir_ / "h.png");
  hist.quantities = {"nope"};
  try {
    plot_files({dir_ / "stan.pemc"}, hist);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no quantity 'nope'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("mu, sigma, pair[1,2]"), std::string::npos) << msg;
  }
}

TEST(QuantityList, SplitsAtCommasOutsideBrackets) {
  EXPECT_EQ(split_quantity_list("mu, Sigma[2,1],x[1]"),
            (std::vector<std::string>{"mu", "Sigma[2,1]", "x[1]"}));
  EXPECT_EQ(split_quantity_list("theta[1, 2]"), (std::vector<std::string>{"theta[1,2]"}));
  EXPECT_TRUE(split_quantity_list("").empty());
  EXPECT_THROW(split_quantity_list("Sigma[2,1"), ConfigError);
  EXPECT_THROW(split_quantity_list("mu]"), ConfigError);
}

TEST_F(PlotTest, BadOptionsAreConfigErrors) {
  write_gaussian_run(dir_ / "a.pemc", "a", 1, 50, 0.0, 50, 1);
  EXPECT_THROW(plot_files({dir_ / "a.pemc"}, options_for(PlotKind::kScatter, dir_ / "a.jpg")),
               ConfigError);
  auto dims = options_for(PlotKind::kScatter, dir_ / "a.png");
  dims.dims = {0, 5};
  try {
    plot_files({dir_ / "a.pemc"}, dims);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("coordinate 5"), std::string::npos) << e.what();
  }
  dims.dims = {0};
  EXPECT_THROW(plot_files({dir_ / "a.pemc"}, dims), ConfigError);  // scatter needs two
  EXPECT_THROW(parse_plot_kind("pie"), ConfigError);
  EXPECT_EQ(parse_plot_kind("rmse-vs-time"), PlotKind::kRmseVsTime);
  auto filter = options_for(PlotKind::kScatter, dir_ / "a.png");
  filter.run_filter = "nope";
  EXPECT_THROW(plot_files({dir_ / "a.pemc"}, filter), DataError);
}

TEST_F(PlotTest, RmsePlotWithoutAnyTruthIsADataError) {
  write_gaussian_run(dir_ / "a.pemc", "a", 1, 50, 0.0, 50, 1);
  auto o = options_for(PlotKind::kRmseVsN, dir_ / "a.png");
  o.compare.with_truth = false;
  EXPECT_THROW(plot_files({dir_ / "a.pemc"}, o), DataError);
}

TEST_F(PlotTest, MissingGnuplotIsAClearIoError) {
  write_gaussian_run(dir_ / "a.pemc", "a", 1, 50, 0.0, 50, 1);
  auto o = options_for(PlotKind::kScatter, dir_ / "a.png");
  o.gnuplot = "/nonexistent/bin/gnuplot-missing";
  try {
    plot_files({dir_ / "a.pemc"}, o);
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("gnuplot is needed"), std::string::npos) << msg;
    EXPECT_NE(msg.find("apt-get install gnuplot"), std::string::npos) << msg;
    // The script and data are kept (to run by hand once gnuplot is installed): clean up.
    const auto pos = msg.find("kept in ");
    ASSERT_NE(pos, std::string::npos) << msg;
    fs::remove_all(msg.substr(pos + 8, msg.find(')', pos) - pos - 8));
  }
  EXPECT_FALSE(fs::exists(dir_ / "a.png"));
}

TEST_F(PlotTest, AFailingGnuplotScriptReportsItsOutput) {
  // `false` runs and exits 1 like a gnuplot that rejected its script.
  write_gaussian_run(dir_ / "a.pemc", "a", 1, 50, 0.0, 50, 1);
  auto o = options_for(PlotKind::kScatter, dir_ / "a.png");
  o.gnuplot = "false";
  try {
    plot_files({dir_ / "a.pemc"}, o);
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("gnuplot failed (exit code 1)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("kept in"), std::string::npos) << msg;
    // Clean up the kept work directory named in the message.
    const auto pos = msg.find("kept in ");
    fs::remove_all(msg.substr(pos + 8, msg.find(')', pos) - pos - 8));
  }
}

}  // namespace
}  // namespace pemc::report
