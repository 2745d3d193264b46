// Record files as untrusted input (report/checked_reader.hpp, header_bounds.hpp, run_targets.hpp,
// verify.hpp): a header beyond the bounds is refused before anything is sized from it; the file's
// structure is checked (one header, draws of the header's runs and dimension, one footer counting
// the records); a target is never built from a header; the truth comes from the header.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "records/record_writer.hpp"
#include "report/compare.hpp"
#include "report/export.hpp"
#include "report/run_targets.hpp"
#include "report/summary.hpp"
#include "report/verify.hpp"
#include "targets/truth_record.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using pemc::v1::Record;

class HostileRecords : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pemc-hostile-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::vector<Record>& records) const {
    const auto p = dir_ / name;
    records::RecordWriter w(p, records::RecordWriter::Options{true});
    for (const auto& r : records) w.write(r);
    w.close();
    return p;
  }
  fs::path dir_;
};

// A run "g" of dimension 2 on chains 0..1, with its truth recorded.
Record header() {
  Record r;
  auto* h = r.mutable_header();
  h->set_dim(2);
  h->set_original_dim(2);
  h->set_task_end(2);
  h->set_n_tasks(2);
  auto* c = h->mutable_config();
  c->set_name("g");
  c->mutable_target()->mutable_gaussian()->add_mean(1.0);
  c->mutable_target()->mutable_gaussian()->add_mean(-1.0);
  c->mutable_sampler()->mutable_hmc()->set_step_size(0.1);
  auto* info = h->add_runs();
  info->set_name("g");
  info->set_dim(2);
  info->set_original_dim(2);
  targets::Truth t;
  t.mean = Vector::Constant(2, 0.5);
  t.second_moment = Vector::Constant(2, 1.5);
  *info->mutable_truth() = targets::truth_record(t);
  return r;
}

Record draw(const std::string& run, int chain, std::vector<double> x) {
  Record r;
  auto* d = r.mutable_draw();
  d->set_run_id(run);
  d->set_chain_id(chain);
  for (double v : x) d->add_state(v);
  return r;
}

Record footer(std::int64_t n_records) {
  Record r;
  r.mutable_footer()->set_n_records(n_records);
  auto* c = r.mutable_footer()->add_chains();
  c->set_chain_id(0);
  c->set_run_id("g");
  c->set_status("ok");
  return r;
}

std::string problem_of(const fs::path& p) {
  const auto v = verify_file(p);
  return v.problem ? v.problem->message : "none";
}

TEST_F(HostileRecords, AnIntactFileVerifies) {
  const auto p = write("ok.pemc", {header(), draw("g", 0, {1, 2}), draw("g", 1, {3, 4}), footer(3)});
  const auto v = verify_file(p);
  EXPECT_FALSE(v.problem.has_value()) << v.problem->message;
  EXPECT_TRUE(v.has_header);
  EXPECT_TRUE(v.has_footer);
  EXPECT_EQ(v.n_records, 4);
}

TEST_F(HostileRecords, StructureIsChecked) {
  const Record h = header(), d = draw("g", 0, {1, 2});
  EXPECT_EQ(problem_of(write("a.pemc", {h, h, d})), "inconsistent file: a second header");
  EXPECT_EQ(problem_of(write("b.pemc", {h, d, footer(2), footer(3)})),
            "inconsistent file: a record after the footer");
  EXPECT_EQ(problem_of(write("c.pemc", {h, d, footer(5)})),
            "inconsistent file: the footer counts 5 records before it, the file holds 2");
  EXPECT_EQ(problem_of(write("d.pemc", {h, draw("g", 0, {1})})),
            "inconsistent file: a draw of run 'g' with a state of 1 coordinates, the header says 2");
  EXPECT_EQ(problem_of(write("e.pemc", {h, draw("x", 0, {1, 2})})),
            "inconsistent file: a record of run 'x', which the header does not list");
  EXPECT_EQ(problem_of(write("f.pemc", {h, draw("g", 9, {1, 2})})),
            "inconsistent file: chain id 9 outside the header's tasks 0..1");
  EXPECT_EQ(problem_of(write("g.pemc", {d, h})),
            "inconsistent file: the first record is not the header (the file does not start a run)");
  // Where reading stopped: the bad record, after the good ones.
  const auto v = verify_file(dir_ / "d.pemc");
  EXPECT_EQ(v.n_records, 1);
  EXPECT_EQ(v.problem->record_index, 1);
  // Summaries stop there too, and say so.
  const auto s = summarize_file(dir_ / "e.pemc");
  ASSERT_TRUE(s.problem.has_value());
  EXPECT_EQ(s.n_records, 1);
  std::ostringstream out;
  const auto e = export_draws(dir_ / "e.pemc", out, ExportOptions{});
  EXPECT_THAT(e.incomplete_reason(), HasSubstr("a record of run 'x'"));
}

TEST_F(HostileRecords, HeaderBeyondTheBoundsIsRefusedBeforeAnything) {
  auto bad = [&](const std::string& name, auto&& edit, const std::string& what) {
    Record h = header();
    edit(*h.mutable_header());
    const auto p = write(name, {h, draw("g", 0, {1, 2})});
    for (const auto& f : std::vector<std::function<void()>>{
             [&] { verify_file(p); }, [&] { summarize_file(p); },
             [&] { std::ostringstream o; export_draws(p, o, ExportOptions{}); }}) {
      try {
        f();
        ADD_FAILURE() << name << " was read";
      } catch (const UntrustedInputError& e) {
        EXPECT_THAT(std::string(e.what()),
                    HasSubstr(p.string() + ": the header is not one pemc-dist writes: " + what));
      }
    }
  };
  bad("dim.pemc", [](v1::Header& h) { h.set_dim(2147483647); },
      "dim is 2147483647, outside [0, 33554432]");
  bad("run-dim.pemc", [](v1::Header& h) { h.mutable_runs(0)->set_original_dim(20000000); },
      "runs[0].original_dim is 20000000, outside [0, 10000000]");
  bad("names.pemc",
      [](v1::Header& h) { h.mutable_runs(0)->add_output_names(std::string(5000, 'x')); },
      "runs[0].an output name of 5000 bytes (at most 4096)");
  bad("iterations.pemc", [](v1::Header& h) { h.mutable_config()->set_iterations(-5); },
      "config.iterations is -5, outside [0, 1000000000000]");
  bad("tasks.pemc", [](v1::Header& h) { h.set_task_end(7); }, "task_end is 7, outside [0, 2]");
}

TEST_F(HostileRecords, TruthComesFromTheHeaderAndTargetsOnlyFromAConfig) {
  // The header's target names a library that would run if loaded: it is never built.
  Record h = header();
  h.mutable_header()->mutable_config()->mutable_target()->mutable_plugin()->set_library(
      (dir_ / "no-such-plugin.so").string());
  const auto p = write("t.pemc", {h, draw("g", 0, {1, 2}), footer(2)});
  const auto s = summarize_file(p);
  ASSERT_EQ(s.runs.size(), 1u);
  ASSERT_EQ(s.runs[0].error_mean.size(), 2);
  EXPECT_DOUBLE_EQ(s.runs[0].error_mean[0], 0.5);  // mean 1 - recorded truth 0.5
  EXPECT_EQ(s.truth_note, "");
  RunTargets targets;
  try {
    targets.target(h.header(), "g", "the held-out lpd");
    ADD_FAILURE() << "a target was built from a header";
  } catch (const ConfigError& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("the held-out lpd needs the target of run 'g': pass --config CONFIG"));
  }
  // Without a recorded truth there is none, and the note says how to get it.
  h.mutable_header()->mutable_runs(0)->clear_truth();
  const auto no_truth = summarize_file(write("n.pemc", {h, draw("g", 0, {1, 2}), footer(2)}));
  EXPECT_THAT(no_truth.truth_note,
              HasSubstr("the record file holds no exact truth for run 'g' (written by a pemc-dist "
                        "that did not record it); pass --config CONFIG"));
}

TEST_F(HostileRecords, AConfigWithAnotherTargetIsRefused) {
  const auto config = dir_ / "c.pbtxt";
  std::ofstream(config) << "name: \"g\"\ntarget { gaussian { mean: [5, 5] } }\n"
                           "sampler { hmc { step_size: 0.1 } }\niterations: 10\n"
                           "seeds { values: [1] }\noutput { path: \"x.pemc\" }\n";
  RunTargets targets(config);
  try {
    targets.target(header().header(), "g", "drawing the density contours");
    ADD_FAILURE() << "a config with another target was used";
  } catch (const ConfigError& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("run 'g' has another target than the record file's (modified: "
                          "gaussian.mean[0]: 1 -> 5"));
  }
  std::ofstream(config) << "name: \"g\"\ntarget { gaussian { mean: [1, -1] } }\n"
                           "sampler { hmc { step_size: 0.1 } }\niterations: 10\n"
                           "seeds { values: [1] }\noutput { path: \"x.pemc\" }\n";
  RunTargets same(config);
  EXPECT_EQ(same.target(header().header(), "g", "drawing the density contours")->dim(), 2);
}

}  // namespace
}  // namespace pemc::report
