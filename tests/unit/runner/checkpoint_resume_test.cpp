// Checkpoint round trips through run_chain for every sampler: a chain stopped at a checkpoint
// (kSaveAndStop at iteration K), its ChainCheckpoint serialised and parsed, and resumed in a fresh
// kernel built from the same config emits exactly the records and the summary (estimates included)
// of the uninterrupted chain, bit for bit. Stops fall in warmup (inside adaptation windows), at the
// end of warmup and while sampling. Also: the config hash, the checkpoint file's atomic write and
// read, and the record file rebuilt at the checkpoint's position.
#include <gtest/gtest.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/defaults.hpp"
#include "config/factories.hpp"
#include "config/load.hpp"
#include "config/validate.hpp"
#include "core/error.hpp"
#include "records/record_file.hpp"
#include "runner/chain_driver.hpp"
#include "runner/checkpoint.hpp"

namespace pemc::runner {
namespace {

using google::protobuf::util::MessageDifferencer;

v1::RunConfig parse_config(const std::string& text) {
  config::LoadedConfig lc;
  if (!google::protobuf::TextFormat::ParseFromString(text, &lc.config))
    throw std::runtime_error("bad test config: " + text);
  lc.path = "checkpoint_test.pbtxt";
  lc.config.mutable_output()->set_path("unused.pemc");
  config::apply_defaults(lc);
  config::validate(lc);
  return lc.config;
}

struct ChainRun {
  std::vector<std::string> records;  // serialised draws, in order
  v1::ChainSummary summary;
};

// Runs the chain, optionally stopping at `stop_at`; the checkpoint goes to *saved.
ChainRun run(const v1::RunConfig& config, targets::TargetPtr target, std::int64_t stop_at,
             v1::ChainCheckpoint* saved, const v1::ChainCheckpoint* resume) {
  ChainRun out;
  ChainCallbacks cb;
  cb.emit = [&](const v1::Record& r) { out.records.push_back(r.SerializeAsString()); };
  if (stop_at > 0) {
    cb.checkpoint_due = [&](std::int64_t t) {
      return t == stop_at ? CheckpointAction::kSaveAndStop : CheckpointAction::kNone;
    };
    cb.on_checkpoint = [&](const v1::ChainCheckpoint& c) {
      // Through bytes, as the checkpoint file carries it.
      ASSERT_TRUE(saved->ParseFromString(c.SerializeAsString()));
    };
  }
  out.summary = run_chain(config, std::move(target), ChainTask{3, 17}, cb, nullptr, resume);
  return out;
}

void expect_same_summary(v1::ChainSummary a, v1::ChainSummary b, const std::string& what) {
  // Wall and CPU times (the chain's, PT's communication/local split) are the only
  // non-reproducible parts.
  for (auto* s : {&a, &b}) {
    s->clear_wall_seconds();
    s->clear_cpu_seconds();
    for (const char* key : {"comm_wall_seconds", "local_wall_seconds"}) s->mutable_estimates()->erase(key);
  }
  EXPECT_TRUE(MessageDifferencer::Equals(a, b))
      << what << "\nuninterrupted: " << a.ShortDebugString() << "\nresumed: " << b.ShortDebugString();
}

void check_round_trips(const std::string& text, const std::vector<std::int64_t>& stops) {
  const auto config = parse_config(text);
  auto target = config::make_target(config.target());
  const auto full = run(config, target, 0, nullptr, nullptr);
  ASSERT_EQ(full.summary.status(), "ok");
  for (const auto k : stops) {
    SCOPED_TRACE("stop at iteration " + std::to_string(k));
    v1::ChainCheckpoint saved;
    const auto first = run(config, target, k, &saved, nullptr);
    ASSERT_EQ(status_of(first.summary), ChainStatus::kCheckpointed);
    ASSERT_EQ(saved.next_iteration(), k);
    ASSERT_FALSE(saved.kernel().kind().empty()) << "the kernel saved no state";
    const auto second = run(config, target, 0, nullptr, &saved);
    ASSERT_EQ(second.summary.status(), "ok");
    std::vector<std::string> joined = first.records;
    joined.insert(joined.end(), second.records.begin(), second.records.end());
    ASSERT_EQ(joined.size(), full.records.size());
    for (std::size_t i = 0; i < joined.size(); ++i)
      ASSERT_EQ(joined[i], full.records[i]) << "record " << i << " differs";
    expect_same_summary(full.summary, second.summary, "summary");
  }
}

const char* kGauss =
    "target { gaussian { mean: [1.0, -2.0, 0.5] covariance: [1.0, 0.6, 0.0, 0.6, 2.0, -0.3, 0.0, "
    "-0.3, 0.5] } } init { uniform_radius: 2.0 } seeds { values: [17] } "
    "output { write_warmup: true } ";

TEST(CheckpointRoundTrip, HmcWithStepAndMetricAdaptation) {
  check_round_trips(std::string(kGauss) +
                        "sampler { hmc { step_size: 0.2 n_leapfrog: 7 jitter_step_size: true "
                        "jitter_n_leapfrog: true metric: DIAGONAL adaptation { enabled: true "
                        "adapt_metric: true } } } warmup: 120 iterations: 60",
                    {1, 20, 50, 119, 120, 121, 150});
}

TEST(CheckpointRoundTrip, NutsDenseMetric) {
  check_round_trips(std::string(kGauss) +
                        "sampler { nuts { step_size: 0.2 metric: DENSE adaptation { enabled: true "
                        "adapt_metric: true } } } warmup: 100 iterations: 50",
                    {10, 40, 100, 130});
}

// Default adaptation with the first step size searched for at the start of warmup: a resumed
// chain keeps the step found (the search runs only in a fresh chain).
TEST(CheckpointRoundTrip, HmcAndNutsWithASearchedStepSize) {
  check_round_trips(std::string(kGauss) + "sampler { nuts { } } warmup: 100 iterations: 50",
                    {1, 40, 100, 130});
  check_round_trips(std::string(kGauss) +
                        "sampler { hmc { n_leapfrog: 5 } } warmup: 60 iterations: 30",
                    {1, 59, 70});
}

TEST(ChainDriver, SearchesTheFirstStepSizeBeforeWarmup) {
  // Scale 0.01: the search's start (1) is far too large; the first transition uses what it found.
  const auto config = parse_config(
      "target { gaussian { mean: [0, 0] variance: [1e-4, 1e-4] } } init { uniform_radius: 0.01 } "
      "seeds { values: [17] } output { write_warmup: true } sampler { nuts { } } "
      "warmup: 20 iterations: 5");
  const auto r = run(config, config::make_target(config.target()), 0, nullptr, nullptr);
  ASSERT_EQ(r.summary.status(), "ok");
  v1::Record first;
  ASSERT_TRUE(first.ParseFromString(r.records.at(0)));
  EXPECT_LT(first.draw().step_size(), 0.1);
  EXPECT_GT(first.draw().step_size(), 1e-4);
}

TEST(CheckpointRoundTrip, RwmAndMala) {
  check_round_trips(std::string(kGauss) +
                        "sampler { rwm { proposal_scale: 0.5 adaptation { enabled: true } } } "
                        "warmup: 100 iterations: 50",
                    {30, 110});
  check_round_trips(std::string(kGauss) +
                        "sampler { mala { step_size: 0.3 adaptation { enabled: true } } } "
                        "warmup: 50 iterations: 50",
                    {30, 70});
}

TEST(CheckpointRoundTrip, PseudoExtendedNuts) {
  check_round_trips(
      "target { mixture { preset: KOU_B } } init { uniform_box { lower: 0 upper: 10 } } "
      "seeds { values: [17] } output { write_warmup: true } "
      "sampler { pseudo_extended { n_pseudo: 4 nuts { step_size: 0.1 metric: DIAGONAL "
      "adaptation { enabled: true adapt_metric: true } } } } warmup: 60 iterations: 40",
      {5, 59, 61, 90});
}

TEST(CheckpointRoundTrip, ContinuousTemperingJointAndGibbs) {
  const std::string common =
      "target { mixture { preset: BIMODAL_1D } } init { uniform_radius: 2.0 } seeds { values: [17] } "
      "output { write_warmup: true } warmup: 50 iterations: 80 ";
  check_round_trips(common +
                        "sampler { continuous_tempering { variant: JOINT hmc { step_size: 0.3 "
                        "n_leapfrog: 10 jitter_step_size: true adaptation { enabled: true } } "
                        "base { gaussian { mean: [0.0] variance: [1.06] log_zeta: 0.0 } } } }",
                    {10, 50, 51, 100});
  check_round_trips(common +
                        "sampler { continuous_tempering { variant: GIBBS hmc { step_size: 0.3 "
                        "n_leapfrog: 10 jitter_step_size: true adaptation { enabled: true } } "
                        "base { gaussian { mean: [0.0] variance: [1.06] log_zeta: 0.0 } } } }",
                    {10, 50, 51, 100});
}

TEST(CheckpointRoundTrip, ParallelTemperingAdaptiveLadder) {
  check_round_trips(
      "target { mixture { preset: KOU_A } } init { uniform_box { lower: 0 upper: 10 } } "
      "seeds { values: [17] } output { write_warmup: true } "
      "sampler { parallel_tempering { hmc { step_size: 0.05 n_leapfrog: 10 jitter_n_leapfrog: true "
      "adaptation { enabled: true target_accept: 0.7 } } reference { mean: [5, 5] variance: [9, 9] } "
      "ladder { kind: LINEAR n_levels: 6 } adapt_schedule: true choose_replicas: true min_replicas: 4 "
      "max_replicas: 12 } } warmup: 300 iterations: 100",
      {7, 100, 299, 300, 301, 350});
}

TEST(CheckpointRoundTrip, SimulatedTemperingAndAis) {
  const std::string common =
      "target { mixture { preset: KOU_A } } init { uniform_box { lower: 0 upper: 10 } } "
      "seeds { values: [17] } output { write_warmup: true } ";
  check_round_trips(common +
                        "sampler { simulated_tempering { hmc { step_size: 0.1 n_leapfrog: 5 "
                        "adaptation { enabled: true } } reference { mean: [5, 5] variance: [9, 9] } "
                        "ladder { kind: LINEAR n_levels: 8 } n_local_steps: 2 adapt_weights: true "
                        "first_pilot_length: 10 n_kernel_bins: 4 } } warmup: 120 iterations: 60",
                    {5, 60, 120, 150});
  check_round_trips(common +
                        "sampler { annealed_importance { hmc { step_size: 0.1 n_leapfrog: 5 "
                        "adaptation { enabled: true } } reference { mean: [5, 5] variance: [9, 9] } "
                        "ladder { kind: SIGMOIDAL n_levels: 40 sigmoid_scale: 4 } n_kernel_bins: 4 } } "
                        "warmup: 6 iterations: 12",
                    {3, 6, 7, 15});
}

// A state saved by one sampler does not restore another: a clear error, not a silent mismatch.
TEST(CheckpointRoundTrip, WrongKernelKindIsRefused) {
  const auto hmc = parse_config(std::string(kGauss) +
                                "sampler { hmc { step_size: 0.2 n_leapfrog: 5 } } iterations: 20");
  const auto nuts = parse_config(std::string(kGauss) + "sampler { nuts { step_size: 0.2 } } iterations: 20");
  auto target = config::make_target(hmc.target());
  v1::ChainCheckpoint saved;
  run(hmc, target, 10, &saved, nullptr);
  const auto resumed = run(nuts, target, 0, nullptr, &saved);
  EXPECT_NE(resumed.summary.status().find("cannot restore a 'nuts' kernel"), std::string::npos)
      << resumed.summary.status();
}

TEST(CheckpointFile, ConfigHashIgnoresOnlyCheckpointLoggingAndWhoWrites) {
  const auto a = parse_config(std::string(kGauss) + "sampler { hmc { step_size: 0.2 n_leapfrog: 5 } } iterations: 20");
  auto b = a;
  b.mutable_checkpoint()->set_every_seconds(60);
  b.mutable_logging()->set_progress_interval_seconds(1);
  b.mutable_output()->set_direct_writes(false);  // the file is the same either way
  EXPECT_EQ(config_hash(a), config_hash(b));
  b.set_iterations(21);
  EXPECT_NE(config_hash(a), config_hash(b));
}

TEST(CheckpointFile, CheckpointConfigIsValidated) {
  const std::string base = std::string(kGauss) + "sampler { hmc { step_size: 0.2 n_leapfrog: 5 } } iterations: 20 ";
  EXPECT_NO_THROW(parse_config(base + "checkpoint { every_seconds: 600 every_iterations: 1000 }"));
  for (const auto& [bad, field] :
       std::vector<std::pair<std::string, std::string>>{
           {"checkpoint { every_seconds: -1 }", "checkpoint.every_seconds"},
           {"checkpoint { every_iterations: -5 }", "checkpoint.every_iterations"},
           {"checkpoint { path: \"unused.pemc\" }", "checkpoint.path"}}) {
    try {
      parse_config(base + bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

TEST(CheckpointFile, AtomicWriteAndRead) {
  const auto dir = std::filesystem::temp_directory_path() / ("pemc-ckpt-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "run.pemc.ckpt";
  v1::Checkpoint c;
  c.set_format_version(kCheckpointFormatVersion);
  c.set_record_bytes(1234);
  c.set_task_end(8);
  c.set_n_ranks(1);
  c.set_group_size(1);
  c.set_sequence(1);
  auto* k = c.add_in_progress();
  k->set_chain_id(7);
  k->add_x(1.0);
  k->add_grad(0.5);
  k->set_group_size(1);
  k->mutable_kernel()->set_kind("hmc");
  write_checkpoint(path, c);
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  const auto back = read_checkpoint(path);
  EXPECT_TRUE(MessageDifferencer::Equals(c, back));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "not a checkpoint";
  EXPECT_THROW(read_checkpoint(path), Error);
  std::filesystem::remove_all(dir);
}

TEST(CheckpointFile, RecordFileIsCutBackToTheCheckpoint) {
  const auto dir = std::filesystem::temp_directory_path() / ("pemc-ckpt-rec-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "run.pemc";
  std::int64_t bytes_at = 0, records_at = 0;
  {
    records::RecordWriter w(path, {});
    v1::Record r;
    for (int i = 0; i < 10; ++i) {
      r.mutable_draw()->set_iteration(i);
      w.write(r);
      if (i == 5) {
        bytes_at = static_cast<std::int64_t>(w.bytes_written());
        records_at = w.records_written();
      }
    }
    w.close();
  }
  {
    auto w = reopen_record_file(path, bytes_at, records_at);
    EXPECT_EQ(w.records_written(), 6);
    v1::Record r;
    r.mutable_draw()->set_iteration(100);
    w.write(r);
    w.close();
  }
  records::RecordReader reader(path);
  std::vector<std::int64_t> its;
  v1::Record r;
  while (reader.next(r)) its.push_back(r.draw().iteration());
  EXPECT_EQ(its, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 100}));
  // A position past the end of the file, or inside a frame, is refused.
  EXPECT_THROW(reopen_record_file(path, 1 << 20, 7), DataError);
  EXPECT_THROW(reopen_record_file(path, bytes_at - 1, records_at), DataError);
  EXPECT_THROW(reopen_record_file(path, bytes_at, records_at + 1), DataError);  // count mismatch
  // A refused resume leaves the file as it was and no partial copy behind.
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".resume.tmp"));
  records::RecordReader again(path);
  int n = 0;
  while (again.next(r)) ++n;
  EXPECT_EQ(n, 7);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pemc::runner
