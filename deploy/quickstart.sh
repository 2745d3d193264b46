#!/usr/bin/env bash
# The README's first command: install dependencies, build, run the default example with 4 ranks,
# print where the output is and its summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
bash deploy/build.sh
mkdir -p out
CONFIG=configs/quickstart.pbtxt
OUTPUT=out/quickstart.pemc
# Root-safe and core-count-safe MPI launch (containers and CI run as root on 2 cores).
mpirun --allow-run-as-root --oversubscribe -n 4 build/pemc-dist "$CONFIG" --output "$OUTPUT" --overwrite
echo
echo "== output: $(pwd)/$OUTPUT"
build/pemc-report summarize "$OUTPUT"
