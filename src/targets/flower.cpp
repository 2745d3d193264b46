#include "targets/flower.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::targets {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = std::numbers::pi;

void validate(const FlowerOptions& o, const std::string& prefix) {
  if (!(std::isfinite(o.radius) && o.radius >= 0.0))
    throw ConfigError(prefix + "radius: must be finite and >= 0 (got " + std::to_string(o.radius) +
                      ")");
  if (!std::isfinite(o.amplitude)) throw ConfigError(prefix + "amplitude: must be finite");
  if (o.petals < 0)
    throw ConfigError(prefix + "petals: must be >= 0 (got " + std::to_string(o.petals) + ")");
  if (!(std::isfinite(o.sd) && o.sd > 0.0))
    throw ConfigError(prefix + "sd: must be finite and > 0 (got " + std::to_string(o.sd) + ")");
}

// Radial integrals I_1, I_2, I_3 of the header comment at centre c: with rho = c + s z and
// a = -c/s, I_n = s sqrt(2 pi) sum_j C(n,j) c^{n-j} s^j M_j, where M_j = int_a^inf z^j phi(z) dz
// satisfies M_0 = Phi(-a), M_1 = phi(a), M_j = a^{j-1} phi(a) + (j-1) M_{j-2}. For c >= 0 every
// term is >= 0 (no cancellation); for c < 0 the terms alternate but are then all O(Phi(-|c|/s)),
// negligible next to the positive-c part of the theta integral (radius >= 0 guarantees one).
std::array<double, 3> radial_integrals(double c, double s) {
  const double a = -c / s;
  const double phi = std::exp(-0.5 * a * a) / std::sqrt(2.0 * kPi);
  const double m0 = 0.5 * std::erfc(a / std::numbers::sqrt2);
  const double m1 = phi;
  const double m2 = a * phi + m0;
  const double m3 = a * a * phi + 2.0 * m1;
  const double k = s * std::sqrt(2.0 * kPi);
  const double i1 = k * (c * m0 + s * m1);
  const double i2 = k * (c * c * m0 + 2.0 * c * s * m1 + s * s * m2);
  const double i3 =
      k * (c * c * c * m0 + 3.0 * c * c * s * m1 + 3.0 * c * s * s * m2 + s * s * s * m3);
  return {i1, i2, i3};
}

// Integrals over theta of {I_1, cos I_2, sin I_2, cos^2 I_3, sin^2 I_3, cos sin I_3} by the
// trapezoidal rule with n equispaced nodes on the period.
std::array<double, 6> theta_integrals(const FlowerOptions& o, int n) {
  std::array<double, 6> acc{};
  const double h = 2.0 * kPi / n;
  for (int j = 0; j < n; ++j) {
    const double th = h * j;
    const double c = o.radius + o.amplitude * std::cos(o.petals * th);
    const auto [i1, i2, i3] = radial_integrals(c, o.sd);
    const double ct = std::cos(th);
    const double st = std::sin(th);
    acc[0] += i1;
    acc[1] += ct * i2;
    acc[2] += st * i2;
    acc[3] += ct * ct * i3;
    acc[4] += st * st * i3;
    acc[5] += ct * st * i3;
  }
  for (double& v : acc) v *= h;
  return acc;
}

// Refines the trapezoidal rule until it converges; nullopt if it does not (then no truth).
std::optional<std::array<double, 6>> converged_theta_integrals(const FlowerOptions& o) {
  constexpr double kRelTol = 1e-13;
  constexpr int kMaxNodes = 1 << 22;
  std::array<double, 6> prev = theta_integrals(o, 64);
  for (int n = 128; n <= kMaxNodes; n *= 2) {
    const std::array<double, 6> cur = theta_integrals(o, n);
    // Moment integrals are compared on the scale of the matching normaliser (Z E[rho^2] etc.),
    // because by symmetry many of them are exactly 0.
    const double scale2 = std::fabs(cur[3]) + std::fabs(cur[4]);
    const double scale1 = std::sqrt(scale2 * std::fabs(cur[0]));
    bool ok = std::fabs(cur[0] - prev[0]) <= kRelTol * std::fabs(cur[0]);
    for (int i = 1; i <= 2; ++i) ok = ok && std::fabs(cur[i] - prev[i]) <= kRelTol * scale1;
    for (int i = 3; i <= 5; ++i) ok = ok && std::fabs(cur[i] - prev[i]) <= kRelTol * scale2;
    if (ok && n >= 1024) return cur;
    prev = cur;
  }
  return std::nullopt;
}

}  // namespace

Flower::Flower(const FlowerOptions& options) : options_(options) {
  validate(options_, "flower target: ");
  inv_var_ = 1.0 / (options_.sd * options_.sd);
  if (const auto q = converged_theta_integrals(options_);
      q && (*q)[0] > 0.0 && std::isfinite((*q)[0])) {
    const auto& v = *q;
    const double z = v[0];
    truth_.log_z = std::log(z);
    truth_.mean = Eigen::Vector2d(v[1] / z, v[2] / z);
    truth_.second_moment = Eigen::Vector2d(v[3] / z, v[4] / z);
    Matrix cross(2, 2);
    cross << v[3] / z, v[5] / z, v[5] / z, v[4] / z;
    truth_.cross_moment = cross;
  }
}

double Flower::potential(ConstVectorRef x) const {
  const double rho = std::hypot(x[0], x[1]);
  if (rho < kMinRadius) return kInf;  // the excluded disc around the singular origin
  const double c =
      options_.radius + options_.amplitude * std::cos(options_.petals * std::atan2(x[1], x[0]));
  const double e = rho - c;
  return 0.5 * e * e * inv_var_;
}

double Flower::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  const double rho = std::hypot(x[0], x[1]);
  if (rho < kMinRadius) {
    grad.setConstant(kNaN);
    return kInf;
  }
  const double theta = std::atan2(x[1], x[0]);
  const double k = options_.petals;
  const double c = options_.radius + options_.amplitude * std::cos(k * theta);
  const double e = (rho - c) * inv_var_;
  // U = (rho - c(theta))^2 / (2 sd^2): dU/dx = e (d rho/dx - c'(theta) d theta/dx) with
  // d rho/dx = x/rho = u, d theta/dx = (-x2, x1)/rho^2 = t/rho, c' = -A k sin(k theta).
  const double ux = x[0] / rho;
  const double uy = x[1] / rho;
  const double w = options_.amplitude * k * std::sin(k * theta) / rho;
  grad[0] = e * (ux - w * uy);
  grad[1] = e * (uy + w * ux);
  return 0.5 * (rho - c) * (rho - c) * inv_var_;
}

std::optional<Vector> Flower::default_initial_point() const {
  // The outermost petal tip: radius + |amplitude| in a direction where cos(petals theta) has the
  // sign of the amplitude.
  const FlowerOptions& o = options_;
  const double theta = (o.amplitude >= 0.0 || o.petals == 0) ? 0.0 : std::numbers::pi / o.petals;
  const double r0 =
      o.radius + std::fabs(o.amplitude) > 0.0 ? o.radius + std::fabs(o.amplitude) : o.sd;
  return Vector(Eigen::Vector2d(r0 * std::cos(theta), r0 * std::sin(theta)));
}

std::shared_ptr<Flower> make_flower(const v1::FlowerTarget& config) {
  FlowerOptions o;
  if (config.has_radius()) o.radius = config.radius();
  if (config.has_amplitude()) o.amplitude = config.amplitude();
  if (config.has_petals()) o.petals = config.petals();
  if (config.has_sd()) o.sd = config.sd();
  validate(o, "target.flower.");
  return std::make_shared<Flower>(o);
}

}  // namespace pemc::targets
