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
  kOutputs = 8,       // a target's named outputs (Stan's generated quantities), per draw
  kModeSearch = 9,    // the starts of the mode search before sampling (modes/mode_search.hpp)
  kLpOffset = 10,     // the points where the header's lp offset is measured (runner/run_header.cpp)
  kTest = 100,
};

class Stream {
 public:
  Stream(std::uint64_t seed, Domain domain, std::uint64_t id, std::uint64_t step);

  // Uniform on the open interval (0, 1): 52 random bits, centred in their cell (exactly
  // representable, so never 0 or 1). Inline, like bits(): kernels draw a few per transition.
  double uniform() { return to_uniform(bits()); }
  // The uniform() of a 64-bit word (for callers that read words ahead, e.g. NUTS).
  static double to_uniform(std::uint64_t bits) {
    // (k + 0.5) / 2^52 for k in [0, 2^52): the centre of one of 2^52 equal cells. k + 0.5 needs
    // at most 53 significant bits, so it is exact and the result lies in [2^-53, 1 - 2^-53]:
    // never 0 or 1, so log(u) and log1p(-u) are always finite. (With 53 bits, k + 0.5 is not
    // representable for k >= 2^52 and rounds to even, so k = 2^53 - 1 gave exactly 1.0.)
    return (static_cast<double>(bits >> 12) + 0.5) * 0x1.0p-52;
  }
  // uniform() if `draw`, else 0.0 and nothing is consumed: the same values in the same order as
  // calling uniform() only when `draw` holds, without a branch on `draw` (for draws a caller
  // skips unpredictably, e.g. NUTS's top-level sampling). The next block may be generated before
  // it is needed, which changes nothing that is drawn.
  double uniform_if(bool draw) {
    if (used_ == 4) refill();
    const double u = to_uniform(block_.v[used_]);
    used_ += static_cast<int>(draw);
    return u * static_cast<double>(draw);  // not `draw ? u : 0.0`, which compiles to a jump
  }
  // Standard normal, exact: a 256-layer ziggurat (Marsaglia & Tsang 2000) with the exact tail
  // and wedge tests; about 1.01 64-bit words per draw and no transcendental function in ~99% of
  // draws.
  double normal();
  // 64 raw random bits.
  std::uint64_t bits() {
    if (used_ == 4) refill();
    return block_.v[used_++];
  }
  // Uniform integer in [0, n) (n >= 1; n = 0 throws std::invalid_argument), unbiased by rejection.
  std::uint64_t below(std::uint64_t n);
  // out[i] = normal() in order i = 0, 1, ... (the same values as repeated normal() calls).
  void fill_normal(VectorRef out);
  // The same into out[0..n).
  void fill_normal(double* out, Eigen::Index n);

 private:
  void refill();
  double normal_inline();
  // The ziggurat's rare path for layer i at position u: the tail (i = 0) or the wedge test.
  // Returns true with |x| set when the draw is accepted.
  bool normal_edge(unsigned i, double u, double& x);

  using Philox = r123::Philox4x64;
  Philox::key_type key_;
  Philox::ctr_type ctr_;
  Philox::ctr_type block_{};
  int used_ = 4;  // outputs of block_ already consumed
};

// The ziggurat's layer table (for tests): r, the layer edges x_0..x_256 (x_0 = v / f(r) the base
// layer's virtual width, x_1 = r, x_256 = 0) and f(x_i) = exp(-x_i^2 / 2) (f_0 unused).
struct ZigguratTables {
  double r;
  const double* x;  // 257 entries
  const double* f;  // 257 entries
};
ZigguratTables ziggurat_tables();

}  // namespace pemc::rng
