#include "targets/boltzmann_machine.hpp"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/number_file.hpp"
#include "rng/stream.hpp"

namespace pemc::targets {
BoltzmannMachine load_boltzmann_machine(const std::filesystem::path& w_file,
                                        const std::filesystem::path& b_file) {
  const NumberFile wf = read_number_file(w_file, "boltzmann weights file");
  const std::size_t count = wf.values.size();
  const auto n = static_cast<Eigen::Index>(std::llround(std::sqrt(static_cast<double>(count))));
  if (static_cast<std::size_t>(n * n) != count)
    throw DataError(describe_number_file(w_file, "boltzmann weights file") + ": " + std::to_string(count) +
                    " numbers is not a square d_b x d_b matrix" + wf.ragged_hint());
  const NumberFile bf = read_number_file(b_file, "boltzmann bias file");
  if (static_cast<Eigen::Index>(bf.values.size()) != n)
    throw DataError(describe_number_file(b_file, "boltzmann bias file") + ": " +
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
    os << describe_number_file(w_file, "boltzmann weights file") << ": W is not symmetric: W(" << wi << ","
       << wj << ") = " << m.W(wi, wj) << " but W(" << wj << "," << wi << ") = " << m.W(wj, wi)
       << " (0-based row,column; tolerance " << tol << ")";
    throw DataError(os.str());
  }
  Eigen::Index di = 0;
  const double diag = m.W.diagonal().cwiseAbs().maxCoeff(&di);
  if (diag > tol) {
    std::ostringstream os;
    os.precision(17);
    os << describe_number_file(w_file, "boltzmann weights file") << ": the diagonal must be zero, but W(" << di
       << "," << di << ") = " << m.W(di, di) << " (0-based)";
    throw DataError(os.str());
  }
  m.W = (0.5 * (m.W + m.W.transpose())).eval();
  m.W.diagonal().setZero();
  return m;
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
