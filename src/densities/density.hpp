#pragma once
// A normalised density exp(-psi(x)) on R^d, ∫ exp(-psi) = 1: the reference of a tempering path
// (tempering/reference.hpp; Graham & Storkey 2017, eq. (4)) and continuous tempering's base density
// (extended/base_density.hpp; eq. (14)). Normalisation matters: with beta_0 = 0 the tempering
// estimators (stepping stone, ST's Rao-Blackwellised ratio, AIS weights) estimate Z itself rather
// than Z / Z(beta_0), and CT's log zeta approximates log Z against this psi.
//
// Implementations: a Gaussian (gaussian.hpp) and a mixture of Gaussians (gaussian_mixture.hpp,
// e.g. one component per mode a mode search found, as in eq. (25)).
//
// Thread safety. Every member is const and a density holds no state between calls, but its scratch
// (the working vectors of an evaluation or a draw) lives either per thread or per object:
//  - Evaluation::kShared: scratch is thread-local, so one object may be used by several threads at
//    once. The tempering samplers share one reference among the tempered targets of their levels,
//    and the in-process test groups share it between threads; tempering::make_reference gives them
//    kShared densities.
//  - Evaluation::kFast: scratch is per object, so an object serves one thread at a time. Continuous
//    tempering's base is evaluated by its chain's thread only, on the hot path of every leapfrog
//    step.
// For a Gaussian the two also round differently (gaussian.hpp); each sampler family keeps one so
// that its runs reproduce bit for bit. copy_with_evaluation converts.
#include <memory>
#include <span>
#include <string>

#include "core/types.hpp"
#include "rng/stream.hpp"

namespace pemc::densities {

class Density {
 public:
  enum class Evaluation { kShared, kFast };

  // The tempered gradient's mixing out = w_phi grad_phi + w_psi grad psi(x) (continuous tempering's
  // beta grad phi + (1 - beta) grad psi, eqs. (14), (16)) in one call.
  struct MixedGradient {
    double w_phi = 0.0, w_psi = 1.0;
    std::span<const double> grad_phi;  // d entries
    std::span<double> out;             // d entries; may be grad_phi's storage (read before written)
    std::span<double> grad_psi;        // empty, or d entries that receive grad psi(x) too
  };

  virtual ~Density() = default;

  virtual int dim() const = 0;
  // psi(x) = -log p(x), every constant included (so exp(-psi) integrates to 1).
  virtual double potential(ConstVectorRef x) const = 0;
  // Same value; writes grad psi(x) into grad (d entries).
  virtual double potential_and_gradient(ConstVectorRef x, VectorRef grad) const = 0;
  // psi(x), the same value as potential(x), and m.out = w_phi grad_phi + w_psi grad psi(x), each
  // entry rounded exactly as that Eigen expression (two products, one sum), so the result is
  // bit-identical to potential_and_gradient followed by it. This generic version does exactly
  // that (grad psi into m.grad_psi, or thread-local scratch when it is empty); the Gaussian
  // overrides it with a path that mixes in its last pass over the factor. Throws NumericalError
  // for spans of the wrong size.
  virtual double potential_and_mixed_gradient(std::span<const double> x,
                                              const MixedGradient& m) const;
  // One exact draw x ~ exp(-psi) into out (d entries), from `stream` only: the same stream state
  // gives the same draw. Each implementation says which numbers it takes from the stream.
  virtual void sample(rng::Stream& stream, VectorRef out) const = 0;

  // The density's exact mean and covariance (for logs and records: EstimatesSnapshot.base).
  virtual const Vector& mean() const = 0;
  virtual Matrix covariance() const = 0;
  // What it is, in a few words ("Gaussian (d = 3, dense covariance)"), for logs and errors.
  virtual std::string describe() const = 0;

  virtual Evaluation evaluation() const = 0;
  // The same density, evaluated the other way (see the top of this file).
  virtual std::shared_ptr<const Density> copy_with_evaluation(Evaluation evaluation) const = 0;

 protected:
  Density() = default;
  Density(const Density&) = default;
  Density& operator=(const Density&) = default;

  // Throws NumericalError (naming describe()) unless x, m.grad_phi and m.out have dim() entries
  // and m.grad_psi is empty or has dim() entries.
  void check_mixed_gradient_spans(std::span<const double> x, const MixedGradient& m) const;
};

using DensityPtr = std::shared_ptr<const Density>;

}  // namespace pemc::densities
