#!/usr/bin/env bash
# The README's first command: install dependencies, build the two programs the demo needs, then run
# the paper's headline demo (configs/quickstart.pbtxt: Kou mixture scenario (a), pseudo-extended
# NUTS with N = 5 vs plain NUTS, 2 seeds each, as one two-run study) with 4 ranks, and print the
# comparison over seeds (RMSE of the moments against the exact ones: PE finds all 20 modes, plain
# NUTS does not). Tests, benchmarks and the Stan compiler (pemc-stanc) are left to deploy/test.sh
# and deploy/build.sh, so the first result comes in minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
bash deploy/build.sh pemc-dist pemc-report
mkdir -p out
CONFIG=configs/quickstart.pbtxt
OUTPUT=out/quickstart.pemc
# Root-safe and core-count-safe MPI launch (containers and CI run as root on 2 cores).
start=$(date +%s.%N)
mpirun --allow-run-as-root --oversubscribe -n 4 build/pemc-dist "$CONFIG" --output "$OUTPUT" --overwrite
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
echo
echo "== output: $(pwd)/$OUTPUT (run took ${secs} s)"
echo "== PE (N = 5) vs NUTS on the Kou (a) mixture, RMSE over seeds against the exact moments:"
build/pemc-report compare "$OUTPUT"
