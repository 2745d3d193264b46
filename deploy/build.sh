#!/usr/bin/env bash
# Configure and build pemc into ./build (Release-with-debug-info). Re-running rebuilds incrementally.
#   bash deploy/build.sh                        # everything: libraries, tools, tests, benchmarks
#   bash deploy/build.sh pemc-dist pemc-report  # only the named targets (and what they need)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo > build.log 2>&1 || { cat build.log; exit 1; }
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}" >> build.log 2>&1 || { tail -50 build.log; exit 1; }
echo "build: ok${*:+ ($*)} (log in build.log)"
