#!/usr/bin/env bash
# A developer's check, not part of the default suite (the build alone takes ~30 min on 2 cores):
# build pemc with AddressSanitizer and UndefinedBehaviorSanitizer into ./build-asan and run the unit
# tests, or with --mpi also the MPI end-to-end tests, under them. Any report fails the run.
#   bash deploy/sanitize.sh [--mpi]
# Leak detection is off: Open MPI and protobuf keep process-lifetime allocations that are not bugs.
# (It found a test target reading and writing past its vectors: see the history of
# tests/unit/hmc/leapfrog_test.cpp.)
set -euo pipefail
cd "$(dirname "$0")/.."
labels="unit"
case "${1:-}" in
  "") ;;
  --mpi) labels="unit|mpi" ;;
  *) echo "usage: bash deploy/sanitize.sh [--mpi]" >&2; exit 2 ;;
esac
bash deploy/install-deps.sh
flags="-fsanitize=address,undefined -fno-omit-frame-pointer"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPEMC_BUILD_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  -DCMAKE_SHARED_LINKER_FLAGS="$flags" > build-asan.log 2>&1 || { cat build-asan.log; exit 1; }
cmake --build build-asan -j"$(nproc)" >> build-asan.log 2>&1 || { tail -50 build-asan.log; exit 1; }
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PEMC_SANITIZED=1  # tests/mpi/fault_bad_input_test.sh: no ulimit -v under ASan
cd build-asan
ctest -L "$labels" --output-on-failure -j"$(nproc)" --timeout 900
