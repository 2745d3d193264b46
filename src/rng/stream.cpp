#include "rng/stream.hpp"

#include <cmath>
#include <numbers>

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
  // (k + 0.5) / 2^53 for k in [0, 2^53): never exactly 0 or 1, so log(u) is always finite.
  return (static_cast<double>(bits() >> 11) + 0.5) * 0x1.0p-53;
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
  // Lemire-free simple rejection: reject the top partial bucket so every value is equally likely.
  const std::uint64_t limit = n == 0 ? 0 : (UINT64_MAX - (UINT64_MAX % n + 1) % n);
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
