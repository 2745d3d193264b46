#include "core/cpu_features.hpp"

#include <atomic>

namespace pemc {
namespace {
std::atomic<bool> g_avx512_allowed{true};
}  // namespace

bool cpu_has_avx2_fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = [] {
    __builtin_cpu_init();  // callers may run in static initializers, before libgcc's own
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx") != 0;
  }();
  return has;
#else
  return false;
#endif
}

bool cpu_has_fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("fma") != 0;
  }();
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx512f() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = [] {
    __builtin_cpu_init();
    return cpu_has_avx2_fma() && __builtin_cpu_supports("avx512f");
  }();
  return has && g_avx512_allowed.load(std::memory_order_relaxed);
#else
  return false;
#endif
}

void set_avx512_allowed(bool allowed) { g_avx512_allowed.store(allowed, std::memory_order_relaxed); }

}  // namespace pemc
