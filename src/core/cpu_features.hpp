#pragma once
// What the CPU running this process can do, for code with a runtime-dispatched vector path.

namespace pemc {

// True when the CPU has AVX2 and FMA (checked once; false on non-x86-64 builds). Code that takes
// an AVX2 path on this answer must give the same bits as its other path, or say where it does not.
bool cpu_has_avx2_fma();
// True when the CPU has AVX (checked once; false on non-x86-64 builds).
bool cpu_has_avx();

}  // namespace pemc
