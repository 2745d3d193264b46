#!/usr/bin/env bash
# The multimodal benchmark (issue 36, item 6; ctest `statistical.multimodal`, label `statistical`):
# every case of ../shared/multimodal and tests/data/multimodal (Stan models with exact truth) run by
# pemc-dist with each sampler, 4 chains (seeds 1-4), exported as CmdStan CSVs and checked by
# ../shared/multimodal/check_multimodal.py (max |z| <= 4.5 over means and second moments, every mode's
# mass, split R-hat <= 1.05; log Z against the truth when the sampler estimates one). Per cell it
# records what pemc said (footer warnings, untrusted keys, diagnose's R-hat) beside the verdict; a
# wrong answer that pemc did not flag is "WRONG AND TRUSTED". Writes OUT/table.md and OUT/results.json.
#
#   CASES="mix2 gmix_d6_k3"   cases (default: all of both folders)
#   SAMPLERS="pt ct"          default: nuts pe pt ct st ais (each at its documented defaults);
#                             the docs' settings today: nuts_docs pe_docs pt_docs pt_power_docs ct_docs
#                             (and st_docs ais_docs); tests/statistical/multimodal/samplers.sh lists them
#   RANKS (2), OUT (results dir, default $PEMC_BIN/multimodal_study),
#   CELL_CPU (120: CPU seconds per rank, so at most 4 CPU-minutes a cell with 2 ranks; a CPU limit,
#   not a wall-clock one, so that a loaded machine does not turn slow cells into timeouts),
#   CELL_TIMEOUT (3600 s of wall time, a backstop)
#
# Warmup + iterations per chain, by family (CPU per cell: seconds for NUTS, up to a few minutes for
# the tempering samplers and PE on 2 cores; a run that reaches a limit is reported as "timeout"):
#   label_switching 500 + 1000, squared_observation 500 + 2000, gaussian_mixture 500 + 2000.
# Exit 0 when every cell ran (no refusal, crash or timeout), no cell is wrong and trusted, and every
# cell of the samplers in REQUIRE_PASS (default "pt ct", the issue's requirement) passes the checker.
source "$(dirname "$0")/../mpi/common.sh"
HERE="$PEMC_SOURCE_DIR/tests/statistical/multimodal"
source "$HERE/samplers.sh"
SHARED="${PEMC_SHARED_DIR:-$PEMC_SOURCE_DIR/../shared}/multimodal"
CHECKER="$SHARED/check_multimodal.py"
OWN="$PEMC_SOURCE_DIR/tests/data/multimodal"
RANKS="${RANKS:-2}"
OUT="${OUT:-$PEMC_BIN/multimodal_study}"
CELL_CPU="${CELL_CPU:-120}"
CELL_TIMEOUT="${CELL_TIMEOUT:-3600}"
SAMPLERS="${SAMPLERS:-nuts pe pt ct st ais}"
REQUIRE_PASS="${REQUIRE_PASS:-pt ct}"
export PEMC_STAN_CACHE="${PEMC_STAN_CACHE:-$PEMC_BIN/stan-cache}"
[ -x "$CHECKER" ] || fail "no checker at $CHECKER"
mkdir -p "$OUT"

case_dir() { [ -f "$SHARED/$1.stan" ] && echo "$SHARED" || { [ -f "$OWN/$1.stan" ] && echo "$OWN"; } || fail "no case $1"; }
all_cases=$( (cd "$SHARED" && ls *.truth.json; cd "$OWN" && ls *.truth.json) | sed 's/\.truth\.json$//')
CASES="${CASES:-$all_cases}"

family_lengths() {  # family_lengths TRUTH.json -> "WARMUP ITERATIONS"
  case "$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["family"])' "$1")" in
    label_switching) echo "500 1000" ;;
    *) echo "500 2000" ;;
  esac
}

for c in $CASES; do
  dir=$(case_dir "$c")
  data=""; [ -f "$dir/$c.data.json" ] && data="$dir/$c.data.json"
  # Compile once into the shared cache (docs/stan.md); every cell then loads it.
  "$PEMC_BIN/pemc-stan" build "$dir/$c.stan" > "$OUT/$c.build.log" 2>&1 || echo "compile failed: $c (see $OUT/$c.build.log)"
  read -r warmup iterations < <(family_lengths "$dir/$c.truth.json")
  for s in $SAMPLERS; do
    cell="$OUT/cells/${c}__$s"
    rm -rf "$cell"; mkdir -p "$cell"
    block=$(sampler_block "$s") || fail "unknown sampler $s (known: $(known_samplers))"
    cat > "$cell/run.pbtxt" <<CFG
name: "${c}__$s"
target { stan { model_file: "$dir/$c.stan" data_file: "$data" } }
sampler { $block }
warmup: $warmup
iterations: $iterations
seeds { values: [1, 2, 3, 4] }
output { path: "$cell/run.pemc" }
CFG
    echo "== $c / $s: $block"
    rc=0
    # ulimit -t: every rank gets CELL_CPU seconds of CPU (SIGXCPU beyond; cell.py reports "timeout").
    ( ulimit -c 0; ulimit -S -t "$CELL_CPU"; exec /usr/bin/time -f "%e %U %S" -o "$cell/time.txt" timeout "$CELL_TIMEOUT" \
      mpirun --oversubscribe -n "$RANKS" "$DIST" "$cell/run.pbtxt" --log-level warn ) > "$cell/run.log" 2>&1 || rc=$?
    echo "$CELL_CPU $CELL_TIMEOUT" > "$cell/limits"
    echo "$rc" > "$cell/exit_code"
    if [ -f "$cell/run.pemc" ] && [ "$rc" -ne 124 ] && ! grep -q "signal 24" "$cell/run.log"; then
      "$REPORT" summarize "$cell/run.pemc" --format json > "$cell/summary.json" 2> "$cell/summary.err" || true
      "$REPORT" diagnose "$cell/run.pemc" --format json > "$cell/diagnose.json" 2> "$cell/diagnose.err" || true
      resample=$(/usr/bin/python3 -c 'import json,sys; print("--resample --seed 1 --config " + sys.argv[2] if any(r.get("weighted") for r in json.load(open(sys.argv[1]))["runs"]) else "")' "$cell/summary.json" "$cell/run.pbtxt" 2>/dev/null || true)
      # shellcheck disable=SC2086
      "$REPORT" export "$cell/run.pemc" --format cmdstan --output-dir "$cell/csv" $resample > "$cell/export.log" 2>&1 || true
      logz=$(/usr/bin/python3 "$HERE/pooled_log_z.py" "$cell/summary.json" 2>/dev/null || true)
      # shellcheck disable=SC2086
      "$CHECKER" "$dir/$c.truth.json" "$cell"/csv/*.csv $logz --json "$cell/check.json" > "$cell/check.txt" 2>&1 || true
    fi
    /usr/bin/python3 "$HERE/cell.py" "$cell" "$c" "$s" "$dir/$c.truth.json" "$warmup" "$iterations" "$block" | tee -a "$OUT/progress.txt"
  done
done
/usr/bin/python3 "$HERE/table.py" "$OUT" --cases "$CASES" --samplers "$SAMPLERS" --require-pass "$REQUIRE_PASS"
