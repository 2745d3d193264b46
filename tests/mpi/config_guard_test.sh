#!/usr/bin/env bash
# No silent config switches and no work before limits. --set never switches a oneof (and in a
# study says which runs it reaches), the README's own examples hold, --validate warns about an
# existing output, enum errors list the valid values, a study's output error names the output, and a
# 2 GiB CSV data file is refused while streaming, in little time and memory (docs/bad-inputs.md,
# "Overrides and --validate", "Absurd sizes").
source "$(dirname "$0")/common.sh"
cd "$WORK"
passed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
QS="$PEMC_SOURCE_DIR/configs/quickstart.pbtxt"
mkdir -p out

# expect EXIT NAME PATTERN COMMAND...: the exit status and a line matching PATTERN (stdout+stderr).
expect() {
  local want=$1 name=$2 pattern=$3 rc
  shift 3
  set +e
  "$@" > "$name.log" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq "$want" ] || { cat "$name.log"; fail "$name: exit $rc, expected $want"; }
  grep -qE -- "$pattern" "$name.log" || { cat "$name.log"; fail "$name: no line matching '$pattern'"; }
  echo "$name: exit $rc: $(grep -m1 -E -- "$pattern" "$name.log" | sed 's/^.*\] //' | cut -c1-220)"
}

# ---- --set and oneofs ---------------------------------------------------------------------------
cat > gauss.pbtxt <<CFG
target { gaussian { mean: [0, 0] } }
sampler { nuts { step_size: 0.2 } }
iterations: 20
seeds { values: [1] }
init { uniform_box { lower: -1 upper: 1 } }
output { path: "gauss.pemc" }
CFG
expect 2 set-banana-on-gaussian "--set 'target.banana.b=0.2': target.banana: the config's target is gaussian, not banana" \
  "$DIST" gauss.pbtxt --validate --set target.banana.b=0.2
expect 2 set-hmc-on-nuts "sampler.hmc: the config's sampler is nuts, not hmc" \
  "$DIST" gauss.pbtxt --validate --set sampler.hmc.step_size=0.05
expect 2 set-init-kind "init.uniform_radius: the config's init is uniform_box, not uniform_radius" \
  "$DIST" gauss.pbtxt --validate --set init.uniform_radius=3
expect 0 set-nuts-on-nuts "OK \(gaussian target, nuts sampler" "$DIST" gauss.pbtxt --validate --set sampler.nuts.step_size=0.05
# The quickstart study: pe_n5 (pseudo-extended NUTS) and nuts. sampler.nuts.* reaches run nuts only
# and never turns pe_n5 into plain NUTS; sampler.hmc.* reaches none, and the message says why (the
# runs' samplers), not something about a field such as n_leapfrog.
expect 0 study-set-nuts "--set 'sampler.nuts.step_size=0.05' applies to run\(s\) 'nuts' only; not to 'pe_n5' \(its sampler is pseudo_extended, not nuts\)" \
  "$DIST" "$QS" --validate --set sampler.nuts.step_size=0.05
expect 2 study-set-hmc "--set 'sampler.hmc.step_size=0.05' reaches no run of the study: 'pe_n5' \(its sampler is pseudo_extended, not hmc\), 'nuts' \(its sampler is nuts, not hmc\)" \
  "$DIST" "$QS" --validate --set sampler.hmc.step_size=0.05
if grep -q n_leapfrog study-set-hmc.log; then cat study-set-hmc.log; fail "the message still blames n_leapfrog"; fi
expect 0 study-set-all "--set 'iterations=50' applies to every run of the study \('pe_n5', 'nuts'\)" \
  "$DIST" "$QS" --validate --set iterations=50
# What --set sampler.nuts.step_size=0.05 does to a run: pe_n5 stays pseudo-extended, nuts changes.
run_mpi 2 "$DIST" "$QS" --iterations 20 --warmup 10 --seeds 1 --set sampler.nuts.step_size=0.05 \
  --set sampler.nuts.adaptation.enabled=false --output out/s.pemc --log-level warn
"$REPORT" summarize out/s.pemc --format json > s.json
python3 - s.json <<'PY' || fail "the override changed the wrong run"
import json, sys
kinds = {r["run_id"]: r["sampler"] for r in json.load(open(sys.argv[1]))["runs"]}
assert kinds == {"pe_n5": "pseudo_extended", "nuts": "nuts"}, kinds
PY
ok "--set never switches a sampler, target or init; in a study it says which runs it reaches"

# The README's examples, as written there.
readme_cmd=$(grep -A1 -E '^mpirun -n 4 build/pemc-dist configs/quickstart.pbtxt --iterations' "$PEMC_SOURCE_DIR/README.md" |
  tr -d '\\\n' | sed 's/  */ /g')
[ -n "$readme_cmd" ] || fail "the README's --set example was not found"
args=${readme_cmd#mpirun -n 4 build/pemc-dist configs/quickstart.pbtxt }
args=${args//out\/trial.pemc/out/trial.pemc}
# shellcheck disable=SC2086
expect 0 readme-example "applies to run\(s\) 'pe_n5' only" "$DIST" "$QS" $args --validate
ok "the README's example is valid: pemc-dist configs/quickstart.pbtxt $args"

# ---- --validate and an existing output; enum values; a study's output -------------------------
touch gauss.pemc
expect 0 validate-existing "pemc-dist: warning: gauss.pemc: output file already exists: the run would refuse it \(use --overwrite to replace it, or --resume to continue it\)" \
  "$DIST" gauss.pbtxt --validate
expect 2 run-existing "gauss.pemc: output file already exists" run_mpi 1 "$DIST" gauss.pbtxt
if grep -q "warning: gauss.pemc" <("$DIST" gauss.pbtxt --validate --overwrite 2>&1); then fail "--overwrite still warns"; fi
ok "--validate warns about an existing output the run would refuse"
sed 's/nuts { step_size: 0.2 }/nuts { step_size: 0.2 metric: DIAG }/' gauss.pbtxt > enum.pbtxt
expect 2 enum-text "sampler.nuts.metric: Unknown enumeration value of \"DIAG\" for field \"metric\". Valid values: METRIC_UNSPECIFIED, UNIT, DIAGONAL, DENSE." \
  "$DIST" enum.pbtxt --validate
expect 2 enum-set "'DIAG' is not a value of pemc.v1.MetricKind; valid: METRIC_UNSPECIFIED, UNIT, DIAGONAL, DENSE" \
  "$DIST" gauss.pbtxt --validate --set sampler.nuts.metric=DIAG
ok "enum errors list the valid values"
expect 2 study-output-dir "^  command line \(--output nodir/x.pemc\): output.path: directory 'nodir' does not exist" \
  "$DIST" "$QS" --validate --output nodir/x.pemc
if grep -q "runs\[0\]" study-output-dir.log; then cat study-output-dir.log; fail "the output error names runs[0]"; fi
ok "a study's output error names the output, not runs[0]"

# ---- a 2 GiB CSV data file: refused while streaming -------------------------------------------
# Just under the 2 GiB size limit, 2 columns of short numbers: 268 million rows. It must be refused
# while streaming, not read whole first (that would take 4 GB and more of memory, and minutes).
{ echo "y,x1"; yes 1,0.5 | head -c $(( (2 << 30) - 100 )) || true; } > big.csv
cat > csv.pbtxt <<CFG
target { horseshoe_logistic { data_file: "big.csv" p0: 1 } }
sampler { hmc { step_size: 0.1 n_leapfrog: 5 } }
iterations: 10
seeds { values: [1] }
output { path: "csv.pemc" }
CFG
# measured COMMAND...: runs it, then prints "time S s, max RSS K KB" (wall time, its peak RSS).
measured() {
  python3 -c '
import resource, subprocess, sys, time
t = time.time()
rc = subprocess.call(sys.argv[1:])
print("time %.2f s, max RSS %d KB" % (time.time() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(rc)' "$@"
}
expect 2 csv-2GiB "big.csv: too much data for a data file: 33554433 data rows of 2 columns by line 33554434 \(of a 2147483553-byte file\) are more than the limit of 67108864 numbers \(CsvOptions::max_values, 512 MiB as doubles\)" \
  measured "$DIST" csv.pbtxt --validate
read -r secs rss < <(sed -n 's/^time \([0-9.]*\) s, max RSS \([0-9]*\) KB$/\1 \2/p' csv-2GiB.log)
rm -f big.csv
[ "${rss:-999999}" -lt 100000 ] || fail "csv-2GiB: max RSS ${rss} KB (limit 100 MB)"
# Under 1 s on an idle machine (pemc-dist's own start, MPI included, is ~0.2 s of it); the bound
# here leaves room for a loaded test machine.
awk -v s="$secs" 'BEGIN { exit !(s < 5) }' || fail "csv-2GiB: took ${secs} s"
ok "a 2 GiB CSV is refused in ${secs} s with ${rss} KB max RSS"

echo "$passed passed, 0 failed"
