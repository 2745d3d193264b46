#!/usr/bin/env bash
# The posteriordb reference check (ctest label `statistical`; docs/results.md, "Stan models against
# posteriordb"): every posterior in ../shared/posteriordb sampled by pemc on its Stan model and data,
# then `pemc-report reference` (z-scores of every quantity's mean and second moment against the
# reference draws; a posterior passes when no |z| > 4). Prints a Markdown table; exits 1 when any
# posterior fails.
#   SAMPLER=nuts (default) or pe5 (pseudo-extended NUTS, N = 5); POSTERIORS="a b" to choose some;
#   RANKS (default 2), WARMUP (1000), ITERATIONS (1000 per chain, 4 chains); POOLED=true|false
#   sets NUTS's adaptation.pooled (unset: pemc's default, pooled for these 4 chains).
source "$(dirname "$0")/../mpi/common.sh"
DB="${PEMC_SHARED_DIR:-$PEMC_SOURCE_DIR/../shared}/posteriordb"
[ -d "$DB/posteriors" ] || fail "no posteriordb at $DB"
SAMPLER="${SAMPLER:-nuts}"
RANKS="${RANKS:-2}"
WARMUP="${WARMUP:-1000}"
ITERATIONS="${ITERATIONS:-1000}"
export PEMC_STAN_CACHE="${PEMC_STAN_CACHE:-$PEMC_BIN/stan-cache}"
# The sampler, adapting to the acceptance rate the reference was made with (posteriordb used
# adapt_delta 0.95: with 0.8, NUTS under-explores the heavy tails of one_comp_mm_elim_abs).
sampler_block() {  # sampler_block TARGET_ACCEPT
  local pooled=""  # POOLED=true|false sets adaptation.pooled; unset: pemc's default
  [ -n "${POOLED:-}" ] && pooled=" pooled: $POOLED"
  local nuts="nuts { step_size: 0.1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true target_accept: $1$pooled } }"
  case "$SAMPLER" in
    nuts) echo "$nuts" ;;
    pe5) echo "pseudo_extended { n_pseudo: 5 $nuts }" ;;
    *) fail "SAMPLER must be nuts or pe5" ;;
  esac
}
run_mpi() {  # as common.sh's, with room for the slow models (diamonds, the ODE model)
  local n=$1; shift
  timeout 5400 mpirun --oversubscribe -n "$n" "$@"
}
names="${POSTERIORS:-$(cd "$DB/posteriors" && ls *.json | sed 's/\.json$//')}"
echo "| posterior | sampler (target accept) | max abs z | min bulk ESS | ESS/s | sampling chain-s | compile s | verdict |"
echo "|---|---|---|---|---|---|---|---|"
failed=0
for p in $names; do
  read -r model data < <(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['model_name'], d['data_name'])" "$DB/posteriors/$p.json")
  accept=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get('inference', {}).get('method_arguments', {}).get('control', {}).get('adapt_delta', 0.8))" "$DB/reference/$p.info.json")
  python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$DB/data/$data.json.zip" "$WORK"
  start=$(date +%s.%N)
  "$PEMC_BIN/pemc-stan" build "$DB/models/$model.stan" > /dev/null 2> "$WORK/$p.build.log" ||
    { echo "| $p | $SAMPLER | - | - | - | - | - | compile failed: $(tail -1 "$WORK/$p.build.log") |"; failed=1; continue; }
  compile=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
  cat > "$WORK/$p.pbtxt" <<CFG
name: "$p"
target { stan { model_file: "$DB/models/$model.stan" data_file: "$WORK/$data.json" } }
warmup: $WARMUP
iterations: $ITERATIONS
seeds { values: [1, 2, 3, 4] }
output { path: "$WORK/$p.pemc" }
sampler { $(sampler_block "$accept") }
CFG
  if ! run_mpi "$RANKS" "$DIST" "$WORK/$p.pbtxt" --log-level warn > "$WORK/$p.run.log" 2>&1; then
    echo "| $p | $SAMPLER | - | - | - | - | $compile | run failed: $(grep -m1 -i error "$WORK/$p.run.log" | cut -c1-120) |"
    failed=1
    continue
  fi
  rc=0
  "$REPORT" reference "$WORK/$p.pemc" --posteriordb "$DB" --posterior "$p" --format json > "$WORK/$p.ref.json" || rc=$?
  "$REPORT" summarize "$WORK/$p.pemc" --format json > "$WORK/$p.sum.json"
  python3 - "$WORK/$p.ref.json" "$WORK/$p.sum.json" "$p" "$SAMPLER" "$compile" "$rc" "$accept" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))
summary = json.load(open(sys.argv[2]))
files = summary if isinstance(summary, list) else [summary]
chains = [c for f in files for c in f.get("runs", [])]
seconds = sum(c.get("wall_seconds", 0.0) for c in chains) if chains else float("nan")  # chain-seconds: one core each
ess = min(r["ess"] for r in ref["checks"] if r["moment"] == "mean")
rc = int(sys.argv[6])
verdict = "pass" if rc == 0 else ("FAIL" if rc == 3 else f"exit {rc}")
worst = ref["checks"][0]
note = "" if rc == 0 else f" (worst: {worst['name']} {worst['moment']} z = {worst['z']:.1f})"
print(f"| {sys.argv[3]} | {sys.argv[4]} ({sys.argv[7]}) | {ref['max_abs_z']:.2f} | {ess:.0f} | {ess / seconds:.3g} | "
      f"{seconds:.1f} | {sys.argv[5]} | {verdict}{note} |")
PY
  [ "$rc" -eq 0 ] || failed=1
done
[ "$failed" -eq 0 ] && echo "$(echo $names | wc -w) passed, 0 failed" || { echo "posteriordb study: some posteriors failed"; exit 1; }
