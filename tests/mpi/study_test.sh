#!/usr/bin/env bash
# Studies run as a task farm: the draws do not depend on the rank count or on which rank took
# which task, and a --task-range slice holds exactly the draws of those tasks in the full study.
source "$(dirname "$0")/common.sh"
cfg="$PEMC_SOURCE_DIR/configs/studies/banana_kernels.pbtxt"
common=(--iterations 300 --warmup 100 --log-level warn)
run_mpi 1 "$DIST" "$cfg" --output "$WORK/n1.pemc" "${common[@]}"
run_mpi 4 "$DIST" "$cfg" --output "$WORK/n4.pemc" "${common[@]}"
"$REPORT" export "$WORK/n1.pemc" | sort > "$WORK/n1.csv"
"$REPORT" export "$WORK/n4.pemc" | sort > "$WORK/n4.csv"
cmp -s "$WORK/n1.csv" "$WORK/n4.csv" || fail "study draws differ between -n 1 and -n 4"
# 3 runs x 4 seeds = 12 tasks; the mala run overrides iterations? --iterations overrides every run.
[ "$(grep -c '^mala,' "$WORK/n1.csv")" -eq $((4 * 300)) ] || fail "mala rows"
# A slice: tasks 3..6 (hmc seed 103, nuts seeds 100-102).
run_mpi 2 "$DIST" "$cfg" --output "$WORK/slice.pemc" --task-range 3:7 "${common[@]}"
"$REPORT" export "$WORK/slice.pemc" | sort > "$WORK/slice.csv"
awk -F, '$1 == "run_id" || ($2 >= 3 && $2 <= 6)' "$WORK/n1.csv" | sort > "$WORK/expected.csv"
cmp -s "$WORK/slice.csv" "$WORK/expected.csv" || fail "--task-range 3:7 differs from tasks 3..6 of the full study"
# Summaries name each run's sampler and compare with the banana's exact truth.
json=$("$REPORT" summarize "$WORK/n4.pemc" --format json)
for s in hmc nuts mala; do
  grep -q <<< "$json" "\"sampler\": \"$s\"" || fail "summary lacks sampler $s"
done
grep -q <<< "$json" '"error_mean"' || fail "summary lacks error_mean"
# Bad ranges are config errors.
set +e
"$DIST" "$cfg" --validate --output "$WORK/v.pemc" --task-range 5:99 > "$WORK/log" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "task-range" "$WORK/log" || fail "--task-range 5:99 not refused"
echo "5 passed, 0 failed"
