// `pemc-report truth --write-relaxation DIR` (src/report/relaxation_export.hpp): the files
// describe the same relaxation (rebuilt from Q.txt and b.txt it is the same target, bit for bit),
// D and W are what Q Q' = W + diag(D) says, and a used directory or another target is refused
// before anything is written.
#include "report/relaxation_export.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config/factories.hpp"
#include "core/error.hpp"
#include "rng/stream.hpp"
#include "targets/boltzmann.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class RelaxationExport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("pemc_relaxation_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

targets::TargetPtr generated(int units) {
  v1::TargetConfig t;
  auto* g = t.mutable_boltzmann()->mutable_generated();
  g->set_seed(17);
  g->set_n_units(units);
  return config::make_target(t);
}

Matrix read_matrix(const fs::path& path, Eigen::Index rows, Eigen::Index cols) {
  std::ifstream in(path);
  Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) in >> m(i, j);
  EXPECT_TRUE(in) << path;
  double extra;
  EXPECT_FALSE(in >> extra) << path << " holds more numbers";
  return m;
}

TEST_F(RelaxationExport, TheFilesRebuildTheSameTarget) {
  const auto target = generated(8);
  const auto& r = dynamic_cast<const targets::BoltzmannRelaxation&>(*target);
  prepare_relaxation_dir(*target, dir_, false);
  const auto truth = target->truth();
  const auto written = write_relaxation(*target, dir_, truth.log_z);
  EXPECT_EQ(written.size(), 5u);

  // Q and b give the same potential, bit for bit, and the same log Z.
  v1::TargetConfig again;
  again.mutable_boltzmann()->set_q_file((dir_ / "Q.txt").string());
  again.mutable_boltzmann()->set_bias_file((dir_ / "b.txt").string());
  const auto rebuilt = config::make_target(again);
  ASSERT_EQ(rebuilt->dim(), target->dim());
  rng::Stream s(3, rng::Domain::kTest, 0, 0);
  Vector x(target->dim()), g1(target->dim()), g2(target->dim());
  for (int k = 0; k < 20; ++k) {
    s.fill_normal(x);
    EXPECT_EQ(rebuilt->potential_and_gradient(x, g1), target->potential_and_gradient(x, g2));
    EXPECT_EQ(g1, g2);
  }
  EXPECT_NEAR(*rebuilt->truth().log_z, *truth.log_z, 1e-9 * std::fabs(*truth.log_z));

  // D and W: Q Q' = W + diag(D) up to the factor's residual; W has a zero diagonal.
  const auto n = r.n_units();
  const Matrix d = read_matrix(dir_ / "D.txt", 1, n);
  const Matrix w = read_matrix(dir_ / "W.txt", n, n);
  EXPECT_EQ(Vector(d.row(0).transpose()), r.diagonal());
  Matrix qq = r.q() * r.q().transpose();
  EXPECT_LE((qq - w - Matrix(d.row(0).asDiagonal())).cwiseAbs().maxCoeff(),
            r.factor_residual() + 1e-12);
  EXPECT_EQ(w.diagonal().cwiseAbs().maxCoeff(), 0.0);

  std::ifstream meta(dir_ / "relaxation.json");
  const auto j = nlohmann::json::parse(meta);
  EXPECT_EQ(j["n_units"], n);
  EXPECT_EQ(j["dim"], target->dim());
  EXPECT_DOUBLE_EQ(j["log_z"].get<double>(), *truth.log_z);
  EXPECT_DOUBLE_EQ(j["trace_d"].get<double>(), r.diagonal().sum());
}

TEST_F(RelaxationExport, AUsedDirectoryOrAnotherTargetIsRefused) {
  const auto target = generated(4);
  fs::create_directories(dir_);
  { std::ofstream(dir_ / "notes.txt") << "mine\n"; }
  try {
    prepare_relaxation_dir(*target, dir_, false);
    ADD_FAILURE() << "a directory holding files was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("already holds files"));
    EXPECT_THAT(e.what(), HasSubstr("--overwrite"));
  }
  EXPECT_FALSE(fs::exists(dir_ / "Q.txt"));
  EXPECT_NO_THROW(prepare_relaxation_dir(*target, dir_, true));

  v1::TargetConfig gaussian;
  gaussian.mutable_gaussian()->add_mean(0.0);
  const auto other = config::make_target(gaussian);
  try {
    prepare_relaxation_dir(*other, dir_ / "new", false);
    ADD_FAILURE() << "a Gaussian target was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not a Boltzmann relaxation"));
  }
  EXPECT_FALSE(fs::exists(dir_ / "new"));
}

}  // namespace
}  // namespace pemc::report
