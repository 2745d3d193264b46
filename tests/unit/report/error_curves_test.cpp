// The errors of running estimates behind plot --kind error-vs-time and `pemc-report errors` (the
// CT paper's Figure 2): hand-computed RMSEs and normalisations, the snapshot's moment fields
// through a record file, and the mean +- SE over chains.
#include "report/error_curves.hpp"

#include <gtest/gtest.h>
#include <google/protobuf/util/message_differencer.h>

#include <cmath>
#include <sstream>

#include "config/factories.hpp"
#include "core/error.hpp"
#include "pemc/v1/records.pb.h"
#include "records/record_reader.hpp"
#include "records/record_writer.hpp"
#include "run_info_support.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("pemc_error_curves_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

ExactMoments exact_2d() {
  ExactMoments e;
  e.log_z = 1.5;
  e.mean = Vector(2);
  *e.mean << 1.0, 2.0;
  e.covariance = Matrix(2, 2);
  *e.covariance << 2.0, 0.5, 0.5, 1.0;
  return e;
}

TEST(ErrorCurves, RmseAndPackedCovariance) {
  const std::vector<double> a{1.0, 2.0, 3.0}, b{1.0, 0.0, 4.0};
  EXPECT_DOUBLE_EQ(rmse(a, b), std::sqrt(5.0 / 3.0));
  EXPECT_THROW(rmse(a, std::vector<double>{1.0}), DataError);
  const std::vector<double> packed{1, 2, 3, 4, 5, 6};  // (0,0) (0,1) (0,2) (1,1) (1,2) (2,2)
  Matrix expected(3, 3);
  expected << 1, 2, 3, 2, 4, 5, 3, 5, 6;
  EXPECT_EQ(unpack_upper(packed, 3), expected);
  EXPECT_THROW(unpack_upper(packed, 2), DataError);
}

TEST(ErrorCurves, HandComputedErrorsAndNormalisation) {
  const auto exact = exact_2d();
  // Mean (1.3, 1.6): RMSE sqrt((0.09 + 0.16) / 2); the base's (0, 2): sqrt(1 / 2); ratio 0.5.
  const std::vector<double> mean{1.3, 1.6}, base_mean{0.0, 2.0};
  const auto e = estimate_error(ErrorQuantity::kMean, 0, mean, {}, exact);
  const auto b = estimate_error(ErrorQuantity::kMean, 0, base_mean, {}, exact);
  ASSERT_TRUE(e && b);
  EXPECT_NEAR(*e, std::sqrt(0.125), 1e-15);
  EXPECT_NEAR(*e / *b, 0.5, 1e-15);
  // Covariance [[2.2, 0.3], [0.3, 1]] (packed 2.2, 0.3, 1): differences 0.2, -0.2, -0.2, 0 over
  // ALL four entries: sqrt(0.12 / 4) (the upper triangle alone would give sqrt(0.08 / 3)).
  const std::vector<double> cov{2.2, 0.3, 1.0};
  const auto c = estimate_error(ErrorQuantity::kCovariance, 0, {}, cov, exact);
  ASSERT_TRUE(c);
  EXPECT_NEAR(*c, std::sqrt(0.03), 1e-15);
  // log Z: |1.2 - 1.5| / |1.0 - 1.5| = 0.6.
  const auto z = estimate_error(ErrorQuantity::kLogZ, 1.2, {}, {}, exact);
  const auto zb = estimate_error(ErrorQuantity::kLogZ, 1.0, {}, {}, exact);
  ASSERT_TRUE(z && zb);
  EXPECT_NEAR(*z / *zb, 0.6, 1e-15);
  // Missing pieces give no error rather than a wrong one.
  EXPECT_FALSE(estimate_error(ErrorQuantity::kMean, 0, {}, {}, exact));
  EXPECT_FALSE(estimate_error(ErrorQuantity::kLogZ, std::nan(""), {}, {}, exact));
  EXPECT_FALSE(estimate_error(ErrorQuantity::kMean, 0, mean, {}, ExactMoments{}));
}

TEST(ErrorCurves, AggregateIsTheMeanWithItsStandardError) {
  std::vector<ChainErrors> chains(3);
  const double errs[3][2] = {{1.0, 0.5}, {2.0, 0.25}, {3.0, 0.75}};
  for (int c = 0; c < 3; ++c) {
    chains[c].wall_seconds = {1.0 + c, 2.0 + c};
    chains[c].error = {errs[c][0], errs[c][1]};
  }
  chains[2].error.push_back(9.0);  // an index not every chain reached is left out
  chains[2].wall_seconds.push_back(9.0);
  const auto curve = aggregate_errors(chains);
  ASSERT_EQ(curve.size(), 2u);
  EXPECT_DOUBLE_EQ(curve[0].mean, 2.0);
  EXPECT_DOUBLE_EQ(curve[0].wall_seconds, 2.0);
  EXPECT_NEAR(curve[0].se, std::sqrt(1.0 / 3.0), 1e-15);  // sd 1, n 3
  EXPECT_DOUBLE_EQ(curve[1].mean, 0.5);
  EXPECT_NEAR(curve[1].se, std::sqrt(0.0625 / 3.0), 1e-15);  // sd 0.25
  EXPECT_EQ(curve[1].n_chains, 3);
}

v1::Record snapshot(int chain, double wall, std::vector<double> mean, std::vector<double> cov,
                    std::vector<double> base_mean, std::vector<double> base_cov, double log_z,
                    std::optional<double> log_zeta) {
  v1::Record r;
  auto& s = *r.mutable_estimates();
  s.set_run_id("g");
  s.set_chain_id(chain);
  s.set_seed(10 + chain);
  s.set_iteration(100);
  s.set_wall_seconds(wall);
  (*s.mutable_estimates())["log_z"] = log_z;
  s.mutable_mean()->Add(mean.begin(), mean.end());
  s.mutable_covariance()->Add(cov.begin(), cov.end());
  auto& b = *s.mutable_base();
  b.mutable_mean()->Add(base_mean.begin(), base_mean.end());
  b.mutable_covariance()->Add(base_cov.begin(), base_cov.end());
  if (log_zeta) b.set_log_zeta(*log_zeta);
  return r;
}

TEST(ErrorCurves, SnapshotMomentsRoundTripThroughARecordFile) {
  const fs::path dir = temp_dir("roundtrip");
  const auto a = snapshot(0, 1.0, {1.0, -2.5}, {3.0, 0.25, 4.0}, {0.0, 0.0}, {1.0, 0.0, 1.0},
                          0.3, 0.125);
  const auto b = snapshot(1, 2.0, {}, {}, {0.5}, {2.0}, 0.3, std::nullopt);
  {
    records::RecordWriter w(dir / "s.pemc", {});
    w.write(a);
    w.write(b);
  }
  records::RecordReader reader(dir / "s.pemc");
  v1::Record got;
  ASSERT_TRUE(reader.next(got));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(got, a));
  EXPECT_EQ(got.estimates().covariance_size(), 3);
  EXPECT_TRUE(got.estimates().base().has_log_zeta());
  ASSERT_TRUE(reader.next(got));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(got, b));
  EXPECT_FALSE(got.estimates().base().has_log_zeta());  // unset stays unset (not 0)
  EXPECT_FALSE(reader.next(got));
}

TEST(ErrorCurves, FileCurveNormalisedByTheBase) {
  const fs::path dir = temp_dir("file");
  // A 2-d Gaussian target: its truth is known exactly.
  v1::Record header;
  auto& g = *header.mutable_header()->mutable_config()->mutable_target()->mutable_gaussian();
  for (double m : {1.0, 2.0}) g.add_mean(m);
  for (double c : {2.0, 0.5, 0.5, 1.0}) g.add_covariance(c);
  header.mutable_header()->mutable_config()->set_name("g");
  testing::describe_run(*header.mutable_header(), header.header().config(), 2, 2);
  const auto truth = config::make_target(header.header().config().target())->truth();
  ASSERT_TRUE(truth.log_z);
  const double lz = *truth.log_z;
  {
    records::RecordWriter w(dir / "m.pemc", {});
    w.write(header);
    // Chain 0: mean error sqrt(0.125), base error sqrt(0.5): 0.5. Chain 1: exact mean: 0.
    w.write(snapshot(0, 1.0, {1.3, 1.6}, {2.2, 0.3, 1.0}, {0.0, 2.0}, {2.0, 0.5, 1.0}, lz + 0.3,
                     lz - 0.5));
    w.write(snapshot(1, 3.0, {1.0, 2.0}, {2.0, 0.5, 1.0}, {0.0, 2.0}, {2.0, 0.5, 1.0}, lz - 0.1,
                     lz - 0.5));
    // Chain id -1: a CT bootstrap round's pooled estimates, not a chain: not counted.
    w.write(snapshot(-1, 9.0, {9.0, 9.0}, {9.0, 0.0, 9.0}, {0.0, 2.0}, {2.0, 0.5, 1.0}, lz + 5,
                     lz - 0.5));
  }
  std::vector<std::string> notes;
  auto curve = aggregate_errors(
      read_chain_errors(dir / "m.pemc", ErrorQuantity::kMean, Normalise::kBase, "", notes));
  ASSERT_EQ(curve.size(), 1u);
  EXPECT_NEAR(curve[0].mean, 0.25, 1e-15);
  EXPECT_NEAR(curve[0].se, 0.25, 1e-15);  // sample sd of {0.5, 0}: sqrt(0.125); / sqrt(2)
  EXPECT_DOUBLE_EQ(curve[0].wall_seconds, 2.0);
  // log Z: (0.3 / 0.5 + 0.1 / 0.5) / 2 = 0.4.
  curve = aggregate_errors(
      read_chain_errors(dir / "m.pemc", ErrorQuantity::kLogZ, Normalise::kBase, "", notes));
  ASSERT_EQ(curve.size(), 1u);
  EXPECT_NEAR(curve[0].mean, 0.4, 1e-12);
  // Covariance: the base is exact, so there is nothing to normalise by: the run is left out.
  notes.clear();
  EXPECT_TRUE(
      read_chain_errors(dir / "m.pemc", ErrorQuantity::kCovariance, Normalise::kBase, "", notes)
          .empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("no base covariance"), std::string::npos) << notes[0];
  // Unnormalised: chain 0's sqrt(0.03) and chain 1's 0.
  curve = aggregate_errors(
      read_chain_errors(dir / "m.pemc", ErrorQuantity::kCovariance, Normalise::kNone, "", notes));
  EXPECT_NEAR(curve[0].mean, std::sqrt(0.03) / 2, 1e-15);
  // The CSV carries the same numbers.
  std::ostringstream csv;
  EXPECT_EQ(write_error_curves_csv({dir / "m.pemc"}, ErrorQuantity::kMean, Normalise::kBase, "",
                                   true, csv, notes),
            1);
  EXPECT_NE(csv.str().find("m.pemc,mean,base,0,2,2,0.25,"), std::string::npos) << csv.str();
}

}  // namespace
}  // namespace pemc::report
