#include "targets/horseshoe_logistic.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <span>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "pemc/v1/config.pb.h"
#include "rng/stream.hpp"

namespace pemc::targets {
namespace {

void require_positive(double value, const char* field) {
  if (!(value > 0.0) || !std::isfinite(value))
    throw ConfigError(std::string("horseshoe_logistic.") + field + " must be a finite number > 0, got " +
                      fmt::format("{}", value));
}

}  // namespace

HorseshoeLogistic::HorseshoeLogistic(const CsvTable& data, const HorseshoeLogisticOptions& options)
    : options_(options) {
  const Eigen::Index rows = data.values.rows();
  const Eigen::Index cols = data.values.cols();
  if (cols < 2)
    throw DataError(data.source + ": horseshoe_logistic needs a label column and at least one covariate, got " +
                    std::to_string(cols) + " column(s)");
  if (rows < 1) throw DataError(data.source + ": no data rows");
  p_ = cols - 1;
  const std::string label_name = data.header.empty() ? std::string("y") : data.header[0];
  for (Eigen::Index r = 0; r < rows; ++r) {
    const double y = data.values(r, 0);
    if (y != 0.0 && y != 1.0)
      throw DataError(data.source + ": line " + std::to_string(CsvTable::line_of_row(r)) + ", column 1 ('" +
                      label_name + "'): label " + fmt::format("{}", y) + " is not exactly 0 or 1");
  }

  if (!(options.train_fraction > 0.0 && options.train_fraction <= 1.0))
    throw ConfigError("horseshoe_logistic.train_fraction must be in (0, 1], got " +
                      fmt::format("{}", options.train_fraction));
  require_positive(options.p0, "p0");
  require_positive(options.sigma, "sigma");
  require_positive(options.slab_scale, "slab_scale");
  require_positive(options.slab_df, "slab_df");
  require_positive(options.intercept_scale, "intercept_scale");
  if (options.p0 >= static_cast<double>(p_))
    throw ConfigError("horseshoe_logistic.p0 = " + fmt::format("{}", options.p0) +
                      " must be smaller than the number of covariates p = " + std::to_string(p_) + " (" +
                      data.source + ")");
  const auto n_train = static_cast<Eigen::Index>(std::llround(options.train_fraction * static_cast<double>(rows)));
  if (n_train < 1)
    throw ConfigError("horseshoe_logistic.train_fraction = " + fmt::format("{}", options.train_fraction) +
                      " leaves no training rows out of " + std::to_string(rows));

  // Seeded split (see the header): Fisher-Yates driven by the kDataSplit stream.
  std::vector<Eigen::Index> perm(static_cast<std::size_t>(rows));
  std::iota(perm.begin(), perm.end(), Eigen::Index{0});
  rng::Stream stream(options.split_seed, rng::Domain::kDataSplit, 0, 0);
  for (std::size_t i = perm.size() - 1; i > 0; --i) std::swap(perm[i], perm[stream.below(i + 1)]);
  train_rows_.assign(perm.begin(), perm.begin() + n_train);
  test_rows_.assign(perm.begin() + n_train, perm.end());
  std::sort(train_rows_.begin(), train_rows_.end());
  std::sort(test_rows_.begin(), test_rows_.end());

  const auto fill = [&](const std::vector<Eigen::Index>& idx, Matrix& x, Vector& sign) {
    const auto m = static_cast<Eigen::Index>(idx.size());
    x.resize(m, p_);
    sign.resize(m);
    for (Eigen::Index i = 0; i < m; ++i) {
      x.row(i) = data.values.row(idx[static_cast<std::size_t>(i)]).tail(p_);
      sign[i] = 2.0 * data.values(idx[static_cast<std::size_t>(i)], 0) - 1.0;
    }
  };
  fill(train_rows_, x_train_, sign_train_);
  fill(test_rows_, x_test_, sign_test_);

  const double n = static_cast<double>(n_train);
  const double p = static_cast<double>(p_);
  tau0_ = options.p0 / (p - options.p0) * options.sigma / std::sqrt(n);
  log_tau0_ = std::log(tau0_);
  log_slab_scale_ = std::log(options.slab_scale);

  // x-independent terms of -log prior: N(0,1) for z, C+(0,1) for lambda (density 2/(pi(1+l^2))),
  // C+(0,tau0) for tau, InvGamma(a, a) for caux, N(0, s^2) for the intercept.
  const double half_log_2pi = 0.5 * kLog2Pi;
  const double log_half_pi = std::log(std::numbers::pi / 2.0);
  const double a = 0.5 * options.slab_df;
  constant_ = p * half_log_2pi + p * log_half_pi + (log_half_pi + log_tau0_) + (std::lgamma(a) - a * std::log(a)) +
              (half_log_2pi + std::log(options.intercept_scale));

  q_.resize(p_);
  one_minus_w_.resize(p_);
  scale_.resize(p_);
  beta_.resize(p_);
  exp_m2abs_.resize(p_);
  gb_.resize(p_);
  eta_.resize(x_train_.rows());
  resid_.resize(x_train_.rows());
  xt_resid_.resize(p_);
  eta_test_.resize(x_test_.rows());
}

double HorseshoeLogistic::prior_part(ConstVectorRef x) const {
  // Array expressions over the p coordinates so that Eigen vectorises exp/log1p: this O(p) part
  // would otherwise cost as much as the O(n p) likelihood.
  const Eigen::Index p = p_;
  const auto z = x.segment(1, p).array();
  const auto log_lambda = x.segment(1 + p, p).array();
  const double b0 = x[0];
  const double log_tau = x[2 * p + 1];
  const double log_caux = x[2 * p + 2];
  const double log_c = log_slab_scale_ + 0.5 * log_caux;
  const double c = std::exp(log_c);
  // q = tau lambda / c; then w = q^2/(1+q^2) = tau^2 lambda^2/(c^2 + tau^2 lambda^2) and
  // tau lambda~ = c q / sqrt(1 + q^2). Capping q at 1e150 keeps q^2 finite; beyond it w is 1 and
  // tau lambda~ is c to double precision anyway.
  q_ = (log_lambda + (log_tau - log_c)).exp().min(1e150);
  one_minus_w_ = 1.0 / (1.0 + q_.square());
  scale_ = c * q_ * one_minus_w_.sqrt();
  beta_ = z * scale_;
  // -log C+(lambda; 0, 1) - log lambda = log1p(lambda^2) - log lambda + const, with
  // log1p(e^{2u}) = max(2u, 0) + log1p(e^{-2|u|}); e^{-2|u|} is kept for tanh(u) in the gradient.
  exp_m2abs_ = (-2.0 * log_lambda.abs()).exp();
  double u = 0.5 * z.square().sum() + (2.0 * log_lambda).max(0.0).sum() + exp_m2abs_.log1p().sum() -
             log_lambda.sum();
  const double half_df = 0.5 * options_.slab_df;
  u += log1pexp(2.0 * (log_tau - log_tau0_)) - log_tau;     // C+(0, tau0), Jacobian tau
  u += half_df * log_caux + half_df * std::exp(-log_caux);  // InvGamma(a, a), Jacobian caux
  const double s = options_.intercept_scale;
  u += 0.5 * (b0 / s) * (b0 / s);
  return u + constant_;
}

double HorseshoeLogistic::potential(ConstVectorRef x) const {
  double u = prior_part(x);
  eta_.noalias() = x_train_ * beta_.matrix();
  const double b0 = x[0];
  for (Eigen::Index i = 0; i < eta_.size(); ++i) u += log1pexp(-sign_train_[i] * (eta_[i] + b0));
  return u;
}

double HorseshoeLogistic::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  const Eigen::Index p = p_;
  double u = prior_part(x);
  eta_.noalias() = x_train_ * beta_.matrix();
  const double b0 = x[0];
  double sum_resid = 0.0;
  for (Eigen::Index i = 0; i < eta_.size(); ++i) {
    const double m = -sign_train_[i] * (eta_[i] + b0);
    u += log1pexp(m);
    resid_[i] = -sign_train_[i] * logistic(m);  // d(-log p(y_i | eta_i)) / d eta_i
    sum_resid += resid_[i];
  }
  xt_resid_.noalias() = x_train_.transpose() * resid_;  // g = d(-log lik) / d beta

  const double s = options_.intercept_scale;
  grad[0] = b0 / (s * s) + sum_resid;
  const auto g = xt_resid_.array();
  const auto log_lambda = x.segment(1 + p, p).array();
  // d beta_j / d z_j = tau lambda~_j; d log(tau lambda~_j) / d log lambda_j = d / d log tau = 1 - w_j,
  // d / d log caux = w_j / 2.
  gb_ = g * beta_;
  grad.segment(1, p).array() = x.segment(1, p).array() + g * scale_;
  // d(log1p(lambda^2) - log lambda) / d log lambda = tanh(log lambda) = sign(u)(1 - e^{-2|u|})/(1 + e^{-2|u|}).
  grad.segment(1 + p, p).array() =
      log_lambda.sign() * (1.0 - exp_m2abs_) / (1.0 + exp_m2abs_) + gb_ * one_minus_w_;
  const double d_log_tau = (gb_ * one_minus_w_).sum();
  const double d_log_caux = (gb_ * q_.square() * one_minus_w_).sum();  // w = q^2 (1 - w)
  const double log_tau = x[2 * p + 1];
  const double log_caux = x[2 * p + 2];
  grad[2 * p + 1] = std::tanh(log_tau - log_tau0_) + d_log_tau;
  const double half_df = 0.5 * options_.slab_df;
  grad[2 * p + 2] = half_df - half_df * std::exp(-log_caux) + 0.5 * d_log_caux;
  return u;
}

std::optional<Vector> HorseshoeLogistic::default_initial_point() const {
  Vector x = Vector::Zero(dim());
  x[2 * p_ + 1] = log_tau0_;
  return x;
}

Vector HorseshoeLogistic::coefficients(ConstVectorRef theta) const {
  if (theta.size() != dim())
    throw NumericalError("horseshoe_logistic: state has " + std::to_string(theta.size()) + " entries, expected " +
                         std::to_string(dim()));
  prior_part(theta);
  return beta_.matrix();
}

Vector HorseshoeLogistic::test_log_likelihoods(ConstVectorRef theta) const {
  const Vector beta = coefficients(theta);
  Vector ll = x_test_ * beta;
  for (Eigen::Index i = 0; i < ll.size(); ++i) ll[i] = -log1pexp(-sign_test_[i] * (ll[i] + theta[0]));
  return ll;
}

void HorseshoeLogistic::log_predictive(ConstVectorRef theta, std::span<double> out) const {
  if (theta.size() != dim())
    throw NumericalError("horseshoe_logistic: state has " + std::to_string(theta.size()) + " entries, expected " +
                         std::to_string(dim()));
  if (static_cast<Eigen::Index>(out.size()) != n_test())
    throw NumericalError("horseshoe_logistic: log_predictive output has " + std::to_string(out.size()) +
                         " entries, expected the " + std::to_string(n_test()) + " test rows");
  prior_part(theta);  // fills beta_
  eta_test_.noalias() = x_test_ * beta_.matrix();
  for (Eigen::Index i = 0; i < eta_test_.size(); ++i)
    out[static_cast<std::size_t>(i)] = -log1pexp(-sign_test_[i] * (eta_test_[i] + theta[0]));
}

double HorseshoeLogistic::log_predictive_density(const std::vector<Vector>& draws) const {
  if (draws.empty()) throw NumericalError("horseshoe_logistic: log predictive density needs at least one draw");
  const auto n_draws = static_cast<Eigen::Index>(draws.size());
  Matrix ll(n_draws, n_test());  // column i: log p(y_i | theta_s) over draws s
  for (Eigen::Index s = 0; s < n_draws; ++s) ll.row(s) = test_log_likelihoods(draws[static_cast<std::size_t>(s)]);
  const double log_s = std::log(static_cast<double>(n_draws));
  double lpd = 0.0;
  for (Eigen::Index i = 0; i < ll.cols(); ++i)
    lpd += log_sum_exp(std::span<const double>(ll.col(i).data(), static_cast<std::size_t>(n_draws))) - log_s;
  return lpd;
}

std::shared_ptr<const HorseshoeLogistic> make_horseshoe_logistic(const pemc::v1::HorseshoeLogisticTarget& config) {
  if (config.data_file().empty()) throw ConfigError("horseshoe_logistic.data_file is required");
  if (config.p0() == 0.0)
    throw ConfigError("horseshoe_logistic.p0 is required (prior guess of the number of relevant covariates; "
                      "the paper uses colon 3, leukemia 55, prostate 200)");
  // proto3 scalars without `optional`: zero means unset, so zero takes the documented default.
  const auto or_default = [](double v, double d) { return v == 0.0 ? d : v; };
  HorseshoeLogisticOptions o;
  o.split_seed = config.split_seed();
  o.train_fraction = or_default(config.train_fraction(), 0.8);
  o.p0 = config.p0();
  o.sigma = or_default(config.sigma(), 2.0);
  o.slab_scale = or_default(config.slab_scale(), 2.0);
  o.slab_df = or_default(config.slab_df(), 3.0);
  o.intercept_scale = or_default(config.intercept_scale(), 10.0);
  return std::make_shared<const HorseshoeLogistic>(load_numeric_csv(config.data_file()), o);
}

}  // namespace pemc::targets
