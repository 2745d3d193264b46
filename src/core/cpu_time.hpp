#pragma once
// CPU time of the calling thread (user + system), for reporting it beside wall time: on a
// machine with more ranks than cores the two differ, and the CPU time is the chain's real cost.
#include <time.h>

namespace pemc {

inline double thread_cpu_seconds() {
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0.0;  // unsupported: report none
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace pemc
