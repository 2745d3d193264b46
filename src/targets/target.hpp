#pragma once
// The Target interface: a log density known up to a constant, with its analytic gradient.
//
// potential(x) = -log density(x) + const. A non-finite potential (NaN or +inf) at a proposal means
// "reject this proposal": targets may return it (e.g. outside a support), kernels must handle it,
// and nothing crashes. Targets are not thread-safe (they may keep scratch buffers); each thread or
// rank builds its own.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/types.hpp"
#include "targets/model_messages.hpp"

namespace pemc::targets {

// How a point of an extended space (pseudo-extended, continuous tempering ...) stands for weighted
// samples of the original target. Written into every draw record (extra_states, log_weights,
// extra); reports form self-normalised weighted estimates from it.
struct WeightedView {
  Matrix samples;                 // original_dim x n: the samples this point represents
  Vector log_weights;             // n unnormalised log importance weights
  std::vector<double> extra;      // sampler-specific scalars (documented by the target)
};

// Exact quantities a target may know about itself, for tests and reports.
struct Truth {
  std::optional<Vector> mean;           // E[x]
  std::optional<Vector> second_moment;  // E[x_i^2] per coordinate
  std::optional<Matrix> cross_moment;   // E[x x'] where known
  std::optional<double> log_z;          // log of the normalising constant of exp(-potential)
  // Target-specific extras, e.g. "log_z_boltzmann" -> {value}, "mean_s" -> E[s].
  std::map<std::string, std::vector<double>> extras;
};

class Target {
 public:
  virtual ~Target() = default;

  virtual int dim() const = 0;
  // Short identifier, e.g. "gaussian", "mixture", "boltzmann".
  virtual std::string name() const = 0;

  // -log density up to a constant; may be +inf or NaN (= reject).
  virtual double potential(ConstVectorRef x) const = 0;
  // Same value as potential(x); writes d potential / dx into grad (grad.size() == dim()).
  virtual double potential_and_gradient(ConstVectorRef x, VectorRef grad) const = 0;
  // potential_and_gradient at m = potentials.size() points at once. `points` holds them column by
  // column (dim() x m, column-major: point j at points[j * dim()]); potentials[j] and column j of
  // `grads` (the same layout) receive point j's results. Pseudo-extended HMC evaluates its N
  // pseudo-samples this way, so a target whose evaluation vectorises across points (the Gaussian
  // mixture) can share the work among them. Contract: point j's results depend on point j alone,
  // not on its neighbours, its position or m (a chain spread over ranks evaluates its points in
  // different batches and must get the same bits). Exceptions propagate as from the single call;
  // which point threw is then unknown. Default: one potential_and_gradient per point.
  virtual void potential_and_gradient_batch(std::span<const double> points,
                                            std::span<double> potentials,
                                            std::span<double> grads) const {
    const auto d = static_cast<std::size_t>(dim());
    check_batch_shape(points, potentials, grads);
    for (std::size_t j = 0; j < potentials.size(); ++j) {
      Eigen::Map<const Vector> x(points.data() + j * d, static_cast<Eigen::Index>(d));
      Eigen::Map<Vector> g(grads.data() + j * d, static_cast<Eigen::Index>(d));
      potentials[j] = potential_and_gradient(x, g);
    }
  }

  // Exact truth where known (analytic or by enumeration). Default: nothing known.
  virtual Truth truth() const { return {}; }
  // Held-out data, for targets fitted to a training set (e.g. horseshoe_logistic): the number of
  // test points, and log p(y_j | x) of each of them under the parameters x (a point of this
  // target, size dim(); out.size() == n_test_points()). Reports turn these into the held-out log
  // predictive density. Default: no test set.
  virtual int n_test_points() const { return 0; }
  virtual void log_predictive(ConstVectorRef x, std::span<double> out) const {
    throw ConfigError("target '" + name() + "' has no held-out test set");
  }

  // Named outputs: the quantities a draw reports on the model's own scale, beside its state (a
  // Stan model's parameters, transformed parameters and generated quantities, constrained, named
  // as in Stan: "theta[1]"). Default: none; reports then name the state's coordinates x[1..d].
  virtual std::vector<std::string> output_names() const { return {}; }
  // Writes the outputs of the point x (size dim()) into out (size output_names().size()). `seed`
  // keys their randomness (Stan's generated quantities): the same x and seed give the same bits.
  // Returns false when the model could not compute them all: the ones it could not compute are
  // NaN (every one, unless the model gives the part it computed before failing, as Stan does).
  virtual bool write_outputs(ConstVectorRef x, std::uint64_t seed, std::span<double> out) const {
    return false;
  }
  // Whether lp_offset gives anything (a Stan model loaded through pemc's shim). Default: no.
  virtual bool has_lp_offset() const { return false; }
  // -potential(x) minus the log density the model's own tools report (Stan's lp__: the constants
  // of `~` statements dropped, Jacobian included), a constant of the model and its data; nullopt
  // where x is rejected or the target has none (targets/lp_offset.hpp measures it for the header).
  virtual std::optional<double> lp_offset(ConstVectorRef x) const { return std::nullopt; }
  // How many of output_names(), from the first, are the model's parameters (Stan's parameters and
  // transformed parameters; the rest are generated quantities). nullopt: not known (default).
  virtual std::optional<int> n_parameter_outputs() const { return std::nullopt; }
  // What the model said when it rejected points or failed to write outputs since the last call
  // (model_messages.hpp), oldest first. Default: nothing (built-in targets reject silently).
  virtual std::vector<ModelMessage> take_model_messages() const { return {}; }

  // A sensible default initial point when the config gives none; nullopt = use the config's init.
  virtual std::optional<Vector> default_initial_point() const { return std::nullopt; }

  // Extended targets: the dimension of the original target, and the weighted samples a point of
  // the extended space represents. Plain targets represent themselves (return false).
  virtual int original_dim() const { return dim(); }
  // Gradient evaluations of the original target that one potential_and_gradient of this space
  // costs, over every rank that evaluates it: the pseudo-extended target's N pseudo-samples; 1 for
  // plain targets and continuous tempering (one target gradient, plus the base's). The chain
  // driver counts ChainSummary.n_gradient_evals in these units (records.proto).
  virtual int target_gradients_per_evaluation() const { return 1; }
  virtual bool weighted_view(ConstVectorRef x, WeightedView& out) const { return false; }
  // Fills a full initial state x (size dim()). `draw_original` fills one original-space point
  // (size original_dim()) from the config's init distribution; extended targets call it once per
  // block and choose their auxiliary variables themselves.
  virtual void initial_point(const std::function<void(VectorRef)>& draw_original,
                             VectorRef x) const {
    draw_original(x);
  }

 protected:
  // One pass of a batch path that puts points in vector lanes: x[l] and g[l] (l < w) point at
  // point j + l and its gradient. Lanes past the batch's end repeat its last point and write to
  // `pad_grads` (w x dim() scratch), so every point goes through the same lane arithmetic whatever
  // its position or the batch size (the contract of potential_and_gradient_batch).
  void lane_pointers(std::span<const double> points, std::span<double> grads, std::size_t j,
                     std::size_t w, double* pad_grads, const double** x, double** g) const {
    const auto d = static_cast<std::size_t>(dim());
    const std::size_t m = grads.size() / d;
    for (std::size_t l = 0; l < w; ++l) {
      const bool real = j + l < m;
      x[l] = points.data() + (real ? j + l : m - 1) * d;
      g[l] = real ? grads.data() + (j + l) * d : pad_grads + l * d;
    }
  }
  // std::invalid_argument unless points and grads hold dim() x potentials.size() entries.
  void check_batch_shape(std::span<const double> points, std::span<double> potentials,
                         std::span<double> grads) const {
    const std::size_t cells = static_cast<std::size_t>(dim()) * potentials.size();
    if (points.size() != cells || grads.size() != cells)
      throw std::invalid_argument(
          "target '" + name() + "': potential_and_gradient_batch of " +
          std::to_string(potentials.size()) + " points of dimension " + std::to_string(dim()) +
          " got " + std::to_string(points.size()) + " point and " + std::to_string(grads.size()) +
          " gradient entries");
  }
};

using TargetPtr = std::shared_ptr<const Target>;

}  // namespace pemc::targets
