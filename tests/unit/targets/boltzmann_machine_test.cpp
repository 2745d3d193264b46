// Loading and generating Boltzmann machines.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "targets/boltzmann_machine.hpp"

#include <unistd.h>

namespace pemc::targets {
namespace {

// ctest runs each test in its own process, several at once: the process id keeps files apart.
std::filesystem::path write_file(const std::string& name, const std::string& text) {
  const std::filesystem::path p = std::filesystem::path(::testing::TempDir()) /
                                  ("boltzmann_machine_test_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p;
}

// Runs the loader and returns the DataError's message ("" if nothing was thrown).
std::string load_error(const std::string& w_text, const std::string& b_text) {
  const auto w = write_file("W.txt", w_text);
  const auto b = write_file("b.txt", b_text);
  try {
    load_boltzmann_machine(w, b);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
}

TEST(BoltzmannLoader, AnyLineLayout) {
  // Row-major, but laid out arbitrarily; '+' signs and tabs accepted.
  const auto w = write_file("W_layout.txt", "0 1.5 -2\n1.5\t0 +0.25 -2 0.25\n\n  0\n");
  const auto b = write_file("b_layout.txt", "0.1\n-0.2\n3e-1\n");
  const BoltzmannMachine m = load_boltzmann_machine(w, b);
  ASSERT_EQ(m.W.rows(), 3);
  Matrix want(3, 3);
  want << 0, 1.5, -2, 1.5, 0, 0.25, -2, 0.25, 0;
  EXPECT_TRUE(m.W == want);
  EXPECT_EQ(m.b[0], 0.1);
  EXPECT_EQ(m.b[1], -0.2);
  EXPECT_EQ(m.b[2], 0.3);
}

TEST(BoltzmannLoader, ShippedPe28) {
  const std::filesystem::path dir = std::filesystem::path(PEMC_SHARED_DIR) / "data/boltzmann-pe28";
  const BoltzmannMachine m = load_boltzmann_machine(dir / "W.txt", dir / "b.txt");
  EXPECT_EQ(m.W.rows(), 28);
  EXPECT_EQ(m.b.size(), 28);
  EXPECT_TRUE(m.W == m.W.transpose());
  EXPECT_EQ(m.W.diagonal().cwiseAbs().maxCoeff(), 0.0);
}

TEST(BoltzmannLoader, NonNumericTokenNamesLineAndColumn) {
  const std::string msg = load_error("0 1\n1 abc\n", "0 0\n");
  expect_contains(msg, "W.txt");
  expect_contains(msg, "line 2, column 3");
  expect_contains(msg, "'abc' is not a number");
  // A number followed by junk is not a number either.
  expect_contains(load_error("0 1.0x\n1 0\n", "0 0\n"), "line 1, column 3: '1.0x'");
}

TEST(BoltzmannLoader, NonFiniteValues) {
  expect_contains(load_error("0 nan\nnan 0\n", "0 0\n"), "line 1, column 3: 'nan' is not a finite");
  expect_contains(load_error("0 1\n1 0\n", "inf 0\n"), "b.txt', line 1, column 1: 'inf'");
}

TEST(BoltzmannLoader, RaggedAndNonSquareCounts) {
  const std::string ragged = load_error("0 1 2\n1 0 3\n2 3\n", "0 0 0\n");
  expect_contains(ragged, "8 numbers is not a square");
  expect_contains(ragged, "line 1 has 3 numbers, line 3 has 2");
  expect_contains(load_error("0 1 2 3 4\n", "0\n"), "5 numbers is not a square");
  expect_contains(load_error("", "0\n"), "contains no numbers");
}

TEST(BoltzmannLoader, BiasCountMismatch) {
  const std::string msg = load_error("0 1\n1 0\n", "0.1 0.2 0.3\n");
  expect_contains(msg, "b.txt");
  expect_contains(msg, "3 numbers");
  expect_contains(msg, "d_b = 2");
}

TEST(BoltzmannLoader, NonSymmetricNamesWorstPair) {
  const std::string msg = load_error("0 1 2\n1 0 3\n2 3.5 0\n", "0 0 0\n");
  expect_contains(msg, "not symmetric");
  const bool pair = msg.find("W(1,2) = 3 but W(2,1) = 3.5") != std::string::npos ||
                    msg.find("W(2,1) = 3.5 but W(1,2) = 3") != std::string::npos;
  EXPECT_TRUE(pair) << msg;
  // Differences at rounding level are accepted and symmetrised.
  EXPECT_EQ(load_error("0 0.62353428421092072\n0.62353428421092083 0\n", "0 0\n"), "");
}

TEST(BoltzmannLoader, NonZeroDiagonal) {
  const std::string msg = load_error("0 1\n1 0.5\n", "0 0\n");
  expect_contains(msg, "diagonal must be zero");
  expect_contains(msg, "W(1,1) = 0.5");
}

TEST(BoltzmannLoader, MissingFileIsIoError) {
  EXPECT_THROW(load_boltzmann_machine("/nonexistent/W.txt", "/nonexistent/b.txt"), IoError);
}

TEST(BoltzmannGenerator, SymmetricZeroDiagonalDeterministic) {
  const BoltzmannMachine a = generate_boltzmann_machine(42, 30);
  const BoltzmannMachine b = generate_boltzmann_machine(42, 30);
  const BoltzmannMachine c = generate_boltzmann_machine(43, 30);
  ASSERT_EQ(a.W.rows(), 30);
  ASSERT_EQ(a.b.size(), 30);
  EXPECT_TRUE(a.W == a.W.transpose());
  EXPECT_EQ(a.W.diagonal().cwiseAbs().maxCoeff(), 0.0);
  EXPECT_TRUE(a.W == b.W);
  EXPECT_TRUE(a.b == b.b);
  EXPECT_FALSE(a.W == c.W);
  EXPECT_FALSE(a.b == c.b);
}

TEST(BoltzmannGenerator, SpectrumAndScales) {
  // V = R diag(e) R' with |e_i| < scale_hi: |W_ij| <= ||V|| < scale_hi and
  // ||W||_F^2 <= ||V||_F^2 = sum e_i^2 < n scale_hi^2.
  const int n = 40;
  const BoltzmannMachine m = generate_boltzmann_machine(5, n, 3.0, 2.0, 0.1);
  EXPECT_LT(m.W.cwiseAbs().maxCoeff(), 3.0);
  EXPECT_LT(m.W.squaredNorm(), n * 9.0);
  const BoltzmannMachine sat = generate_boltzmann_machine(5, n, 3.0, 1e6, 0.1);
  // With scale_lo huge tanh saturates: e_i = ±3, so ||W||_F^2 = sum e_i^2 - sum V_ii^2 is close
  // to (and below) 9 n, and ||W|| <= ||V|| + max |V_ii| <= 6.
  EXPECT_LT(sat.W.squaredNorm(), n * 9.0);
  EXPECT_GT(sat.W.squaredNorm(), n * 9.0 * 0.5);
  const Vector ev =
      Eigen::SelfAdjointEigenSolver<Matrix>(sat.W, Eigen::EigenvaluesOnly).eigenvalues();
  EXPECT_LE(ev.cwiseAbs().maxCoeff(), 6.0);
  // Bias: b_i ~ N(0, bias_scale^2). Sample variance over n = 400 units: standard error
  // sigma^2 sqrt(2 / (n - 1)) ~ 7%; allow 5 standard errors.
  const BoltzmannMachine big = generate_boltzmann_machine(9, 400, 6.0, 2.0, 0.1);
  const double var = big.b.squaredNorm() / 400.0;
  EXPECT_NEAR(var, 0.01, 5 * 0.01 * std::sqrt(2.0 / 399.0));
  const BoltzmannMachine no_bias = generate_boltzmann_machine(9, 10, 6.0, 2.0, 0.0);
  EXPECT_EQ(no_bias.b.cwiseAbs().maxCoeff(), 0.0);
}

TEST(BoltzmannGenerator, RejectsBadArguments) {
  EXPECT_THROW(generate_boltzmann_machine(1, 1), ConfigError);
  EXPECT_THROW(generate_boltzmann_machine(1, 5, -1.0), ConfigError);
  EXPECT_THROW(generate_boltzmann_machine(1, 5, 6.0, std::nan("")), ConfigError);
}

}  // namespace
}  // namespace pemc::targets
