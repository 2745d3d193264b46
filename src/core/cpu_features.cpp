#include "core/cpu_features.hpp"

#include <atomic>

namespace pemc {
namespace {
std::atomic<bool> g_avx512_allowed{true};

// Every flag, read once (the first call may come from a static initializer, before libgcc has
// initialised its own CPU model: hence the explicit __builtin_cpu_init).
struct CpuFlags {
  bool avx = false, avx2 = false, fma = false, avx512f = false;
};
const CpuFlags& cpu_flags() {
  static const CpuFlags flags = [] {
    CpuFlags f;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    f.avx = __builtin_cpu_supports("avx") != 0;
    f.avx2 = __builtin_cpu_supports("avx2") != 0;
    f.fma = __builtin_cpu_supports("fma") != 0;
    f.avx512f = __builtin_cpu_supports("avx512f") != 0;
#endif
    return f;
  }();
  return flags;
}
}  // namespace

bool cpu_has_avx2_fma() { return cpu_flags().avx2 && cpu_flags().fma; }
bool cpu_has_avx() { return cpu_flags().avx; }
bool cpu_has_fma() { return cpu_flags().fma; }
bool cpu_has_avx512f() {
  return cpu_has_avx2_fma() && cpu_flags().avx512f &&
         g_avx512_allowed.load(std::memory_order_relaxed);
}

void set_avx512_allowed(bool allowed) { g_avx512_allowed.store(allowed, std::memory_order_relaxed); }

}  // namespace pemc
