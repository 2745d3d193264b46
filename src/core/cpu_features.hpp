#pragma once
// What the CPU running this process can do, for code with a runtime-dispatched vector path.

namespace pemc {

// True when the CPU has AVX2 and FMA (checked once; false on non-x86-64 builds). Code that takes
// an AVX2 path on this answer must give the same bits as its other path, or say where it does not.
bool cpu_has_avx2_fma();
// True when the CPU has AVX (checked once; false on non-x86-64 builds).
bool cpu_has_avx();
// True when the CPU has the FMA instruction (checked once; false on non-x86-64 builds).
bool cpu_has_fma();
// True when the CPU has AVX-512F (with AVX2 and FMA) and set_avx512_allowed(false) has not been
// called. An AVX-512 path must give the same bits as the AVX2 path it replaces (a run's draws must
// not depend on which of the two a node has); tests check that by running both on one machine.
bool cpu_has_avx512f();
// Lets tests (and benchmarks) take the AVX2 path on an AVX-512 CPU: code that reads
// cpu_has_avx512f() when it builds its state sees the new answer from then on.
void set_avx512_allowed(bool allowed);

}  // namespace pemc
