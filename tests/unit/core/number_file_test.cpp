// The one reader of number files (src/core/number_file.hpp): layouts, counts and shapes, and
// errors that name the file's role, line, column and token.
#include "core/number_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"

namespace pemc {
namespace {

namespace fs = std::filesystem;

fs::path write_file(const std::string& name, const std::string& text) {
  const fs::path p = fs::path(::testing::TempDir()) /
                     ("pemc_number_file_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(NumberFile, ReadsAnyLayoutAndALeadingPlus) {
  const auto p = write_file("layout", "1 +2.5\t-3e-1\n\n  4\r\n");
  const NumberFile f = read_number_file(p, "test file");
  EXPECT_EQ(f.values, (std::vector<double>{1.0, 2.5, -0.3, 4.0}));
  EXPECT_EQ(f.line_counts, (std::vector<std::pair<int, int>>{{1, 3}, {3, 1}}));
  EXPECT_NE(f.ragged_hint().find("line 1 has 3 numbers, line 3 has 1"), std::string::npos);
  const Vector v = read_number_vector(p, 4, "test file");
  EXPECT_EQ(v[3], 4.0);
  fs::remove(p);
}

TEST(NumberFile, MatrixIsFilledRowByRow) {
  const auto p = write_file("matrix", "1 2 3\n4 5 6\n");
  const Matrix m = read_number_matrix(p, 2, "Q file");
  ASSERT_EQ(m.rows(), 2);
  ASSERT_EQ(m.cols(), 3);
  EXPECT_EQ(m(0, 2), 3.0);
  EXPECT_EQ(m(1, 0), 4.0);
  const std::string msg = error_of([&] { read_number_matrix(p, 4, "Q file"); });
  EXPECT_NE(msg.find("Q file '" + p.string() + "': 6 numbers do not form 4 rows"), std::string::npos)
      << msg;
  fs::remove(p);
}

TEST(NumberFile, ErrorsNameRoleLineColumnAndToken) {
  const auto p = write_file("bad", "1 2\n3 x4 5\n");
  std::string msg = error_of([&] { read_number_file(p, "reference mean file"); });
  EXPECT_NE(msg.find("reference mean file '" + p.string() + "', line 2, column 3: 'x4' is not a number"),
            std::string::npos)
      << msg;
  const auto inf = write_file("inf", "1 inf\n");
  msg = error_of([&] { read_number_file(inf, "f"); });
  EXPECT_NE(msg.find("'inf' is not a finite number"), std::string::npos) << msg;
  const auto big = write_file("big", "1e999\n");
  msg = error_of([&] { read_number_file(big, "f"); });
  EXPECT_NE(msg.find("out of the range of a double"), std::string::npos) << msg;
  const auto empty = write_file("empty", " \n\n");
  msg = error_of([&] { read_number_file(empty, "f"); });
  EXPECT_NE(msg.find("contains no numbers"), std::string::npos) << msg;
  msg = error_of([&] { read_number_vector(p, 4, "f"); });  // 1 2 / 3 x4: fails on x4 first
  EXPECT_NE(msg.find("'x4'"), std::string::npos) << msg;
  const auto three = write_file("three", "1 2 3");
  msg = error_of([&] { read_number_vector(three, 4, "sampler.x.mean_file"); });
  EXPECT_NE(msg.find("expected 4 numbers, found 3"), std::string::npos) << msg;
  EXPECT_THROW(read_number_file(fs::path(::testing::TempDir()) / "no-such-file", "f"), IoError);
  for (const auto& f : {p, inf, big, empty, three}) fs::remove(f);
}

}  // namespace
}  // namespace pemc
