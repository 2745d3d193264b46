#pragma once
// Gaussian mixture sum_k w_k N(mu_k, diag(var_k)) with normalised weights.
//
// The potential includes every normalising constant, so exp(-potential) integrates to exactly 1
// and truth().log_z == 0. It is evaluated by a log-sum-exp over components, so points hundreds of
// standard deviations from every component still give a finite potential and gradient.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "targets/target.hpp"

namespace pemc::v1 {
class MixtureTarget;
}

namespace pemc::targets {

class GaussianMixture final : public Target {
 public:
  struct Component {
    double weight = 1.0;  // > 0; normalised over components by the constructor
    Vector mean;          // dim entries
    Vector variance;      // dim entries > 0 (diagonal covariance)
  };

  // Throws ConfigError for no components, mismatched dimensions, or non-finite/non-positive
  // weights or variances (message names the component index).
  explicit GaussianMixture(std::vector<Component> components);

  int dim() const override { return dim_; }
  std::string name() const override { return "mixture"; }
  double potential(ConstVectorRef x) const override;
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;
  // On CPUs with AVX2: up to eight points per pass, one in each lane of two 256-bit registers
  // (four per register), so a batch of N points costs about N/4 single evaluations' exps
  // (BM_PeGradient); with AVX-512F (unless set_avx512_allowed(false) was called before
  // construction), eight per pass in one 512-bit register. The same bits for every point either
  // way. Without AVX2: one call per point.
  void potential_and_gradient_batch(std::span<const double> points, std::span<double> potentials,
                                    std::span<double> grads) const override;
  // Points per register in the batch path this object takes: 8 (AVX-512), 4 (AVX2), or 1 (no
  // vector path).
  int batch_width() const { return lanes8_ ? 8 : lanes4_ ? 4 : 1; }
  // mean sum w_k mu_k; second moment sum w_k (mu_k^2 + var_k); cross moment
  // sum w_k (diag(var_k) + mu_k mu_k'); log_z = 0.
  Truth truth() const override;

  int n_components() const { return static_cast<int>(components_.size()); }
  // Components with normalised weights.
  const std::vector<Component>& components() const { return components_; }

 private:
  // Shared body of potential / potential_and_gradient at x[0..dim); grad may be null.
  double evaluate(const double* x, double* grad) const;
  // Its body for dimension D (D = 0: any dimension; see the .cpp).
  template <int D>
  double evaluate_dim(const double* x, double* grad) const;

  std::vector<Component> components_;
  int dim_ = 0;
  // Structure of arrays over the components, padded to an even count n_pad_ (pairs of components
  // are processed together, see the .cpp), so that every step of evaluate() is a vectorised loop
  // over the components. Coordinate i of component k is at [i * n_pad_ + k]. The padding
  // components have mean 0, variance 1 and log_norm -inf: they never contribute.
  int n_pad_ = 0;
  std::vector<double> mean_;      // mu_ki
  std::vector<double> half_inv_var_;  // 1 / (2 var_ki)
  std::vector<double> log_norm_;  // log w_k - d/2 log 2pi - 1/2 sum_i log var_ki
  // Scratch, sized at construction (no allocation per call).
  mutable std::vector<double> scaled_;  // (x_i - mu_ki) / (2 var_ki)
  mutable std::vector<double> terms_;   // log w_k N(x; mu_k, var_k), then exp(term - max)
  // The batch path (see potential_and_gradient_batch): whether this CPU runs it (lanes4_: AVX2
  // passes of 8, 4 and 2 points; lanes8_: the passes of 8 in AVX-512), and its scratch, W lanes per
  // entry for a pass of W points, sized for the widest: scaled terms [(k * dim + i) * W + lane],
  // terms [k * W + lane], and the gradients of padding lanes (a pass with fewer points than lanes
  // repeats the batch's last point in the spare ones).
  bool lanes4_ = false;
  bool lanes8_ = false;
  mutable std::vector<double> lane_scaled_, lane_terms_, lane_pad_grad_;
  // The 4- and 8-lane passes' packed exps (mixture.cpp, evaluate_lanes): arguments, lane masks.
  mutable std::vector<double> lane_packed_;
  mutable std::vector<std::uint8_t> lane_masks_;
};

// The mixture of a config: a preset (BIMODAL_1D, KOU_A, KOU_B) or explicit components.
// Throws ConfigError naming the field (target.mixture.components[k].<field>).
std::shared_ptr<GaussianMixture> make_mixture(const v1::MixtureTarget& config);

// The 20 bivariate means of Kou, Zhou & Wong (2006), used by the KOU_A/KOU_B presets
// (pseudo-extended paper Section 4.1).
std::vector<Vector> kou_means();

}  // namespace pemc::targets
