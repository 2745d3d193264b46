#pragma once
// Counter-based random streams (Random123 Philox4x64-10).
//
// A stream is a pure function of (seed, domain, id, step): the key holds (seed, domain) and the
// counter holds (id, step, block). A chain's draws at iteration t therefore depend only on its seed,
// its *global* chain id and t, never on which rank runs it or what ran before (GROMACS-style keying,
// see DESIGN.md). Different purposes (momentum, accept/reject, initialisation ...) use different
// domains so they never share numbers.
#include <Random123/philox.h>

#include <cstdint>

#include "core/types.hpp"

namespace pemc::rng {

// The purpose of a stream. Values are part of the reproducibility contract: never renumber.
enum class Domain : std::uint32_t {
  kInitialPoint = 1,
  kTransition = 2,    // everything a kernel draws within one transition
  kAdaptation = 3,
  kSwap = 4,          // replica exchange decisions
  kTemperature = 5,   // tempering variables (beta draws)
  kGenerator = 6,     // target generators (e.g. random Boltzmann machines)
  kDataSplit = 7,     // train/test splits
  kTest = 100,
};

class Stream {
 public:
  Stream(std::uint64_t seed, Domain domain, std::uint64_t id, std::uint64_t step);

  // Uniform on the open interval (0, 1): 52 random bits, centred in their cell (exactly
  // representable, so never 0 or 1).
  double uniform();
  // Standard normal (Box-Muller on two uniforms, second value cached).
  double normal();
  // 64 raw random bits.
  std::uint64_t bits();
  // Uniform integer in [0, n) (n >= 1; n = 0 throws std::invalid_argument), unbiased by rejection.
  std::uint64_t below(std::uint64_t n);
  void fill_normal(VectorRef out);

 private:
  void refill();

  using Philox = r123::Philox4x64;
  Philox::key_type key_;
  Philox::ctr_type ctr_;
  Philox::ctr_type block_{};
  int used_ = 4;  // outputs of block_ already consumed
  bool has_cached_normal_ = false;
  double cached_normal_ = 0.0;
};

}  // namespace pemc::rng
