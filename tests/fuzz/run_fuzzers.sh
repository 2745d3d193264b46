#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz for a fixed time each (a smoke run, not part of ctest).
#
#   tests/fuzz/run_fuzzers.sh [BUILD_DIR] [FUZZER...]
#     BUILD_DIR   the fuzz build (default: build-fuzz in this repo's root), the main project
#                 configured with -DPEMC_FUZZ=ON; configured and built here (target `fuzzers`) if
#                 it has no make_fuzz_seeds yet (needs clang: deploy/install-fuzz-deps.sh)
#     FUZZER      names to run (default: all fuzz_* executables in BUILD_DIR)
#   Environment:
#     FUZZ_SECONDS   seconds per fuzzer (default 60)
#     FUZZ_JOBS      parallel fuzzing processes per fuzzer (default 1; the machine has 2 cores)
#     FUZZ_WORK      where corpora, dictionaries and crash files go (default BUILD_DIR/fuzz-work);
#                    corpora are kept between runs, so later runs start where earlier ones stopped
#     FUZZ_ARGS      extra libFuzzer flags
#     FUZZ_BUILD_JOBS  parallel compile jobs when this script builds the fuzzers (default 2)
#
# Exit status: 0 if no fuzzer found anything, 1 otherwise. A finding leaves its input as
# FUZZ_WORK/artifacts/<fuzzer>/crash-* (or leak-*, oom-*, timeout-*) and its log as
# FUZZ_WORK/<fuzzer>.log; reproduce with `BUILD_DIR/<fuzzer> FILE`.
# Allocations above 256 MB in one call count as findings (-malloc_limit_mb): every input here is a
# few KB, so such an allocation means a size taken from the input was trusted before being checked.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build-fuzz}
shift || true
SECONDS_EACH=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-1}
WORK=${FUZZ_WORK:-$BUILD/fuzz-work}

if [ ! -x "$BUILD/make_fuzz_seeds" ]; then
  echo "run_fuzzers: building fuzzers in $BUILD"
  launcher=()
  command -v ccache >/dev/null &&
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  cmake -S "$ROOT" -B "$BUILD" -DPEMC_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
    "${launcher[@]}" >/dev/null
  cmake --build "$BUILD" -j"${FUZZ_BUILD_JOBS:-2}" --target fuzzers >/dev/null
fi

mkdir -p "$WORK"
"$BUILD/make_fuzz_seeds" "$WORK" "$ROOT"/configs/*.pbtxt "$ROOT"/configs/*/*.pbtxt 2>/dev/null |
  sed 's/^/run_fuzzers: /' || true

if [ $# -gt 0 ]; then
  FUZZERS=("$@")
else
  FUZZERS=()
  for f in "$BUILD"/fuzz_*; do [ -x "$f" ] && FUZZERS+=("$(basename "$f")"); done
fi

failed=()
for name in "${FUZZERS[@]}"; do
  exe="$BUILD/$name"
  [ -x "$exe" ] || { echo "run_fuzzers: no fuzzer $exe" >&2; failed+=("$name"); continue; }
  corpus="$WORK/corpus/$name"
  artifacts="$WORK/artifacts/$name/"
  mkdir -p "$corpus" "$artifacts"
  dict=()
  [ -f "$WORK/$name.dict" ] && dict=(-dict="$WORK/$name.dict")
  seeds=()
  [ -d "$WORK/seeds/$name" ] && seeds=("$WORK/seeds/$name")
  log="$WORK/$name.log"
  start=$(date +%s)
  set +e
  # -jobs/-workers: libFuzzer forks JOBS processes; with 1 it runs in this process.
  # shellcheck disable=SC2086
  "$exe" "$corpus" "${seeds[@]}" "${dict[@]}" -max_total_time="$SECONDS_EACH" \
    -artifact_prefix="$artifacts" -malloc_limit_mb=256 -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 $( [ "$JOBS" -gt 1 ] && echo "-jobs=$JOBS -workers=$JOBS" ) ${FUZZ_ARGS:-} \
    > "$log" 2>&1
  rc=$?
  set -e
  secs=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s+=$2} END {print s+0}')
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
  ncorp=$(find "$corpus" -type f | wc -l)
  if [ $rc -eq 0 ]; then
    echo "run_fuzzers: $name: OK in ${secs}s, $execs runs, coverage ${cov:-?} edges, corpus $ncorp files"
  else
    echo "run_fuzzers: $name: FINDING (exit $rc) after ${secs}s; log $log; inputs in $artifacts" >&2
    grep -E '^==[0-9]+==ERROR|SUMMARY|runtime error|deadly signal|out-of-memory|malloc\(' "$log" | head -5 >&2 || true
    failed+=("$name")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "run_fuzzers: findings in: ${failed[*]}" >&2
  exit 1
fi
echo "run_fuzzers: all ${#FUZZERS[@]} fuzzers ran ${SECONDS_EACH}s each without findings"
