#!/usr/bin/env bash
# The README's second command (and what CI runs): install dependencies, build everything (what the
# quickstart did not: the tests, benchmarks, pemc-stan and pemc-stanc), run the default
# test suite: unit tests, MPI end-to-end tests, and the SLURM scripts on a real single-node Slurm
# (tests/slurm; started by ../shared/tools/slurm-local.sh). Long statistical studies and benchmarks
# are separate (see docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
bash deploy/build.sh
cd build
ctest -L "unit|mpi|slurm" --output-on-failure -j"$(nproc)" --timeout 900
