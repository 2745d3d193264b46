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
# A slice: tasks 4..9 (the nuts run, whose 4 chains pool their warmup by default, and mala seeds
# 100-101).
run_mpi 2 "$DIST" "$cfg" --output "$WORK/slice.pemc" --task-range 4:10 "${common[@]}"
"$REPORT" export "$WORK/slice.pemc" | sort > "$WORK/slice.csv"
awk -F, '$1 == "run_id" || ($2 >= 4 && $2 <= 9)' "$WORK/n1.csv" | sort > "$WORK/expected.csv"
cmp -s "$WORK/slice.csv" "$WORK/expected.csv" || fail "--task-range 4:10 differs from tasks 4..9 of the full study"
# A slice that splits a pooled run's chains could not draw what the full study draws: refused.
set +e
"$DIST" "$cfg" --validate --output "$WORK/v.pemc" --task-range 3:7 > "$WORK/log" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "holds 1 of the 4 chains of run 'hmc' (tasks 0..3)" "$WORK/log" ||
  { cat "$WORK/log" >&2; fail "--task-range 3:7, which splits the pooled runs, not refused"; }
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
# A study of one run is described by that run's sampler and target (they are not at the top level).
cat > "$WORK/one.pbtxt" <<CFG
target { gaussian { mean: [0, 0] variance: [1, 1] } }
warmup: 20
iterations: 20
seeds { values: [1, 2] }
output { path: "$WORK/one.pemc" }
runs { name: "only" sampler { nuts { step_size: 0.1 } } }
CFG
"$DIST" "$WORK/one.pbtxt" --validate > "$WORK/one.validate" 2>&1 || fail "one-run study invalid"
grep -q "gaussian target, nuts sampler, 2 task(s)" "$WORK/one.validate" || fail "one-run study's --validate line: $(cat "$WORK/one.validate")"
run_mpi 2 "$DIST" "$WORK/one.pbtxt" > "$WORK/one.log" 2>&1
grep -q "2 chains of nuts on gaussian (dim 2)" "$WORK/one.log" || fail "one-run study's start line: $(grep chains "$WORK/one.log")"
echo "6 passed, 0 failed"
