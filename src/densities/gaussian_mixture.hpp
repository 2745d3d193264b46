#pragma once
// A mixture of Gaussians as a normalised density (density.hpp):
//
//   p(x) = sum_k w_k N(x; m_k, Sigma_k),   w_k > 0,  sum_k w_k = 1,  K >= 1 components of one
//   dimension d, each a densities::Gaussian with psi_k = -log N(x; m_k, Sigma_k),
//
//   psi(x)      = -log sum_k exp(a_k(x)),          a_k(x) = log w_k - psi_k(x)
//   grad psi(x) = sum_k r_k(x) grad psi_k(x),   r_k(x) = exp(a_k(x) + psi(x)): the responsibilities
//
// The CT paper's combination of local fits, eq. (25), q(x) = sum_i exp(l_i) q_i(x) / zeta, is
// this mixture with log weights l_i (from_log_weights): a tempering reference or CT base that
// covers every mode a mode search found, where the paper moment-matches one Gaussian to it.
//
// psi is a log-sum-exp about the largest a_k, so it stays finite (and the responsibilities sum to
// 1) however far x is from every component: no exp underflows to a log of 0. With K = 1, psi and
// its gradient are the component's own, bit for bit (a_0 = -psi_0, r_0 = 1).
//
// Evaluation (thread safety, density.hpp): the mixture is kShared when every component is (its
// scratch is then thread-local, as the components' is), and kFast otherwise (scratch per
// object, sized at construction: one thread at a time). No evaluation allocates, except a thread's
// first use of a kShared mixture larger than any it evaluated before.
#include <memory>
#include <string>
#include <vector>

#include "densities/density.hpp"
#include "densities/gaussian.hpp"

namespace pemc::densities {

class GaussianMixture final : public Density {
 public:
  // Weights exp(log_weights[k]), normalised: w_k = exp(l_k - log sum_j exp(l_j)). The l_k may be
  // any finite numbers (e.g. each mode's Laplace log mass, eq. (25)'s l_i, around -400 for a Stan
  // model). Throws ConfigError for no components, a count of log weights that differs from the
  // count of components, or components of different dimensions; NumericalError for a log weight
  // that is not finite. Each message names the offending index.
  static GaussianMixture from_log_weights(const std::vector<double>& log_weights,
                                          std::vector<Gaussian> components);
  // Weights w_k / sum_j w_j; every w_k finite and > 0 (NumericalError otherwise), the rest as
  // from_log_weights.
  static GaussianMixture from_weights(const std::vector<double>& weights,
                                      std::vector<Gaussian> components);

  int dim() const override { return components_.front().dim(); }
  double potential(ConstVectorRef x) const override;
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;
  // Takes one uniform u from `stream` and picks the first component k with u < w_0 + ... + w_k
  // (the last cumulative weight is exactly 1), then that component's draw (its d normals).
  void sample(rng::Stream& stream, VectorRef out) const override;

  // sum_k w_k m_k and sum_k w_k (Sigma_k + (m_k - m)(m_k - m)'): the mixture's exact moments.
  const Vector& mean() const override { return mean_; }
  Matrix covariance() const override { return covariance_; }
  // "mixture of 2 Gaussians (d = 3; weights 0.75, 0.25)".
  std::string describe() const override;
  Evaluation evaluation() const override { return evaluation_; }
  // Every component with that evaluation.
  std::shared_ptr<const Density> copy_with_evaluation(Evaluation evaluation) const override;

  int n_components() const { return static_cast<int>(components_.size()); }
  const Gaussian& component(int k) const { return components_[static_cast<std::size_t>(k)]; }
  // log w_k (normalised) and w_k.
  const Vector& log_weights() const { return log_weights_; }
  double weight(int k) const { return weights_[k]; }

  // Assigns x to the components: log_densities[k] = -psi_k(x) = log N(x; m_k, Sigma_k) and
  // responsibilities[k] = r_k(x) = w_k N(x; m_k, Sigma_k) / p(x) (summing to 1 up to rounding);
  // returns psi(x). Both outputs have K entries (NumericalError otherwise).
  double component_terms(ConstVectorRef x, VectorRef log_densities,
                         VectorRef responsibilities) const;

 private:
  GaussianMixture(Vector log_weights, std::vector<Gaussian> components);
  // kShared if every component is, else kFast (with per-object scratch, sized here).
  void take_evaluation_from_components();

  // Working storage of one evaluation: a_k (K) and the components' gradients (d x K, column k for
  // component k).
  struct Scratch {
    std::vector<double> log_terms, gradients;
    void grow_to(std::size_t k, std::size_t d);  // never shrinks
  };
  Scratch& scratch() const;
  // a_k(x) into a (K entries), and psi(x) = -log sum_k exp(a_k).
  double log_terms(ConstVectorRef x, double* a) const;

  std::vector<Gaussian> components_;
  Vector log_weights_;  // normalised: log sum_k exp(log_weights_[k]) = 0 up to rounding
  Vector weights_;
  Vector cumulative_;  // w_0 + ... + w_k, the last exactly 1
  Vector mean_;
  Matrix covariance_;
  Evaluation evaluation_ = Evaluation::kFast;
  mutable Scratch scratch_;  // kFast only
};

}  // namespace pemc::densities
