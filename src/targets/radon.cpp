#include "targets/radon.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::targets {
namespace {

constexpr double kScale = 2.5;  // half-Cauchy scale of sigma_alpha, sigma_beta, epsilon

// -log C+(s; 0, kScale) - log s as a function of l = log s, without its constant log(pi kScale / 2).
double half_cauchy_log_scale(double l) { return log1pexp(2.0 * (l - std::log(kScale))) - l; }
// Its derivative in l: 2 logistic(2(l - log kScale)) - 1.
double half_cauchy_log_scale_grad(double l) { return std::tanh(l - std::log(kScale)); }

std::string column_label(const CsvTable& t, Eigen::Index c) {
  return "column " + std::to_string(c + 1) + " ('" + t.header[static_cast<std::size_t>(c)] + "')";
}

}  // namespace

Radon::Radon(const CsvTable& data) {
  const auto find = [&](const char* col) {
    const Eigen::Index c = data.column_index(col);
    if (c < 0) throw DataError(data.source + ": radon data needs a column named '" + col + "' in the header");
    return c;
  };
  const Eigen::Index c_county = find("county");
  const Eigen::Index c_floor = find("floor");
  const Eigen::Index c_uranium = find("log_uranium");
  const Eigen::Index c_y = find("log_radon");
  const Eigen::Index rows = data.values.rows();
  if (rows < 1) throw DataError(data.source + ": no data rows");

  county_.resize(static_cast<std::size_t>(rows));
  int max_county = -1;
  for (Eigen::Index r = 0; r < rows; ++r) {
    const double v = data.values(r, c_county);
    const auto where = [&] {
      return data.source + ": line " + std::to_string(CsvTable::line_of_row(r)) + ", " +
             column_label(data, c_county) + ": county index " + fmt::format("{}", v);
    };
    if (v != std::floor(v) || v < 0.0) throw DataError(where() + " is not a non-negative integer");
    // Every county has at least one row (checked below), so an index >= rows cannot be valid.
    if (v >= static_cast<double>(rows))
      throw DataError(where() + " is not below the number of data rows (" + std::to_string(rows) +
                      "); county indices must be 0-based and contiguous");
    county_[static_cast<std::size_t>(r)] = static_cast<int>(v);
    max_county = std::max(max_county, static_cast<int>(v));
  }
  n_counties_ = max_county + 1;
  std::vector<int> count(static_cast<std::size_t>(n_counties_), 0);
  for (int k : county_) ++count[static_cast<std::size_t>(k)];
  for (Eigen::Index k = 0; k < n_counties_; ++k)
    if (count[static_cast<std::size_t>(k)] == 0)
      throw DataError(data.source + ": " + column_label(data, c_county) + ": county " + std::to_string(k) +
                      " has no rows; county indices must be 0-based and contiguous (0.." +
                      std::to_string(max_county) + " seen)");
  floor_ = data.values.col(c_floor);
  uranium_ = data.values.col(c_uranium);
  y_ = data.values.col(c_y);

  const double n = static_cast<double>(rows);
  const double k = static_cast<double>(n_counties_);
  // Standard normals: mu_alpha, mu_beta, n_alpha (K), n_beta (2); three half-Cauchy scales;
  // the Gaussian likelihood's 0.5 N log 2 pi.
  constant_ = (k + 4.0) * 0.5 * kLog2Pi + 3.0 * std::log(std::numbers::pi * kScale / 2.0) + n * 0.5 * kLog2Pi;
  county_grad_.resize(n_counties_);
}

double Radon::evaluate(ConstVectorRef x, double* grad) const {
  const Eigen::Index K = n_counties_;
  const double mu_alpha = x[0];
  const double log_sigma_alpha = x[1];
  const double sigma_alpha = std::exp(log_sigma_alpha);
  const auto n_alpha = x.segment(2, K);
  const double mu_beta = x[K + 2];
  const double log_sigma_beta = x[K + 3];
  const double sigma_beta = std::exp(log_sigma_beta);
  const double n_beta0 = x[K + 4], n_beta1 = x[K + 5];
  const double log_epsilon = x[K + 6];
  const double inv_var = std::exp(-2.0 * log_epsilon);
  const double beta0 = mu_beta + sigma_beta * n_beta0;
  const double beta1 = mu_beta + sigma_beta * n_beta1;

  double sum_sq = 0.0, b0_grad = 0.0, b1_grad = 0.0;
  if (grad) county_grad_.setZero();
  for (Eigen::Index i = 0; i < y_.size(); ++i) {
    const int c = county_[static_cast<std::size_t>(i)];
    const double r = y_[i] - (mu_alpha + sigma_alpha * n_alpha[c]) - beta0 * floor_[i] - beta1 * uranium_[i];
    sum_sq += r * r;
    if (grad) {
      const double g = -r * inv_var;  // d potential / d yhat_i
      county_grad_[c] += g;
      b0_grad += g * floor_[i];
      b1_grad += g * uranium_[i];
    }
  }
  const double n = static_cast<double>(y_.size());
  double u = 0.5 * sum_sq * inv_var + n * log_epsilon;
  u += 0.5 * (mu_alpha * mu_alpha + mu_beta * mu_beta + n_alpha.squaredNorm() + n_beta0 * n_beta0 +
              n_beta1 * n_beta1);
  u += half_cauchy_log_scale(log_sigma_alpha) + half_cauchy_log_scale(log_sigma_beta) +
       half_cauchy_log_scale(log_epsilon);
  u += constant_;

  if (grad) {
    grad[0] = mu_alpha + county_grad_.sum();
    grad[1] = half_cauchy_log_scale_grad(log_sigma_alpha) + sigma_alpha * county_grad_.dot(n_alpha);
    for (Eigen::Index k = 0; k < K; ++k) grad[2 + k] = n_alpha[k] + sigma_alpha * county_grad_[k];
    grad[K + 2] = mu_beta + b0_grad + b1_grad;
    grad[K + 3] = half_cauchy_log_scale_grad(log_sigma_beta) + sigma_beta * (b0_grad * n_beta0 + b1_grad * n_beta1);
    grad[K + 4] = n_beta0 + sigma_beta * b0_grad;
    grad[K + 5] = n_beta1 + sigma_beta * b1_grad;
    grad[K + 6] = half_cauchy_log_scale_grad(log_epsilon) - sum_sq * inv_var + n;
  }
  return u;
}

double Radon::potential(ConstVectorRef x) const { return evaluate(x, nullptr); }

double Radon::potential_and_gradient(ConstVectorRef x, VectorRef grad) const { return evaluate(x, grad.data()); }

std::shared_ptr<const Radon> make_radon(const pemc::v1::RadonTarget& config) {
  if (config.data_file().empty()) throw ConfigError("radon.data_file is required");
  return std::make_shared<const Radon>(load_numeric_csv(config.data_file()));
}

}  // namespace pemc::targets
