#!/usr/bin/env bash
# The run's outward contract: exit codes, refusal to clobber output, summary JSON keys, header/footer.
source "$(dirname "$0")/common.sh"
cfg="$PEMC_SOURCE_DIR/configs/quickstart.pbtxt"
out="$WORK/run.pemc"
passed=0

# 1. A normal run: exit 0, verify OK, summary has the stable keys and 4 chains with 300 draws each.
run_mpi 3 "$DIST" "$cfg" --output "$out" --iterations 300 --warmup 100 --log-level warn
"$REPORT" verify "$out" | grep -c >/dev/null ": OK (" || fail "verify did not say OK"
json=$("$REPORT" summarize "$out" --format json)
for key in run_id sampler target seed n_draws mean second_moment n_gradient_evals wall_seconds; do
  grep -q <<< "$json" "\"$key\":" || fail "summary JSON lacks key $key"
done
[ "$(echo "$json" | grep -c '"n_draws": 300')" -eq 4 ] || fail "expected 4 chains with 300 draws"
passed=$((passed + 1))

# 2. An existing output file is refused (exit 2) and left untouched.
before=$(md5sum < "$out")
set +e
run_mpi 2 "$DIST" "$cfg" --output "$out" --iterations 10 > "$WORK/log" 2>&1
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "overwriting an existing output was not refused"
grep -q "already exists" "$WORK/log" || fail "no 'already exists' message"
[ "$(md5sum < "$out")" = "$before" ] || fail "the refused run changed the existing output"
passed=$((passed + 1))

# 3. --overwrite replaces it.
run_mpi 2 "$DIST" "$cfg" --output "$out" --iterations 10 --warmup 0 --overwrite --log-level warn
"$REPORT" summarize "$out" --format json | grep -c >/dev/null '"n_draws": 10' || fail "--overwrite did not replace"
passed=$((passed + 1))

# 4. A bad config exits 2 on every rank count, before any output is created, naming file:line and field.
cat > "$WORK/bad.pbtxt" <<'PB'
target { gaussian { mean: [0, 0] } }
sampler { hmc { step_size: -0.5 n_leapfrog: 10 } }
iterations: 100
seeds { values: [1] }
output { path: "never-written.pemc" }
PB
for n in 1 4; do
  set +e
  (cd "$WORK" && run_mpi "$n" "$DIST" bad.pbtxt > log 2>&1)
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || { cat "$WORK/log"; fail "bad config: expected exit 2 with -n $n, got $rc"; }
  grep -q "bad.pbtxt:2" "$WORK/log" || { cat "$WORK/log"; fail "error does not name bad.pbtxt:2"; }
  grep -q "sampler.hmc.step_size" "$WORK/log" || fail "error does not name the field"
  [ ! -e "$WORK/never-written.pemc" ] || fail "output was created for a bad config"
done
passed=$((passed + 1))

# 5. --validate checks without running; --version and --help work without mpirun.
"$DIST" "$cfg" --validate --output "$WORK/v.pemc" | grep -c >/dev/null "OK" || fail "--validate did not say OK"
"$DIST" --version | grep -c >/dev/null "pemc-dist" || fail "--version"
"$DIST" --help | grep -c >/dev/null -- "--set" || fail "--help does not list --set"
passed=$((passed + 1))

# 6. A torn file (a crash mid-write) is summarised up to the damage with a warning, exit 1.
head -c -100 "$out" > "$WORK/torn.pemc"
set +e
"$REPORT" summarize "$WORK/torn.pemc" --format json > "$WORK/torn.json" 2> "$WORK/torn.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "torn file: expected exit 1, got $rc"
grep -q "damaged at byte" "$WORK/torn.err" || fail "torn file: no warning"
grep -q '"n_draws"' "$WORK/torn.json" || fail "torn file: nothing summarised"
passed=$((passed + 1))

echo "$passed passed, 0 failed"
