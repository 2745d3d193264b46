#pragma once
// Sparse logistic regression with the regularised horseshoe prior of Piironen & Vehtari (2017),
// the model of the pseudo-extended paper, Section 4.3 and supplement E (prior as in
// /work/shared/data/README.md):
//
//   z_j ~ N(0, 1),  lambda_j ~ C+(0, 1),  tau ~ C+(0, tau0),  tau0 = p0/(p - p0) * sigma/sqrt(n),
//   caux ~ InvGamma(slab_df/2, slab_df/2),  c = slab_scale * sqrt(caux),
//   lambda~_j^2 = c^2 lambda_j^2 / (c^2 + tau^2 lambda_j^2),  beta_j = z_j lambda~_j tau,
//   intercept ~ N(0, intercept_scale^2),  y_i ~ Bernoulli(logistic(intercept + x_i' beta)),
//
// with p covariates and n training rows.
//
// Unconstrained state (dim = 2p + 3), in this order:
//   [0]             intercept
//   [1, p]          z_1..z_p
//   [p+1, 2p]       log lambda_1..log lambda_p
//   [2p+1]          log tau
//   [2p+2]          log caux
// potential = -(log prior + log likelihood + log Jacobian of the log transforms), including every
// normalising constant, so exp(-potential) integrates to the marginal likelihood of the training set.
//
// The data rows are split once, at construction, into a training set (the likelihood) and a test
// set (held-out log predictive density) by a seeded permutation: Fisher-Yates (i = rows-1 .. 1,
// swap i with Stream::below(i + 1)) on rng::Stream(split_seed, Domain::kDataSplit, 0, 0); the
// first round(train_fraction * rows) permuted rows train, the rest test; both index lists are
// then sorted ascending.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "targets/csv.hpp"
#include "targets/target.hpp"

namespace pemc::v1 {
class HorseshoeLogisticTarget;
}

namespace pemc::targets {

struct HorseshoeLogisticOptions {
  std::uint64_t split_seed = 0;
  double train_fraction = 0.8;  // in (0, 1]; at least one training row
  double p0 = 0.0;              // required: prior guess of the number of relevant covariates, (0, p)
  double sigma = 2.0;           // pseudo-sigma of the logistic model in tau0
  double slab_scale = 2.0;
  double slab_df = 3.0;
  double intercept_scale = 10.0;
};

class HorseshoeLogistic final : public Target {
 public:
  // data: first column the label y (exactly 0 or 1), the others the covariates. Throws DataError
  // for a bad label (naming data.source, line and column 1) and ConfigError for bad options.
  HorseshoeLogistic(const CsvTable& data, const HorseshoeLogisticOptions& options);

  int dim() const override { return static_cast<int>(2 * p_ + 3); }
  std::string name() const override { return "horseshoe_logistic"; }
  double potential(ConstVectorRef x) const override;
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;
  // Intercept 0, z = 0, lambda = 1, tau = tau0, caux = 1 (the prior medians, up to caux's): a start
  // inside the shrunk regime rather than at the config's generic uniform box.
  std::optional<Vector> default_initial_point() const override;

  // The held-out hook of Target: the test rows, in test_rows() order; log_predictive writes
  // log p(y_i | theta) for each (the same values as test_log_likelihoods, without allocating).
  int n_test_points() const override { return static_cast<int>(x_test_.rows()); }
  void log_predictive(ConstVectorRef theta, std::span<double> out) const override;

  // log p(y_i | theta) for every test row i (in test_rows() order).
  Vector test_log_likelihoods(ConstVectorRef theta) const;
  // sum_i log( (1/S) sum_s p(y_i | theta_s) ) over the test rows (log-sum-exp per row).
  double log_predictive_density(const std::vector<Vector>& draws) const;
  // The regression coefficients beta (p entries) of an unconstrained state.
  Vector coefficients(ConstVectorRef theta) const;

  Eigen::Index n_covariates() const { return p_; }
  Eigen::Index n_train() const { return x_train_.rows(); }
  Eigen::Index n_test() const { return x_test_.rows(); }
  // 0-based data-row indices (row r of the file is line r + 2), ascending.
  const std::vector<Eigen::Index>& train_rows() const { return train_rows_; }
  const std::vector<Eigen::Index>& test_rows() const { return test_rows_; }
  double tau0() const { return tau0_; }
  const HorseshoeLogisticOptions& options() const { return options_; }

 private:
  // Fills q_, one_minus_w_ (c^2 / (c^2 + tau^2 lambda_j^2)), scale_ (tau lambda~_j), beta_ and
  // exp_m2abs_ (e^{-2 |log lambda_j|}); returns the prior + Jacobian part of the potential.
  double prior_part(ConstVectorRef x) const;

  HorseshoeLogisticOptions options_;
  Eigen::Index p_ = 0;
  Matrix x_train_;  // n x p, column-major
  Matrix x_test_;
  Vector sign_train_;  // 2y - 1, so -log p(y | eta) = log1pexp(-sign * eta)
  Vector sign_test_;
  std::vector<Eigen::Index> train_rows_, test_rows_;
  double tau0_ = 0.0;
  double log_tau0_ = 0.0;
  double log_slab_scale_ = 0.0;
  double constant_ = 0.0;  // every x-independent term of the potential

  // Scratch, reused by every call (no allocation per evaluation).
  mutable Eigen::ArrayXd q_, one_minus_w_, scale_, beta_, exp_m2abs_, gb_;
  mutable Vector eta_, resid_, xt_resid_, eta_test_;
};

// Loads options.data_file and builds the target; unset (zero) fields take the defaults documented
// in config.proto (train_fraction 0.8, sigma 2, slab_scale 2, slab_df 3, intercept_scale 10).
// p0 is required and must be in (0, p).
std::shared_ptr<const HorseshoeLogistic> make_horseshoe_logistic(
    const pemc::v1::HorseshoeLogisticTarget& config);

}  // namespace pemc::targets
