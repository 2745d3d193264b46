#include "targets/boltzmann_machine.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "rng/stream.hpp"

namespace pemc::targets {
namespace {

struct NumberFile {
  std::vector<double> values;
  std::vector<std::pair<int, int>> line_counts;  // (line number, numbers on it) for non-empty lines
};

std::string describe(const std::filesystem::path& file, const char* what) {
  return std::string(what) + " '" + file.string() + "'";
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

NumberFile read_numbers(const std::filesystem::path& file, const char* what) {
  std::ifstream in(file);
  if (!in) throw IoError("cannot open " + describe(file, what));
  NumberFile out;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    int on_line = 0;
    std::size_t pos = 0;
    while (pos < line.size()) {
      while (pos < line.size() && is_space(line[pos])) ++pos;
      if (pos >= line.size()) break;
      std::size_t end = pos;
      while (end < line.size() && !is_space(line[end])) ++end;
      const std::string_view token(line.data() + pos, end - pos);
      // from_chars rejects a leading '+', which text writers commonly emit.
      const std::size_t skip = (token.size() > 1 && token[0] == '+') ? 1 : 0;
      double v = 0.0;
      const auto res = std::from_chars(token.data() + skip, token.data() + token.size(), v);
      const auto where = [&] {
        return describe(file, what) + ", line " + std::to_string(line_no) + ", column " +
               std::to_string(pos + 1) + ": '" + std::string(token) + "'";
      };
      if (res.ec == std::errc::result_out_of_range)
        throw DataError(where() + " is out of the range of a double");
      if (res.ec != std::errc() || res.ptr != token.data() + token.size())
        throw DataError(where() + " is not a number");
      if (!std::isfinite(v)) throw DataError(where() + " is not a finite number");
      out.values.push_back(v);
      ++on_line;
      pos = end;
    }
    if (on_line > 0) out.line_counts.emplace_back(line_no, on_line);
  }
  if (in.bad()) throw IoError("error reading " + describe(file, what));
  if (out.values.empty()) throw DataError(describe(file, what) + " contains no numbers");
  return out;
}

// " (rows are ragged: line 1 has 3 numbers, line 3 has 2)" when non-empty lines differ in length.
std::string ragged_hint(const NumberFile& f) {
  if (f.line_counts.size() < 2) return "";
  const int first = f.line_counts.front().second;
  for (const auto& [line, count] : f.line_counts) {
    if (count != first) {
      return " (rows are ragged: line " + std::to_string(f.line_counts.front().first) + " has " +
             std::to_string(first) + " numbers, line " + std::to_string(line) + " has " +
             std::to_string(count) + ")";
    }
  }
  return "";
}

}  // namespace

BoltzmannMachine load_boltzmann_machine(const std::filesystem::path& w_file,
                                        const std::filesystem::path& b_file) {
  const NumberFile wf = read_numbers(w_file, "boltzmann weights file");
  const std::size_t count = wf.values.size();
  const auto n = static_cast<Eigen::Index>(std::llround(std::sqrt(static_cast<double>(count))));
  if (static_cast<std::size_t>(n * n) != count)
    throw DataError(describe(w_file, "boltzmann weights file") + ": " + std::to_string(count) +
                    " numbers is not a square d_b x d_b matrix" + ragged_hint(wf));
  const NumberFile bf = read_numbers(b_file, "boltzmann bias file");
  if (static_cast<Eigen::Index>(bf.values.size()) != n)
    throw DataError(describe(b_file, "boltzmann bias file") + ": " +
                    std::to_string(bf.values.size()) + " numbers, but the weights file '" +
                    w_file.string() + "' has d_b = " + std::to_string(n));

  BoltzmannMachine m;
  m.W.resize(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) m.W(i, j) = wf.values[static_cast<std::size_t>(i * n + j)];
  m.b = Eigen::Map<const Vector>(bf.values.data(), n);

  const double tol = 1e-9 * std::max(1.0, m.W.cwiseAbs().maxCoeff());
  Eigen::Index wi = 0, wj = 0;
  const double asym = (m.W - m.W.transpose()).cwiseAbs().maxCoeff(&wi, &wj);
  if (asym > tol) {
    std::ostringstream os;
    os.precision(17);
    os << describe(w_file, "boltzmann weights file") << ": W is not symmetric: W(" << wi << ","
       << wj << ") = " << m.W(wi, wj) << " but W(" << wj << "," << wi << ") = " << m.W(wj, wi)
       << " (0-based row,column; tolerance " << tol << ")";
    throw DataError(os.str());
  }
  Eigen::Index di = 0;
  const double diag = m.W.diagonal().cwiseAbs().maxCoeff(&di);
  if (diag > tol) {
    std::ostringstream os;
    os.precision(17);
    os << describe(w_file, "boltzmann weights file") << ": the diagonal must be zero, but W(" << di
       << "," << di << ") = " << m.W(di, di) << " (0-based)";
    throw DataError(os.str());
  }
  m.W = (0.5 * (m.W + m.W.transpose())).eval();
  m.W.diagonal().setZero();
  return m;
}

Matrix load_matrix_with_rows(const std::filesystem::path& file, Eigen::Index rows,
                             const char* what) {
  const NumberFile f = read_numbers(file, what);
  const auto count = static_cast<Eigen::Index>(f.values.size());
  if (rows < 1 || count % rows != 0)
    throw DataError(describe(file, what) + ": " + std::to_string(count) +
                    " numbers do not form " + std::to_string(rows) + " rows" + ragged_hint(f));
  const Eigen::Index cols = count / rows;
  Matrix out(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) out(i, j) = f.values[static_cast<std::size_t>(i * cols + j)];
  return out;
}

BoltzmannMachine generate_boltzmann_machine(std::uint64_t seed, int n_units, double scale_hi,
                                            double scale_lo, double bias_scale) {
  if (n_units < 2)
    throw ConfigError("boltzmann generator: n_units must be >= 2, got " + std::to_string(n_units));
  if (!(std::isfinite(scale_hi) && scale_hi >= 0) || !(std::isfinite(scale_lo) && scale_lo >= 0) ||
      !(std::isfinite(bias_scale) && bias_scale >= 0))
    throw ConfigError("boltzmann generator: weight_scale_hi, weight_scale_lo and bias_scale must "
                      "be finite and >= 0");
  const Eigen::Index n = n_units;
  rng::Stream stream(seed, rng::Domain::kGenerator, 0, 0);
  Matrix G(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) G(i, j) = stream.normal();
  Eigen::HouseholderQR<Matrix> qr(G);
  Matrix R = qr.householderQ() * Matrix::Identity(n, n);
  // Fixing the signs so that the triangular factor has a positive diagonal makes R Haar-distributed.
  for (Eigen::Index j = 0; j < n; ++j)
    if (qr.matrixQR()(j, j) < 0) R.col(j) = -R.col(j);
  Vector e(n);
  for (Eigen::Index i = 0; i < n; ++i) e[i] = scale_hi * std::tanh(scale_lo * stream.normal());
  const Matrix V = R * e.asDiagonal() * R.transpose();
  BoltzmannMachine m;
  m.W = 0.5 * (V + V.transpose());
  m.W.diagonal().setZero();
  m.b.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) m.b[i] = bias_scale * stream.normal();
  return m;
}

}  // namespace pemc::targets
