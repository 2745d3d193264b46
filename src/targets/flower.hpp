#pragma once
// Flower target (Sejdinovic et al. 2014; pseudo-extended paper, arXiv version, Appendix E), 2-D:
//   ||x|| ~ N(radius + amplitude cos(petals * atan2(x2, x1)), sd^2),
//   potential = (||x|| - radius - amplitude cos(petals theta))^2 / (2 sd^2).
//
// The origin is a point where the potential is discontinuous (its limit depends on the direction)
// and the gradient grows like 1/||x||. Inside the tiny disc ||x|| < kMinRadius the potential is
// +inf (a rejection, never a crash); the disc's probability is < 1e-299, far below any tolerance.
//
// Truth: by polar coordinates, with c(theta) = radius + amplitude cos(petals theta),
//   Z = int_0^{2pi} I_1(c(theta)) dtheta,  I_n(c) = int_0^inf rho^n exp(-(rho - c)^2 / (2 sd^2))
//   drho,
// and E[x1^p x2^q] = int cos^p sin^q I_{1+p+q} dtheta / Z. The radial integrals I_n are closed-form
// (truncated-normal moments); the theta integrand is smooth and periodic, so the trapezoidal rule
// converges geometrically; it is refined until the relative change is below 1e-13, once, at
// construction. mean, second_moment, cross_moment and log_z are provided (accuracy ~1e-12).
#include <memory>

#include "targets/target.hpp"

namespace pemc::v1 {
class FlowerTarget;
}

namespace pemc::targets {

struct FlowerOptions {
  double radius = 10.0;    // >= 0, finite
  double amplitude = 6.0;  // finite (negative = petals rotated by pi/petals)
  int petals = 6;          // >= 0 (0 = a plain ring)
  double sd = 1.0;         // > 0, finite
};

class Flower final : public Target {
 public:
  // Throws ConfigError for out-of-range options.
  explicit Flower(const FlowerOptions& options = {});

  int dim() const override { return 2; }
  std::string name() const override { return "flower"; }
  double potential(ConstVectorRef x) const override;
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;
  Truth truth() const override { return truth_; }
  // The tip of an outermost petal (radius + |amplitude| from the origin).
  std::optional<Vector> default_initial_point() const override;

  const FlowerOptions& options() const { return options_; }

  static constexpr double kMinRadius = 1e-150;

 private:
  FlowerOptions options_;
  double inv_var_;  // 1 / sd^2
  Truth truth_;
};

// Defaults radius 10, amplitude 6, petals 6, sd 1 for unset fields; errors name
// target.flower.<field>.
std::shared_ptr<Flower> make_flower(const v1::FlowerTarget& config);

}  // namespace pemc::targets
