#include "rng/stream.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace pemc::rng {

Stream::Stream(std::uint64_t seed, Domain domain, std::uint64_t id, std::uint64_t step) {
  key_ = {{seed, static_cast<std::uint64_t>(domain)}};
  ctr_ = {{id, step, 0, 0}};
}

void Stream::refill() {
  block_ = Philox()(ctr_, key_);
  ++ctr_.v[2];  // next block of this (id, step)
  used_ = 0;
}

std::uint64_t Stream::bits() {
  if (used_ == 4) refill();
  return block_.v[used_++];
}

double Stream::uniform() {
  // (k + 0.5) / 2^52 for k in [0, 2^52): the centre of one of 2^52 equal cells. k + 0.5 needs at
  // most 53 significant bits, so it is exact and the result lies in [2^-53, 1 - 2^-53]: never 0
  // or 1, so log(u) and log1p(-u) are always finite. (With 53 bits, k + 0.5 is not representable
  // for k >= 2^52 and rounds to even, so k = 2^53 - 1 gave exactly 1.0.)
  return (static_cast<double>(bits() >> 12) + 0.5) * 0x1.0p-52;
}

double Stream::normal() {
  if (has_cached_normal_) {
    has_cached_normal_ = false;
    return cached_normal_;
  }
  const double r = std::sqrt(-2.0 * std::log(uniform()));
  const double theta = 2.0 * std::numbers::pi * uniform();
  cached_normal_ = r * std::sin(theta);
  has_cached_normal_ = true;
  return r * std::cos(theta);
}

std::uint64_t Stream::below(std::uint64_t n) {
  // Simple rejection: 2^64 mod n = (UINT64_MAX % n + 1) % n values at the top form a partial
  // bucket; rejecting them leaves a multiple of n equally likely values.
  if (n == 0) throw std::invalid_argument("rng::Stream::below: n must be >= 1");
  const std::uint64_t limit = UINT64_MAX - (UINT64_MAX % n + 1) % n;
  std::uint64_t x;
  do {
    x = bits();
  } while (x > limit);
  return x % n;
}

void Stream::fill_normal(VectorRef out) {
  for (Eigen::Index i = 0; i < out.size(); ++i) out[i] = normal();
}

}  // namespace pemc::rng
