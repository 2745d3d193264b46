// validate(): every rule, each problem located (file:line:col) and named by its field path, and
// all problems of a config reported together.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "config/study.hpp"
#include "config_test_support.hpp"

namespace pemc::config {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::config_error;
using testing::replace_all;
using testing::TempDir;

constexpr const char* kNoError = "<no ConfigError>";

// The valid base used by most cases. Line 1 is the target, line 2 the sampler, lines 3-5 the run
// fields; `extra` starts on line 6.
const std::string kTarget = "target { gaussian { mean: [0, 0] } }";
const std::string kSampler = "sampler { hmc { step_size: 0.2 n_leapfrog: 10 } }";
std::string cfg(const std::string& target = kTarget, const std::string& sampler = kSampler,
                const std::string& extra = "") {
  return target + "\n" + sampler +
         "\niterations: 100\nseeds { values: [1, 2] }\noutput { path: \"$DIR/out.pemc\" }\n" + extra;
}

// The line of `msg` about `path` ("  <where>: <path>: <reason>"), or "" if there is none.
std::string line_about(const std::string& msg, const std::string& path) {
  std::istringstream in(msg);
  for (std::string line; std::getline(in, line);) {
    if (line.find(": " + path + ": ") != std::string::npos) return line;
  }
  return "";
}

class Validate : public ::testing::Test {
 protected:
  // Parses `text` as "case.pbtxt" ($DIR = a scratch directory), applies defaults, validates.
  std::string problems(const std::string& text) {
    auto c = parse_text_config(replace_all(text, "$DIR", dir_.path().string()), "case.pbtxt");
    apply_defaults(c);
    return config_error([&] { validate(c); });
  }

  // Checks that `msg` has a problem line for `path`, located at `line` (0: no line, just the
  // file), whose text contains `reason`.
  static void expect_problem(const std::string& msg, int line, const std::string& path,
                             const std::string& reason) {
    const std::string l = line_about(msg, path);
    SCOPED_TRACE(msg);
    ASSERT_FALSE(l.empty()) << "no problem reported for " << path;
    if (line > 0) {
      EXPECT_THAT(l, StartsWith("  case.pbtxt:" + std::to_string(line) + ":")) << path;
    } else {
      EXPECT_THAT(l, StartsWith("  case.pbtxt: ")) << path;
    }
    EXPECT_THAT(l, HasSubstr(reason)) << path;
  }

  void expect_one(const std::string& text, int line, const std::string& path, const std::string& reason) {
    const std::string msg = problems(text);
    expect_problem(msg, line, path, reason);
    EXPECT_THAT(msg, HasSubstr("invalid config 'case.pbtxt': 1 problem\n")) << "expected exactly one problem";
  }

  TempDir dir_;
};

TEST_F(Validate, TheBaseAndTheValidFixturesPass) {
  EXPECT_EQ(problems(cfg()), kNoError);
  for (const char* name : {"gaussian_hmc.pbtxt", "nuts.pbtxt", "mixture_preset.pbtxt"}) {
    auto c = load_config(testing::fixture(name));
    c.config.mutable_output()->set_path((dir_.path() / "out.pemc").string());
    apply_defaults(c);
    EXPECT_EQ(config_error([&] { validate(c); }), kNoError) << name;
  }
}

TEST_F(Validate, MissingRequiredFieldsAreAllReported) {
  const std::string msg = problems("name: \"empty\"\n");
  EXPECT_THAT(msg, HasSubstr("5 problems"));
  expect_problem(msg, 0, "target", "required: set one of gaussian, correlated_gaussian, mixture");
  expect_problem(msg, 0, "sampler", "required: set one of hmc, nuts, rwm, mala");
  expect_problem(msg, 0, "iterations", "required");
  expect_problem(msg, 0, "seeds", "required");
  expect_problem(msg, 0, "output.path", "required");
}

TEST_F(Validate, EmptyKindMessagesAreMissing) {
  const std::string msg = problems(cfg("target { }", "sampler {\n}"));
  expect_problem(msg, 1, "target", "required: set one of");
  expect_problem(msg, 2, "sampler", "required: set one of");
}

TEST_F(Validate, ManyProblemsFixtureReportsEveryOne) {
  auto c = load_config(testing::fixture("bad_many_problems.pbtxt"));
  apply_defaults(c);
  const std::string msg = config_error([&] { validate(c); });
  const std::string file = testing::fixture("bad_many_problems.pbtxt").string();
  auto at = [&](const std::string& path, int line, const std::string& reason) {
    const std::string l = line_about(msg, path);
    EXPECT_THAT(l, StartsWith("  " + file + ":" + std::to_string(line) + ":")) << path << "\n" << msg;
    EXPECT_THAT(l, HasSubstr(reason)) << path;
  };
  EXPECT_THAT(msg, HasSubstr("8 problems"));
  at("target.mixture.components[1].weight", 5, "must be > 0 (got -1)");
  at("target.mixture.components[1].mean", 5, "same dimension: components[0].mean has 2 entries (got 1 entry)");
  at("sampler.hmc.step_size", 10, "must be > 0 (got -0.1)");
  at("sampler.hmc.n_leapfrog", 11, "must be in [1, 100000] (got 0)");
  at("iterations", 14, "must be >= 1 (got 0)");
  at("seeds.values[2]", 15, "duplicate of seeds.values[0]");
  at("output.path", 16, "directory 'no/such/directory' does not exist");
  at("output.thin", 16, "must be >= 1 (got 0)");
  EXPECT_THAT(line_about(msg, "init.uniform_radius"), "");  // defaults are valid
}

TEST_F(Validate, RunLevelRanges) {
  expect_one(replace_all(cfg(), "iterations: 100", "iterations: 0"), 3, "iterations", "must be >= 1 (got 0)");
  expect_one(cfg(kTarget, kSampler, "warmup: -1\n"), 6, "warmup", "must be >= 0 (got -1)");
  expect_one(replace_all(cfg(), "out.pemc\"", "out.pemc\" thin: 0"), 5, "output.thin", "must be >= 1 (got 0)");
  expect_one(replace_all(cfg(), "out.pemc\"", "out.pemc\" flush_every: -2"), 5, "output.flush_every", "must be >= 1");
  expect_one(cfg(kTarget, kSampler, "chains_per_seed: -1\n"), 6, "chains_per_seed", "must be in [1, 100000] (got -1)");
  expect_one(cfg(kTarget, kSampler, "chains_per_seed: 100001\n"), 6, "chains_per_seed", "must be in [1, 100000]");
  expect_one(cfg(kTarget, kSampler, "logging { progress_interval_seconds: 0 }\n"), 6,
             "logging.progress_interval_seconds", "must be > 0 (got 0)");
}

TEST_F(Validate, Seeds) {
  const std::string no_seeds = replace_all(cfg(), "seeds { values: [1, 2] }", "seeds { }");
  expect_one(no_seeds, 4, "seeds", "required: seeds.values (explicit seeds) or seeds.count >= 1");
  expect_one(replace_all(cfg(), "values: [1, 2]", "values: [1, 2] count: 3"), 4, "seeds.count",
             "either seeds.values or seeds.base/count, not both");
  expect_one(replace_all(cfg(), "values: [1, 2]", "values: [1, 2] base: 3"), 4, "seeds.base", "not both");
  expect_one(replace_all(cfg(), "values: [1, 2]", "values: [7, 8, 9, 8]"), 4, "seeds.values[3]",
             "duplicate of seeds.values[1] (chains would be identical) (got 8)");
  expect_one(replace_all(cfg(), "values: [1, 2]", "count: -1"), 4, "seeds.count", "must be >= 1 (got -1)");
  {
    // Also more chains than allowed in total: both are reported.
    const std::string msg = problems(replace_all(cfg(), "values: [1, 2]", "count: 20000000"));
    expect_problem(msg, 4, "seeds.count", "more seeds than the limit 10000000 (got 20000000)");
    expect_problem(msg, 0, "chains_per_seed", "more than the limit 10000000");
  }
  expect_one(replace_all(cfg(), "values: [1, 2]", "base: 18446744073709551615 count: 2"), 4, "seeds.base",
             "overflows uint64");
  EXPECT_EQ(problems(replace_all(cfg(), "values: [1, 2]", "base: 18446744073709551614 count: 2")), kNoError);
  expect_one(replace_all(cfg(), "values: [1, 2]", "count: 200000") + "chains_per_seed: 100\n", 6, "chains_per_seed",
             "seeds x chains_per_seed = 20000000 chains, more than the limit 10000000");
}

TEST_F(Validate, OutputPath) {
  expect_one(replace_all(cfg(), "$DIR/out.pemc", "$DIR/missing/out.pemc"), 5, "output.path",
             "directory '" + (dir_.path() / "missing").string() + "' does not exist");
  expect_one(replace_all(cfg(), "$DIR/out.pemc", ""), 5, "output.path", "required: the record file to write");
  std::filesystem::create_directory(dir_.path() / "outdir");
  expect_one(replace_all(cfg(), "$DIR/out.pemc", "$DIR/outdir"), 5, "output.path", "is a directory");
  dir_.write("file", "x");
  expect_one(replace_all(cfg(), "$DIR/out.pemc", "$DIR/file/out.pemc"), 5, "output.path", "is not a directory");
  expect_one(replace_all(cfg(), "$DIR/out.pemc", "no-such-dir-xyz/out.pemc"), 5, "output.path",
             "does not exist (relative to the working directory");
}

TEST_F(Validate, OutputDirectoryMustBeWritable) {
  // /proc/1 is not writable even by root; fall back to a chmod-ed directory for other users.
  std::string dir = "/proc/1";
  if (::geteuid() != 0) {
    std::filesystem::create_directory(dir_.path() / "ro");
    std::filesystem::permissions(dir_.path() / "ro", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    dir = (dir_.path() / "ro").string();
  }
  ASSERT_NE(::access(dir.c_str(), W_OK), 0) << dir << " is writable here; the test needs an unwritable directory";
  expect_one(replace_all(cfg(), "$DIR/out.pemc", dir + "/out.pemc"), 5, "output.path",
             "directory '" + dir + "' is not writable: ");
}

TEST_F(Validate, HmcRanges) {
  expect_one(cfg(kTarget, "sampler { hmc { step_size: 0 n_leapfrog: 10 } }"), 2, "sampler.hmc.step_size", "must be > 0 (got 0)");
  expect_one(cfg(kTarget, "sampler { hmc { step_size: -1 n_leapfrog: 10 } }"), 2, "sampler.hmc.step_size", "must be > 0 (got -1)");
  expect_one(cfg(kTarget, "sampler { hmc { step_size: inf n_leapfrog: 10 } }"), 2, "sampler.hmc.step_size",
             "must be a finite number (got inf)");
  expect_one(cfg(kTarget, "sampler { hmc { step_size: nan n_leapfrog: 10 } }"), 2, "sampler.hmc.step_size",
             "must be a finite number (got nan)");
  expect_one(cfg(kTarget, "sampler { hmc { step_size: 0.1 } }"), 2, "sampler.hmc.n_leapfrog", "must be in [1, 100000] (got 0)");
  expect_one(cfg(kTarget, "sampler { hmc { step_size: 0.1 n_leapfrog: 100001 } }"), 2, "sampler.hmc.n_leapfrog",
             "must be in [1, 100000] (got 100001)");
}

TEST_F(Validate, OtherSamplerRanges) {
  expect_one(cfg(kTarget, "sampler { nuts { step_size: 0 } }"), 2, "sampler.nuts.step_size", "must be > 0 (got 0)");
  expect_one(cfg(kTarget, "sampler { nuts { step_size: 1 max_tree_depth: 0 } }"), 2, "sampler.nuts.max_tree_depth",
             "must be in [1, 30] (got 0)");
  expect_one(cfg(kTarget, "sampler { nuts { step_size: 1 max_tree_depth: 31 } }"), 2, "sampler.nuts.max_tree_depth",
             "must be in [1, 30] (got 31)");
  expect_one(cfg(kTarget, "sampler { nuts { step_size: 1 max_energy_error: -5 } }"), 2, "sampler.nuts.max_energy_error",
             "must be > 0 (got -5)");
  expect_one(cfg(kTarget, "sampler { rwm { proposal_scale: 0 } }"), 2, "sampler.rwm.proposal_scale", "must be > 0 (got 0)");
  expect_one(cfg(kTarget, "sampler { mala { step_size: -1 } }"), 2, "sampler.mala.step_size", "must be > 0 (got -1)");
}

TEST_F(Validate, StepSizeIsOptionalOnlyWhereItIsSearchedFor) {
  // A top-level HMC/NUTS sampler adapting over a warmup searches for its first step size.
  EXPECT_EQ(problems(cfg(kTarget, "sampler { nuts { } }", "warmup: 200")), kNoError);
  EXPECT_EQ(problems(cfg(kTarget, "sampler { hmc { n_leapfrog: 10 } }", "warmup: 200")), kNoError);
  expect_one(cfg(kTarget, "sampler { nuts { } }"), 2, "sampler.nuts.step_size",
             "required when warmup is 0 (it is searched for at the start of warmup)");
  expect_one(cfg(kTarget, "sampler { nuts { adaptation { enabled: false } } }", "warmup: 200"), 2,
             "sampler.nuts.step_size", "required when adaptation is disabled");
  expect_one(cfg(kTarget, "sampler { hmc { n_leapfrog: 10 adaptation { enabled: false } } }",
                 "warmup: 200"),
             2, "sampler.hmc.step_size", "required when adaptation is disabled");
  expect_one(cfg(kTarget, "sampler { pseudo_extended { n_pseudo: 2 nuts { adaptation { enabled: true } } } }",
                 "warmup: 200"),
             2, "sampler.pseudo_extended.nuts.step_size", "required for the kernel of a composite sampler");
}

std::vector<Problem> warnings_of(const std::string& text) {
  auto c = parse_text_config(text, "case.pbtxt");
  apply_defaults(c);
  return find_warnings(c);
}

TEST_F(Validate, ShortWarmupForTheAdaptationWindowsIsAWarning) {
  // Each chain adapting alone (a pooled warmup, the default for several chains, has its own
  // schedule and no such warning).
  auto nuts = [](const std::string& warmup) {
    return cfg(kTarget, "sampler { nuts { step_size: 0.5 adaptation { pooled: false } } }",
               "warmup: " + warmup);
  };
  EXPECT_TRUE(warnings_of(nuts("150")).empty());  // 75 + 25 + 50: the windows fit
  auto w = warnings_of(nuts("100"));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].field_path, "sampler.nuts.adaptation");
  EXPECT_THAT(w[0].reason, HasSubstr("shorter than init_buffer + base_window + term_buffer = 150: "
                                     "the metric is estimated once, from warmup iterations 15 to 89"));
  EXPECT_EQ(w[0].value, "warmup 100");
  w = warnings_of(nuts("10"));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0].reason, HasSubstr("only the step size is adapted"));
  w = warnings_of(nuts("0"));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0].reason, HasSubstr("nothing is adapted"));
  // Step size only (HMC's unit metric, or no metric adaptation): no windows to fit.
  EXPECT_TRUE(warnings_of(cfg(kTarget, kSampler, "warmup: 30")).empty());
  EXPECT_TRUE(warnings_of(cfg(kTarget, "sampler { nuts { step_size: 0.5 adaptation { adapt_metric: false } } }",
                              "warmup: 30")).empty());
  EXPECT_TRUE(warnings_of(cfg(kTarget, "sampler { nuts { step_size: 0.5 adaptation { enabled: false } } }",
                              "warmup: 30")).empty());
}

TEST_F(Validate, PseudoExtended) {
  const std::string k = " hmc { step_size: 0.1 n_leapfrog: 5 }";
  expect_one(cfg(kTarget, "sampler { pseudo_extended { n_pseudo: 0" + k + " } }"), 2,
             "sampler.pseudo_extended.n_pseudo", "required: the number of pseudo-samples N");
  // Without a local kernel the default (adapted NUTS) is used.
  EXPECT_EQ(problems(cfg(kTarget, "sampler { pseudo_extended { n_pseudo: 2 } }")), kNoError);
  expect_one(cfg(kTarget, "sampler { pseudo_extended { n_pseudo: 2 beta_lower: 0.5 beta_upper: 0.4" + k + " } }"), 2,
             "sampler.pseudo_extended.beta_upper", "need beta_lower < beta_upper");
  expect_one(cfg(kTarget, "sampler { pseudo_extended { n_pseudo: 2 nuts { step_size: -1 } } }"), 2,
             "sampler.pseudo_extended.nuts.step_size", "must be > 0 (got -1)");
  expect_one(cfg(kTarget, "sampler { pseudo_extended { n_pseudo: 2 fixed_beta: 0.3 beta_init: 0.5" + k + " } }"), 2,
             "sampler.pseudo_extended.beta_init", "has no effect with fixed_beta");
  EXPECT_EQ(problems(cfg(kTarget, "sampler { pseudo_extended { n_pseudo: 5" + k + " } }")), kNoError);
}

TEST_F(Validate, ContinuousTempering) {
  const std::string base = " base { gaussian { mean: [0, 0] log_zeta: 1.5 } }";
  const std::string k = " hmc { step_size: 0.1 n_leapfrog: 5 }";
  EXPECT_EQ(problems(cfg(kTarget, "sampler { continuous_tempering {" + k + base + " } }")), kNoError);
  // Without a base, the default fits one (variational): no files needed.
  EXPECT_EQ(problems(cfg(kTarget, "sampler { continuous_tempering {" + k + " } }")), kNoError);
  expect_one(cfg(kTarget, "sampler { continuous_tempering {" + k + " base { gaussian { mean: [0, 0] } } } }"), 2,
             "sampler.continuous_tempering.base.gaussian.log_zeta", "required");
  expect_one(cfg(kTarget, "sampler { continuous_tempering {" + k + base + " control_mass: 0 } }"), 2,
             "sampler.continuous_tempering.control_mass", "must be > 0");
  expect_one(cfg(kTarget, "sampler { continuous_tempering {" + k + base + " initial_beta: 1 } }"), 2,
             "sampler.continuous_tempering.initial_beta", "must be in (0, 1) for the JOINT variant");
  EXPECT_EQ(problems(cfg(kTarget, "sampler { continuous_tempering { variant: GIBBS initial_beta: 1" + k + base + " } }")),
            kNoError);
  EXPECT_EQ(problems(cfg(kTarget, "sampler { continuous_tempering {" + base + " } }")), kNoError);
}

TEST_F(Validate, ContinuousTemperingBootstrap) {
  const std::string ct = "sampler { continuous_tempering { hmc { step_size: 0.1 n_leapfrog: 5 }"
                         " base { gaussian { mean: [0, 0] log_zeta: 1.5 } }";
  const std::string pre = "sampler.continuous_tempering.bootstrap";
  auto with = [&](const std::string& b) { return cfg(kTarget, ct + " bootstrap { " + b + " } } }"); };
  EXPECT_EQ(problems(with("rounds: 2 draws_per_round: 500")), kNoError);
  EXPECT_EQ(problems(with("rounds: 1 draws_per_round: 1 warmup: 0 covariance_scale: 1.5")), kNoError);
  expect_one(with("draws_per_round: 500"), 2, pre + ".rounds", "must be in [1, 100]");
  expect_one(with("rounds: 101 draws_per_round: 500"), 2, pre + ".rounds", "must be in [1, 100] (bootstrap rounds");
  expect_one(with("rounds: 1"), 2, pre + ".draws_per_round", "must be >= 1 (post-warmup draws per chain");
  expect_one(with("rounds: 1 draws_per_round: -3"), 2, pre + ".draws_per_round", "must be >= 1");
  expect_one(with("rounds: 1 draws_per_round: 10 warmup: -1"), 2, pre + ".warmup", "must be >= 0");
  expect_one(with("rounds: 1 draws_per_round: 10 covariance_scale: 0"), 2, pre + ".covariance_scale",
             "must be > 0");
  expect_one(with("rounds: 100 draws_per_round: 100000000000"), 2, pre + ".rounds",
             "rounds x (warmup + draws_per_round) + warmup + iterations is more than the limit");
  // Checkpoints cannot hold the refitted bases.
  expect_one(cfg(kTarget, ct + " bootstrap { rounds: 1 draws_per_round: 10 } } }",
                 "checkpoint { every_seconds: 60 }"),
             2, pre, "cannot be checkpointed");
  expect_one(cfg(kTarget, ct + " bootstrap { rounds: 1 draws_per_round: 10 } } }",
                 "checkpoint { every_iterations: 100 }"),
             2, pre, "set checkpoint.every_seconds and checkpoint.every_iterations to 0");
  EXPECT_EQ(problems(cfg(kTarget, ct + " } }", "checkpoint { every_seconds: 60 }")), kNoError);
}

TEST_F(Validate, TemperingLaddersAndReferences) {
  const std::string k = " hmc { step_size: 0.1 n_leapfrog: 5 }";
  const std::string ref = " reference { variance: [4] }";
  EXPECT_EQ(problems(cfg(kTarget, "sampler { parallel_tempering {" + k + ref + " ladder { n_levels: 8 } } }")), kNoError);
  expect_one(cfg(kTarget, "sampler { parallel_tempering {" + k + ref + " ladder { n_levels: 1 } } }"), 2,
             "sampler.parallel_tempering.ladder.n_levels", "required: the number of levels, >= 2");
  expect_one(cfg(kTarget, "sampler { parallel_tempering {" + k + " power_path: true ladder { n_levels: 4 beta_min: 0 } } }"), 2,
             "sampler.parallel_tempering.ladder.beta_min", "must be > 0 without a reference");
  expect_one(cfg(kTarget, "sampler { parallel_tempering {" + k + ref +
                              " ladder { kind: EXPLICIT betas: [0, 0.5, 0.4, 1] } } }"), 2,
             "sampler.parallel_tempering.ladder.betas[2]", "must be strictly ascending");
  expect_one(cfg(kTarget, "sampler { parallel_tempering {" + k + ref +
                              " ladder { kind: EXPLICIT betas: [0, 0.5, 0.9] } } }"), 2,
             "sampler.parallel_tempering.ladder.betas[2]", "the last inverse temperature must be 1");
  expect_one(cfg(kTarget, "sampler { parallel_tempering {" + k + ref + " ladder { n_levels: 4 } choose_replicas: true } }"), 2,
             "sampler.parallel_tempering.choose_replicas", "needs adapt_schedule");
  expect_one(cfg(kTarget, "sampler { parallel_tempering {" + k + " reference { variance: [4, -1] } ladder { n_levels: 4 } } }"), 2,
             "sampler.parallel_tempering.reference.variance[1]", "");
  expect_one(cfg(kTarget, "sampler { simulated_tempering {" + k + ref + " ladder { n_levels: 4 } log_weights: [0, 1] } }"), 2,
             "sampler.simulated_tempering.log_weights", "needs one weight per level (4)");
  // Without a reference, the default fits one to the target (variational).
  EXPECT_EQ(problems(cfg(kTarget, "sampler { annealed_importance {" + k + " ladder { n_levels: 4 } } }")),
            kNoError);
  expect_one(cfg(kTarget, "sampler { annealed_importance {" + k + ref + " ladder { kind: EXPLICIT betas: [0.1, 1] } } }"), 2,
             "sampler.annealed_importance.ladder.betas[0]", "must be 0");
  EXPECT_EQ(problems(cfg(kTarget, "sampler { annealed_importance {" + ref + " ladder { n_levels: 4 } } }")),
            kNoError);
}

// Every config we ship validates (run from the repository root, as their data paths assume).
TEST_F(Validate, EveryShippedConfigIsValid) {
  namespace fs = std::filesystem;
  const fs::path root = PEMC_SOURCE_DIR;
  const fs::path cwd = fs::current_path();
  fs::current_path(root);
  int n = 0;
  for (const auto& dir : {root / "configs", root / "configs" / "paper"}) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".pbtxt") continue;
      ++n;
      auto c = load_config(e.path());
      if (!c.config.runs().empty()) continue;  // studies: each run is checked by study tests
      c.config.mutable_output()->set_path((dir_.path() / "out.pemc").string());
      apply_defaults(c);
      EXPECT_EQ(config_error([&] { validate(c); }), kNoError) << e.path();
    }
  }
  // Studies: every run, including those from run_files.
  int n_runs = 0;
  for (const auto& dir : {root / "configs" / "studies", root / "configs" / "paper" / "studies",
                          root / "configs" / "paper" / "ct30"}) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".pbtxt") continue;
      auto study = load_config(e.path());
      include_run_files(study);
      for (const auto& run : expand_runs(study.config)) {
        ++n_runs;
        LoadedConfig c{run, e.path(), study.source};
        c.config.mutable_output()->set_path((dir_.path() / "out.pemc").string());
        apply_defaults(c);
        EXPECT_EQ(config_error([&] { validate(c); }), kNoError) << e.path() << " run " << run.name();
      }
    }
  }
  fs::current_path(cwd);
  EXPECT_GT(n, 20);
  EXPECT_GT(n_runs, 30);
}

TEST_F(Validate, Adaptation) {
  auto with = [](const std::string& a) {
    return cfg(kTarget, "sampler { nuts { step_size: 1\n  adaptation { " + a + " } } }");
  };
  expect_one(with("target_accept: 1"), 3, "sampler.nuts.adaptation.target_accept", "must be in (0, 1) (got 1)");
  expect_one(with("target_accept: 0"), 3, "sampler.nuts.adaptation.target_accept", "must be in (0, 1) (got 0)");
  expect_one(with("gamma: 0"), 3, "sampler.nuts.adaptation.gamma", "must be > 0");
  expect_one(with("t0: -1"), 3, "sampler.nuts.adaptation.t0", "must be >= 0");
  expect_one(with("kappa: 0.5"), 3, "sampler.nuts.adaptation.kappa", "must be in (0.5, 1] (got 0.5)");
  expect_one(with("kappa: 1.5"), 3, "sampler.nuts.adaptation.kappa", "must be in (0.5, 1]");
  expect_one(with("base_window: 0"), 3, "sampler.nuts.adaptation.base_window", "must be >= 1 (got 0)");
  expect_one(with("init_buffer: -1"), 3, "sampler.nuts.adaptation.init_buffer", "must be >= 0 (got -1)");
  expect_one(with("term_buffer: -1"), 3, "sampler.nuts.adaptation.term_buffer", "must be >= 0 (got -1)");
  EXPECT_EQ(problems(with("init_buffer: 0 term_buffer: 0 kappa: 1")), kNoError);
  expect_one(cfg(kTarget, "sampler { rwm { proposal_scale: 1 adaptation { target_accept: 2 } } }"), 2,
             "sampler.rwm.adaptation.target_accept", "must be in (0, 1)");
}

TEST_F(Validate, InverseMetric) {
  auto hmc = [](const std::string& m) {
    return cfg(kTarget, "sampler { hmc { step_size: 0.1 n_leapfrog: 5\n " + m + " } }");
  };
  EXPECT_EQ(problems(hmc("inverse_metric: [1, 2]")), kNoError);
  EXPECT_EQ(problems(hmc("metric: DENSE inverse_metric: [2, 0.5, 0.5, 1]")), kNoError);
  EXPECT_EQ(problems(hmc("metric: DENSE inverse_metric: [2, 1]")), kNoError);  // diagonal start for a dense metric
  expect_one(hmc("inverse_metric: [1, 2, 3]"), 3, "sampler.hmc.inverse_metric",
             "must have dim = 2 entries (diagonal) or dim*dim = 4 entries (dense, row-major) (got 3 entries)");
  expect_one(hmc("inverse_metric: [1,\n -2]"), 4, "sampler.hmc.inverse_metric[1]", "must be > 0 (got -2)");
  expect_one(hmc("metric: UNIT inverse_metric: [1, 1]"), 3, "sampler.hmc.inverse_metric", "metric is UNIT");
  expect_one(hmc("metric: DIAGONAL inverse_metric: [1, 0, 0, 1]"), 3, "sampler.hmc.inverse_metric",
             "metric is DIAGONAL, so give dim = 2 entries");
  expect_one(hmc("inverse_metric: [1, 2, 2, 1]"), 3, "sampler.hmc.inverse_metric", "must be positive definite");
  expect_one(hmc("inverse_metric: [1, 0.5, 0.4, 1]"), 3, "sampler.hmc.inverse_metric", "must be symmetric");
  expect_one(hmc("inverse_metric: [1, 0, 0, -1]"), 3, "sampler.hmc.inverse_metric[3]", "diagonal entry (1, 1) must be > 0");
  // Dimension unknown from the config (generated Boltzmann): only a DIAGONAL metric's signs are checked.
  const std::string boltz = "target { boltzmann { generated { n_units: 4 } } }";
  EXPECT_EQ(problems(cfg(boltz, "sampler { nuts { step_size: 1 inverse_metric: [1, 2, 3] } }")), kNoError);
  expect_one(cfg(boltz, "sampler { nuts { step_size: 1 metric: DIAGONAL inverse_metric: [1, -2, 3] } }"), 2,
             "sampler.nuts.inverse_metric[1]", "must be > 0");
}

TEST_F(Validate, Gaussian) {
  expect_one(cfg("target { gaussian { } }"), 1, "target.gaussian.mean", "dimension 0 is not allowed");
  expect_one(cfg("target { gaussian { mean: [0, 0] covariance: [1, 0, 1] } }"), 1, "target.gaussian.covariance",
             "must have dim*dim = 4 entries (row-major, dim = mean size 2) (got 3 entries)");
  expect_one(cfg("target { gaussian { mean: [0, 0] covariance: [1, 0, 0, 1] variance: [1, 1] } }"), 1,
             "target.gaussian.variance", "give either covariance (full) or variance (diagonal), not both");
  expect_one(cfg("target { gaussian { mean: [0, 0] variance: [1, 0] } }"), 1, "target.gaussian.variance[1]",
             "must be > 0 (got 0)");
  expect_one(cfg("target { gaussian { mean: [0, 0] variance: [1] } }"), 1, "target.gaussian.variance",
             "must have dim = 2 entries (the mean's size) (got 1 entry)");
  expect_one(cfg("target {\n gaussian { mean: [0, nan] } }"), 2, "target.gaussian.mean[1]", "must be a finite number (got nan)");
  expect_one(cfg("target { gaussian { mean: [0, 0] covariance: [1, 3, 3, 1] } }"), 1, "target.gaussian.covariance",
             "must be positive definite");
  expect_one(cfg("target { gaussian { mean: [0, 0] covariance: [1, 0.1, 0, 1] } }"), 1, "target.gaussian.covariance",
             "must be symmetric: entry (0, 1) = 0.1 but (1, 0) = 0");
  expect_one(cfg("target { gaussian { mean: [0, 0] covariance: [1, 0, 0, 0] } }"), 1, "target.gaussian.covariance[3]",
             "diagonal entry (1, 1) must be > 0");
}

TEST_F(Validate, GaussianTooLargeForDenseMatricesIsRefused) {
  // 200000 dimensions: 3 dense 200000^2 matrices = 960 GB. Refused before anything is allocated.
  std::string mean = "target { gaussian { mean: [0";
  for (int i = 1; i < 200000; ++i) mean += ",0";
  mean += "] } }";
  expect_one(cfg(mean, "sampler { rwm { proposal_scale: 1 } }"), 1, "target.gaussian.mean",
             "needs 3 dense 200000 x 200000 matrices");
}

TEST_F(Validate, CorrelatedGaussian) {
  EXPECT_EQ(problems(cfg("target { correlated_gaussian { dim: 3 rho: -0.9 } }")), kNoError);
  expect_one(cfg("target { correlated_gaussian { rho: 0.5 } }"), 1, "target.correlated_gaussian.dim",
             "must be in [1, 10000000] (got 0)");
  expect_one(cfg("target { correlated_gaussian { dim: 3 rho: 1 } }"), 1, "target.correlated_gaussian.rho",
             "must be in (-1, 1) (got 1)");
  expect_one(cfg("target { correlated_gaussian { dim: 2000000000 } }"), 1, "target.correlated_gaussian.dim",
             "must be in [1, 10000000] (got 2000000000)");
  // Stored in O(dim) memory, so a large dimension is fine, unless a dense metric is asked for.
  EXPECT_EQ(problems(cfg("target { correlated_gaussian { dim: 1000000 } }")), kNoError);
  expect_one(cfg("target { correlated_gaussian { dim: 1000000 } }", "sampler { nuts { step_size: 1 metric: DENSE } }"),
             2, "sampler.nuts.metric", "needs 4 dense 1000000 x 1000000 matrices");
}

TEST_F(Validate, Mixture) {
  const std::string c0 = "components { weight: 1 mean: [0, 0] variance: 1 }\n";
  auto mix = [](const std::string& body) { return "target { mixture {\n" + body + "} }"; };
  EXPECT_EQ(problems(cfg(mix(c0 + "components { weight: 2 mean: [1, 1] diag_variance: [1, 2] }\n"))), kNoError);
  expect_one(cfg(mix("preset: KOU_B\n" + c0)), 3, "target.mixture.components", "give either a preset or components, not both");
  expect_one(cfg(mix("")), 1, "target.mixture", "required: a preset (BIMODAL_1D, KOU_A, KOU_B) or at least one component");
  expect_one(cfg(mix(c0 + "components { weight: 0 mean: [1, 1] variance: 1 }\n")), 3,
             "target.mixture.components[1].weight", "must be > 0 (got 0)");
  expect_one(cfg(mix(c0 + "components { weight: 1 mean: [1, 1, 1] variance: 1 }\n")), 3,
             "target.mixture.components[1].mean", "all components need the same dimension");
  expect_one(cfg(mix(c0 + "components { weight: 1 variance: 1 }\n")), 3, "target.mixture.components[1].mean",
             "required: the component mean");
  expect_one(cfg(mix(c0 + "components { weight: 1 mean: [1, 1] variance: 1 diag_variance: [1, 1] }\n")), 3,
             "target.mixture.components[1].diag_variance", "give either variance (isotropic) or diag_variance, not both");
  expect_one(cfg(mix(c0 + "components { weight: 1 mean: [1, 1] }\n")), 3, "target.mixture.components[1]",
             "required: variance (isotropic, > 0) or diag_variance (2 entries > 0)");
  expect_one(cfg(mix(c0 + "components { weight: 1 mean: [1, 1] diag_variance: [1] }\n")), 3,
             "target.mixture.components[1].diag_variance", "must have 2 entries");
  expect_one(cfg(mix(c0 + "components { weight: 1 mean: [1, 1] diag_variance: [1, -1] }\n")), 3,
             "target.mixture.components[1].diag_variance[1]", "must be > 0 (got -1)");
  expect_one(cfg(mix(c0 + "components { weight: 1 mean: [1, 1] variance: 0 }\n")), 3,
             "target.mixture.components[1].variance", "must be > 0 (got 0)");
}

TEST_F(Validate, BananaFlowerFunnel) {
  EXPECT_EQ(problems(cfg("target { banana {} }")), kNoError);
  expect_one(cfg("target { banana { v: 0 } }"), 1, "target.banana.v", "must be > 0 (got 0)");
  expect_one(cfg("target { flower { sd: 0 } }"), 1, "target.flower.sd", "must be > 0 (got 0)");
  expect_one(cfg("target { flower { petals: 0 } }"), 1, "target.flower.petals", "must be >= 1 (got 0)");
  expect_one(cfg("target { funnel { dim: 1 } }"), 1, "target.funnel.dim", "must be in [2, 10000000] (got 1)");
  expect_one(cfg("target { funnel { dim: 20000000 } }"), 1, "target.funnel.dim", "must be in [2, 10000000]");
  expect_one(cfg("target { funnel { dim: 3 v_scale: -1 } }"), 1, "target.funnel.v_scale", "must be > 0 (got -1)");
  // A dense metric for a large funnel would not fit in memory.
  expect_one(cfg("target { funnel { dim: 5000000 } }", "sampler { nuts { step_size: 1 metric: DENSE } }"), 2,
             "sampler.nuts.metric", "needs 4 dense 5000000 x 5000000 matrices");
}

TEST_F(Validate, Boltzmann) {
  const auto w = dir_.write("w.txt", "0 1\n1 0\n");
  const auto b = dir_.write("b.txt", "0 0\n");
  auto boltz = [](const std::string& body) { return "target {\n boltzmann { " + body + " } }"; };
  EXPECT_EQ(problems(cfg(boltz("weights_file: \"" + w.string() + "\" bias_file: \"" + b.string() + "\""))), kNoError);
  EXPECT_EQ(problems(cfg(boltz("q_file: \"" + w.string() + "\" bias_file: \"" + b.string() + "\""))), kNoError);
  EXPECT_EQ(problems(cfg(boltz("generated { n_units: 28 }"))), kNoError);
  expect_one(cfg(boltz("")), 2, "target.boltzmann", "required: exactly one source of the model");
  expect_one(cfg(boltz("weights_file: \"w\" q_file: \"q\" bias_file: \"b\"")), 2, "target.boltzmann.q_file",
             "weights_file and q_file are exclusive");
  expect_one(cfg(boltz("weights_file: \"" + w.string() + "\" generated { n_units: 4 }")), 2, "target.boltzmann.generated",
             "generated is exclusive with weights_file");
  expect_one(cfg(boltz("weights_file: \"" + w.string() + "\"")), 2, "target.boltzmann.bias_file", "required with weights_file");
  {
    const std::string msg = problems(cfg(boltz("weights_file: \"$DIR/nope.txt\"\n bias_file: \"$DIR/nob.txt\"")));
    expect_problem(msg, 2, "target.boltzmann.weights_file", "file does not exist");
    expect_problem(msg, 3, "target.boltzmann.bias_file", "file does not exist");
    EXPECT_THAT(msg, HasSubstr("(got '" + (dir_.path() / "nope.txt").string() + "')"));
  }
  expect_one(cfg(boltz("q_file: \"$DIR\" bias_file: \"" + b.string() + "\"")), 2, "target.boltzmann.q_file", "is a directory");
  expect_one(cfg(boltz("generated { n_units: 1 }")), 2, "target.boltzmann.generated.n_units", "must be in [2, 64] (got 1)");
  expect_one(cfg(boltz("generated { n_units: 65 }")), 2, "target.boltzmann.generated.n_units", "must be in [2, 64] (got 65)");
  expect_one(cfg(boltz("generated { n_units: 8 bias_scale: -1 }")), 2, "target.boltzmann.generated.bias_scale", "must be > 0");
  expect_one(cfg(boltz("generated { n_units: 8 } bias_file: \"" + b.string() + "\"")), 2, "target.boltzmann.bias_file",
             "not used with generated");
  expect_one(cfg(boltz("generated { n_units: 8 } max_enumeration_units: 41")), 2, "target.boltzmann.max_enumeration_units",
             "must be in [0, 40] (got 41)");
}

TEST_F(Validate, HorseshoeRadonPlugin) {
  const auto data = dir_.write("data.csv", "y,x\n1,0.5\n");
  auto hs = [&](const std::string& extra) {
    return cfg("target { horseshoe_logistic { data_file: \"" + data.string() + "\" p0: 3 " + extra + " } }");
  };
  EXPECT_EQ(problems(hs("")), kNoError);
  expect_one(cfg("target { horseshoe_logistic { p0: 3 } }"), 1, "target.horseshoe_logistic.data_file", "required: a file path");
  expect_one(cfg("target { horseshoe_logistic { data_file: \"none.csv\" p0: 3 } }"), 1,
             "target.horseshoe_logistic.data_file",
             "file does not exist (relative paths are relative to the working directory");
  expect_one(cfg("target { horseshoe_logistic { data_file: \"" + data.string() + "\" } }"), 1,
             "target.horseshoe_logistic.p0", "must be > 0 (got 0)");
  expect_one(hs("train_fraction: 1"), 1, "target.horseshoe_logistic.train_fraction", "must be in (0, 1) (got 1)");
  expect_one(hs("sigma: -1"), 1, "target.horseshoe_logistic.sigma", "must be > 0 (got -1)");
  expect_one(hs("slab_scale: -1"), 1, "target.horseshoe_logistic.slab_scale", "must be > 0");
  expect_one(hs("slab_df: -1"), 1, "target.horseshoe_logistic.slab_df", "must be > 0");
  expect_one(hs("intercept_scale: -1"), 1, "target.horseshoe_logistic.intercept_scale", "must be > 0");

  EXPECT_EQ(problems(cfg("target { radon { data_file: \"" + data.string() + "\" } }")), kNoError);
  expect_one(cfg("target { radon { data_file: \"$DIR/radon.csv\" } }"), 1, "target.radon.data_file", "file does not exist");

  const auto lib = dir_.write("libmodel.so", "not really a library, but readable");
  EXPECT_EQ(problems(cfg("target { plugin { library: \"" + lib.string() + "\" } }")), kNoError);
  expect_one(cfg("target { plugin { library: \"$DIR/libnone.so\" } }"), 1, "target.plugin.library", "file does not exist");
  expect_one(cfg("target { plugin { argument: \"x\" } }"), 1, "target.plugin.library", "required");
}

TEST_F(Validate, TargetBox) {
  EXPECT_EQ(problems(cfg("target { banana {} box_lower: -5 box_upper: 5 }")), kNoError);
  expect_one(cfg("target { banana {} box_lower: 5 box_upper: 5 }"), 1, "target.box_upper",
             "box_lower must be < box_upper (got box_lower 5, box_upper 5)");
}

TEST_F(Validate, Init) {
  expect_one(cfg(kTarget, kSampler, "init { uniform_radius: 0 }\n"), 6, "init.uniform_radius", "must be > 0 (got 0)");
  expect_one(cfg(kTarget, kSampler, "init { uniform_box { lower: 1 upper: -1 } }\n"), 6, "init.uniform_box.upper",
             "lower must be < upper (got lower 1, upper -1)");
  // Per-coordinate bounds (issue 31, item 6): one number for every coordinate or one per
  // coordinate; the lengths are named.
  EXPECT_EQ(problems(cfg(kTarget, kSampler, "init { uniform_box { lower: [0, -3] upper: 5 } }\n")), kNoError);
  EXPECT_EQ(problems(cfg(kTarget, kSampler, "init { uniform_box { lower: [0, -3] upper: [1, -2] } }\n")), kNoError);
  expect_one(cfg(kTarget, kSampler, "init { uniform_box { lower: [0, 1, 2] upper: 5 } }\n"), 6,
             "init.uniform_box.lower", "must have 1 entry (every coordinate) or 2 entries (the target's "
             "dimension) (got 3 entries)");
  expect_one(cfg(kTarget, kSampler, "init { uniform_box { lower: [0, 1] upper: [5, 0.5] } }\n"), 6,
             "init.uniform_box.upper[1]", "lower must be < upper (got lower 1, upper 0.5)");
  // Dimension unknown before the target is built (a Boltzmann file): lower and upper must agree.
  expect_one(cfg("target { boltzmann { generated { seed: 1 n_units: 4 } } }", kSampler,
                 "init { uniform_box { lower: [0, 1, 2] upper: [5, 6] } }\n"),
             6, "init.uniform_box.upper", "must have as many entries as lower (3 entries), or 1");
  EXPECT_EQ(problems(cfg(kTarget, kSampler, "init { point { x: [1, 2] } }\n")), kNoError);
  expect_one(cfg(kTarget, kSampler, "init { point { x: [1, 2, 3] } }\n"), 6, "init.point.x",
             "must have 2 entries (the target's dimension) (got 3 entries)");
  expect_one(cfg("target { flower {} }", kSampler, "init { point { x: [1] } }\n"), 6, "init.point.x", "must have 2 entries");
  expect_one(cfg("target { mixture { preset: BIMODAL_1D } }", kSampler, "init { point { x: [1, 2] } }\n"), 6,
             "init.point.x", "must have 1 entry");
  expect_one(cfg(kTarget, kSampler, "init { point { } }\n"), 6, "init.point.x", "required");
  expect_one(cfg("target { banana {} box_lower: -1 box_upper: 1 }", kSampler, "init { point { x: [0, 3] } }\n"), 6,
             "init.point.x[1]", "lies outside the target's box");
  // Dimension unknown from the config: any non-empty point is accepted here.
  EXPECT_EQ(problems(cfg("target { boltzmann { generated { n_units: 4 } } }", kSampler,
                         "init { point { x: [1, 2, 3, 4, 5] } }\n")),
            kNoError);
}

TEST_F(Validate, EveryDoubleMustBeFinite) {
  expect_one(cfg("target { banana {} box_lower: -inf }"), 1, "target.box_lower", "must be a finite number (got -inf)");
  expect_one(cfg(kTarget, kSampler, "logging { progress_interval_seconds: inf }\n"), 6,
             "logging.progress_interval_seconds", "must be a finite number");
  expect_one(cfg("target { flower { radius: nan } }"), 1, "target.flower.radius", "must be a finite number (got nan)");
}

TEST_F(Validate, ManyBadElementsAreSummarised) {
  const std::string msg = problems(cfg("target { gaussian { mean: [nan, nan, nan, nan, nan, nan, nan, nan] } }"));
  expect_problem(msg, 1, "target.gaussian.mean[4]", "must be a finite number");
  EXPECT_THAT(msg, Not(HasSubstr("mean[5]")));
  expect_problem(msg, 1, "target.gaussian.mean", "more elements are not finite (only the first 5 are listed)");
}

TEST_F(Validate, UnknownEnumNumbers) {
  auto c = parse_text_config(replace_all(cfg(), "$DIR", dir_.path().string()), "case.pbtxt");
  c.config.mutable_sampler()->mutable_hmc()->set_metric(static_cast<pemc::v1::MetricKind>(7));
  apply_defaults(c);
  const std::string msg = config_error([&] { validate(c); });
  expect_problem(msg, 2, "sampler.hmc.metric", "unknown value of MetricKind; valid: METRIC_UNSPECIFIED, UNIT, DIAGONAL, DENSE (got 7)");
}

TEST_F(Validate, BinaryConfigProblemsNameTheFile) {
  auto text = parse_text_config(replace_all(cfg(), "iterations: 100", "iterations: -4"), "x.pbtxt");
  text.config.mutable_output()->set_path((dir_.path() / "o.pemc").string());
  const auto p = dir_.write("run.pb", text.config.SerializeAsString());
  auto c = load_config(p);
  apply_defaults(c);
  EXPECT_THAT(config_error([&] { validate(c); }), HasSubstr("\n  " + p.string() + ": iterations: must be >= 1 (got -4)"));
}

TEST(KnownDimension, FromTheConfigAlone) {
  auto dim = [](const std::string& t) { return known_dimension(parse_text_config(t, "d.pbtxt").config); };
  EXPECT_EQ(dim("target { gaussian { mean: [1, 2, 3] } }"), 3);
  EXPECT_EQ(dim("target { correlated_gaussian { dim: 7 } }"), 7);
  EXPECT_EQ(dim("target { funnel { dim: 10 } }"), 10);
  EXPECT_EQ(dim("target { banana {} }"), 2);
  EXPECT_EQ(dim("target { flower {} }"), 2);
  EXPECT_EQ(dim("target { mixture { preset: BIMODAL_1D } }"), 1);
  EXPECT_EQ(dim("target { mixture { preset: KOU_A } }"), 2);
  EXPECT_EQ(dim("target { mixture { components { mean: [1, 2, 3, 4] } } }"), 4);
  EXPECT_EQ(dim("target { boltzmann { generated {} } }"), std::nullopt);
  EXPECT_EQ(dim("target { gaussian { } }"), std::nullopt);
}

}  // namespace
}  // namespace pemc::config
