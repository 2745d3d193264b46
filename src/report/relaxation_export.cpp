#include "report/relaxation_export.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.hpp"
#include "targets/boltzmann.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;

const targets::BoltzmannRelaxation& relaxation_of(const targets::Target& target) {
  const auto* r = dynamic_cast<const targets::BoltzmannRelaxation*>(&target);
  if (!r)
    throw ConfigError("truth --write-relaxation: the config's target is '" + target.name() +
                      "', not a Boltzmann relaxation (target.boltzmann)");
  return *r;
}

void write_text(const fs::path& path, const std::string& text, std::vector<fs::path>& written) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw IoError("truth --write-relaxation: cannot write " + path.string());
  written.push_back(path);
}

std::string rows(const Matrix& m) {
  std::string s;
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      if (j) s += ' ';
      s += fmt::format("{:.17g}", m(i, j));
    }
    s += "\n";
  }
  return s;
}

}  // namespace

void prepare_relaxation_dir(const targets::Target& target, const fs::path& dir, bool overwrite) {
  (void)relaxation_of(target);
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      throw ConfigError("truth --write-relaxation " + dir.string() + ": exists and is not a directory");
    if (!fs::is_empty(dir, ec) && !overwrite)
      throw ConfigError("truth --write-relaxation " + dir.string() +
                        ": the directory already holds files; choose an empty or new directory, "
                        "or pass --overwrite to replace files of the same names");
    return;
  }
  fs::create_directories(dir, ec);
  if (ec)
    throw IoError("truth --write-relaxation " + dir.string() + ": cannot create it: " + ec.message());
}

std::vector<fs::path> write_relaxation(const targets::Target& target, const fs::path& dir,
                                       std::optional<double> log_z) {
  const auto& r = relaxation_of(target);
  std::vector<fs::path> written;
  write_text(dir / "Q.txt", rows(r.q()), written);
  write_text(dir / "b.txt", rows(r.b().transpose()), written);
  write_text(dir / "D.txt", rows(r.diagonal().transpose()), written);
  Matrix w = r.q() * r.q().transpose();
  w.diagonal().setZero();
  write_text(dir / "W.txt", rows(w), written);

  nlohmann::ordered_json j;
  j["potential"] = "phi(x) = x'x / 2 - sum_k log cosh(q_k'x + b_k), q_k = row k of Q";
  j["n_units"] = r.n_units();
  j["dim"] = r.dim();
  j["factor_residual"] = r.factor_residual();
  j["trace_d"] = r.diagonal().sum();
  if (log_z) j["log_z"] = *log_z;
  j["files"] = {{"Q", "Q.txt"}, {"b", "b.txt"}, {"D", "D.txt"}, {"W", "W.txt"}};
  write_text(dir / "relaxation.json", j.dump(2) + "\n", written);
  return written;
}

}  // namespace pemc::report
