#include "targets/csv.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "core/error.hpp"

namespace pemc::targets {
namespace {

std::string fixture(const std::string& name) { return std::string(PEMC_SOURCE_DIR) + "/tests/data/csv/" + name; }

// Loads `name` expecting an exception of type E whose message contains every fragment.
template <class E>
void expect_error(const std::string& name, std::initializer_list<std::string> fragments, CsvOptions options = {}) {
  const std::string path = fixture(name);
  try {
    load_numeric_csv(path, options);
    ADD_FAILURE() << name << ": no exception";
  } catch (const E& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << "message does not name the file: " << msg;
    for (const auto& f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "missing '" << f << "' in: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << name << ": wrong exception type: " << e.what();
  }
}

template <class E>
void expect_error_at(const std::string& path, std::initializer_list<std::string> fragments,
                     CsvOptions options = {}) {
  try {
    load_numeric_csv(path, options);
    ADD_FAILURE() << path << ": no exception";
  } catch (const E& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << "message does not name the file: " << msg;
    for (const auto& f : fragments)
      EXPECT_NE(msg.find(f), std::string::npos) << "missing '" << f << "' in: " << msg;
  }
}

TEST(Csv, LoadsWellFormedFile) {
  const CsvTable t = load_numeric_csv(fixture("ok.csv"));
  EXPECT_EQ(t.source, fixture("ok.csv"));
  ASSERT_EQ(t.header, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(t.values.rows(), 3);
  ASSERT_EQ(t.values.cols(), 3);
  Matrix expected(3, 3);
  expected << 1, 2.5, -3e-2, 4, 5, 6, -0.125, 7, 1e3;
  EXPECT_EQ(t.values, expected);  // exact: from_chars is correctly rounded
  EXPECT_EQ(t.column_index("c"), 2);
  EXPECT_EQ(t.column_index("zz"), -1);
  EXPECT_EQ(CsvTable::line_of_row(0), 2);
}

TEST(Csv, AcceptsCrlfAndMissingFinalNewline) {
  const CsvTable t = load_numeric_csv(fixture("ok_crlf.csv"));
  ASSERT_EQ(t.header, (std::vector<std::string>{"x", "y"}));
  Matrix expected(2, 2);
  expected << 1, 2, 3, 4;
  EXPECT_EQ(t.values, expected);
}

TEST(Csv, LoadsRealMicroarrayData) {
  const CsvTable t = load_numeric_csv(std::string(PEMC_SHARED_DIR) + "/data/microarray/colon.csv");
  EXPECT_EQ(t.values.rows(), 62);
  EXPECT_EQ(t.values.cols(), 2001);
  EXPECT_EQ(t.header.front(), "y");
  EXPECT_EQ(t.header.back(), "g2000");
  EXPECT_EQ(t.values.col(0).sum(), 22.0);  // README: class counts 22/40 (22 ones)
  EXPECT_EQ((t.values.col(0).array() == 0.0).count(), 40);
}

TEST(Csv, RaggedRowsSayExpectedAndGot) {
  expect_error<DataError>("ragged_short.csv", {"line 3", "expected 3 cells", "got 2"});
  expect_error<DataError>("ragged_long.csv", {"line 2", "expected 3 cells", "got 4"});
}

TEST(Csv, NonNumericCellsAreQuotedWithRowAndColumn) {
  expect_error<DataError>("non_numeric.csv", {"line 3", "column 2 ('b')", "'abc'", "not a number"});
  expect_error<DataError>("trailing_garbage.csv", {"line 2", "column 2 ('b')", "'2x'", "not a number"});
  expect_error<DataError>("empty_cell.csv", {"line 2", "column 2 ('b')", "empty cell"});
}

TEST(Csv, NonFiniteAndOutOfRangeCellsAreRefused) {
  expect_error<DataError>("nan.csv", {"line 2", "column 2 ('b')", "'nan'", "not finite"});
  expect_error<DataError>("inf.csv", {"line 2", "column 1 ('a')", "'-inf'", "not finite"});
  expect_error<DataError>("out_of_range.csv", {"line 2", "column 1 ('a')", "'1e999'", "outside the range"});
}

TEST(Csv, StructuralErrors) {
  expect_error<DataError>("empty.csv", {"empty file"});
  expect_error<DataError>("header_only.csv", {"no data rows"});
  expect_error<DataError>("blank_line.csv", {"line 3", "blank line"});
  expect_error<DataError>("duplicate_header.csv", {"line 1", "column 3", "duplicate column name 'a'"});
  expect_error<DataError>("empty_header.csv", {"line 1", "column 2", "empty column name"});
}

TEST(Csv, UnreadableFileReportsStrerror) {
  expect_error<IoError>("does_not_exist.csv", {"cannot open", "No such file or directory"});
  // A directory opens fine with O_RDONLY but is not a file.
  const std::string dir = std::string(PEMC_SOURCE_DIR) + "/tests/data/csv";
  try {
    load_numeric_csv(dir);
    ADD_FAILURE() << "no exception for a directory";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
}

TEST(Csv, RefusesFilesAboveTheSizeLimitBeforeReading) {
  CsvOptions small;
  small.max_bytes = 10;  // ok.csv is 40 bytes
  expect_error<DataError>("ok.csv", {"40 bytes", "limit of 10 bytes", "max_bytes"}, small);
  small.max_bytes = 40;  // exactly at the limit is fine
  EXPECT_NO_THROW(load_numeric_csv(fixture("ok.csv"), small));
}

// Issue 29, item 5: limits are checked while streaming, before the table is allocated.
struct TempCsv {
  std::string path = ::testing::TempDir() + "pemc_csv_" + std::to_string(::getpid()) + "_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".csv";
  explicit TempCsv(const std::string& content) { std::ofstream(path, std::ios::binary) << content; }
  ~TempCsv() { std::remove(path.c_str()); }
};

TEST(Csv, StreamsLinesAcrossReadChunks) {
  // ~3.5 MB: lines cross the reader's 1 MiB chunks, some with CRLF.
  std::string text = "i,half\r\n";
  const int n = 300000;
  for (int i = 0; i < n; ++i)
    text += std::to_string(i) + "," + std::to_string(i) + ".5" + (i % 3 ? "\n" : "\r\n");
  text += "\n  \n";  // trailing blank lines are allowed
  TempCsv f(text);
  const auto t = load_numeric_csv(f.path);
  ASSERT_EQ(t.values.rows(), n);
  ASSERT_EQ(t.values.cols(), 2);
  for (int i : {0, 1, 123456, n - 1}) {
    EXPECT_EQ(t.values(i, 0), i);
    EXPECT_EQ(t.values(i, 1), i + 0.5);
  }
}

TEST(Csv, RefusesTooManyNumbersWhileStreaming) {
  std::string text = "a,b\n";
  for (int i = 0; i < 200000; ++i) text += "0.5,1.5\n";
  TempCsv f(text);
  CsvOptions small;
  small.max_values = 1000;
  try {
    load_numeric_csv(f.path, small);
    ADD_FAILURE() << "no exception";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  f.path + ": too much data for a data file: 501 data rows of 2 columns by "
                           "line 502 (of a 1600004-byte file) are more than the limit of 1000 "
                           "numbers (CsvOptions::max_values"),
              std::string::npos)
        << e.what();
  }
  small.max_values = 400000;  // exactly the table
  EXPECT_EQ(load_numeric_csv(f.path, small).values.rows(), 200000);
}

TEST(Csv, RefusesOverlongLinesWithoutReadingOn) {
  TempCsv f("a,b\n1,2\n" + std::string(300, '1') + ",2\n");
  CsvOptions small;
  small.max_line_bytes = 100;
  expect_error_at<DataError>(
      f.path, {"line 3 is longer than 100 bytes (CsvOptions::max_line_bytes)"}, small);
  // A file of zeros (no line break at all), like a sparse file.
  TempCsv zeros(std::string(3u << 20, '\0'));
  small.max_line_bytes = 1u << 20;
  expect_error_at<DataError>(
      zeros.path, {"line 1 is longer than 1048576 bytes", "not a CSV text file?"}, small);
}

TEST(Csv, BlankLinesOnlyIsAnEmptyFile) {
  TempCsv f("\n  \n\r\n");
  expect_error_at<DataError>(f.path, {"empty file"});
  TempCsv g("\na,b\n1,2\n");
  expect_error_at<DataError>(g.path, {"line 1 (header), column 1: empty column name"});
}

}  // namespace
}  // namespace pemc::targets
