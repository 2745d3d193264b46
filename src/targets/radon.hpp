#pragma once
// Hierarchical regression for the radon data (continuous tempering paper, Section 7.3, model as in
// /work/shared/data/README.md), non-centred:
//
//   sigma_alpha ~ C+(2.5),  mu_alpha ~ N(0, 1),  n_alpha ~ N(0, I_K),  alpha = mu_alpha + sigma_alpha n_alpha,
//   sigma_beta  ~ C+(2.5),  mu_beta  ~ N(0, 1),  n_beta  ~ N(0, I_2),  beta  = mu_beta  + sigma_beta  n_beta,
//   epsilon ~ C+(2.5),      y_i ~ N(alpha[county_i] + beta_0 x_i + beta_1 u_i, epsilon^2),
//
// with K = 85 counties for the shipped data (92 parameters). Following the README text literally,
// mu_beta is ONE scalar shared by both coefficients (beta_k = mu_beta + sigma_beta n_beta_k), as in the
// paper's 5 scalar parameters. epsilon is the noise standard deviation (the paper's model was written
// in PyMC3, whose Normal takes a standard deviation).
//
// Unconstrained state (dim = K + 7), in this order:
//   [0]         mu_alpha
//   [1]         log sigma_alpha
//   [2, K+1]    n_alpha[0..K-1]
//   [K+2]       mu_beta
//   [K+3]       log sigma_beta
//   [K+4, K+5]  n_beta[0], n_beta[1]
//   [K+6]       log epsilon
// potential = -(log prior + log likelihood + log Jacobians) with every normalising constant kept, so
// log of the integral of exp(-potential) is the true log marginal likelihood of the data.
#include <memory>
#include <string>
#include <vector>

#include "targets/csv.hpp"
#include "targets/target.hpp"

namespace pemc::v1 {
class RadonTarget;
}

namespace pemc::targets {

class Radon final : public Target {
 public:
  // data: columns `county`, `floor`, `log_uranium`, `log_radon` (found by name, any order). County
  // indices must be integers 0..K-1 with every county present (K = max + 1); DataError otherwise.
  explicit Radon(const CsvTable& data);

  int dim() const override { return static_cast<int>(n_counties_) + 7; }
  std::string name() const override { return "radon"; }
  double potential(ConstVectorRef x) const override;
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;

  int n_counties() const { return static_cast<int>(n_counties_); }
  Eigen::Index n_rows() const { return y_.size(); }

  // Offsets of the blocks of the state (see the header comment).
  Eigen::Index mu_alpha_index() const { return 0; }
  Eigen::Index log_sigma_alpha_index() const { return 1; }
  Eigen::Index n_alpha_index() const { return 2; }
  Eigen::Index mu_beta_index() const { return n_counties_ + 2; }
  Eigen::Index log_sigma_beta_index() const { return n_counties_ + 3; }
  Eigen::Index n_beta_index() const { return n_counties_ + 4; }
  Eigen::Index log_epsilon_index() const { return n_counties_ + 6; }

 private:
  // Returns the potential; when grad is non-null also writes the gradient.
  double evaluate(ConstVectorRef x, double* grad) const;

  Eigen::Index n_counties_ = 0;
  std::vector<int> county_;
  Vector floor_, uranium_, y_;
  double constant_ = 0.0;  // every x-independent term of the potential
  mutable Vector county_grad_;
};

std::shared_ptr<const Radon> make_radon(const pemc::v1::RadonTarget& config);

}  // namespace pemc::targets
