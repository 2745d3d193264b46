#!/usr/bin/env bash
# pemc-report compare and diagnose on real runs: two samplers on one 2-D Gaussian (exact truth
# known), 3 seeds each, written by pemc-dist under mpirun. Checks the stable JSON keys, the
# markdown and CSV layouts, grouping across files, the diagnostics of well-mixing chains, and the
# exit code and warnings for a torn file.
source "$(dirname "$0")/common.sh"
passed=0

cat > "$WORK/hmc.pbtxt" <<'CFG'
name: "gauss_hmc"
target { gaussian { mean: [1, -1] covariance: [1.0, 0.3, 0.3, 0.5] } }
sampler { hmc { step_size: 0.2 n_leapfrog: 8 jitter_step_size: true adaptation { enabled: false } } }
warmup: 200
iterations: 1500
seeds { values: [1, 2, 3] }
output { path: "hmc.pemc" }
CFG
cat > "$WORK/nuts.pbtxt" <<'CFG'
name: "gauss_nuts"
target { gaussian { mean: [1, -1] covariance: [1.0, 0.3, 0.3, 0.5] } }
sampler { nuts { step_size: 0.3 adaptation { enabled: true } } }
warmup: 300
iterations: 1500
seeds { values: [4, 5, 6] }
output { path: "nuts.pemc" }
CFG
(cd "$WORK" && run_mpi 2 "$DIST" hmc.pbtxt --log-level warn && run_mpi 3 "$DIST" nuts.pbtxt --log-level warn) \
  || fail "pemc-dist runs failed"
# The NUTS run split over two files by seeds (as a job array would): compare merges them by run_id.
(cd "$WORK" && run_mpi 2 "$DIST" nuts.pbtxt --seeds 1 --output nuts_part.pemc --log-level warn) \
  || fail "partial NUTS run failed"

# 1. JSON: one group per run, the stable keys, 3 chains each, RMSE against the exact truth.
json=$("$REPORT" compare "$WORK/hmc.pemc" "$WORK/nuts.pemc" --format json)
for key in '"by"' '"groups"' '"key"' '"sampler"' '"target"' '"dim"' '"n_chains"' '"files"' \
           '"excluded"' '"mean"' '"sd"' '"rmse"' '"truth"' '"second_moment"' '"rmse_all"' \
           '"wall_seconds_mean"' '"n_gradient_evals_mean"' '"n_draws_mean"' '"kish_ess_mean"' \
           '"mse_x_time"' '"mse_x_grad_evals"' '"estimates"' '"truth_log_z"' '"notes"'; do
  grep -q <<< "$json" "$key:" || fail "compare JSON lacks key $key"
done
[ "$(echo "$json" | grep -c '"n_chains": 3')" -eq 2 ] || fail "expected two groups of 3 chains"
grep -q <<< "$json" '"key": "gauss_hmc"' || fail "no gauss_hmc group"
grep -q <<< "$json" '"key": "gauss_nuts"' || fail "no gauss_nuts group"
passed=$((passed + 1))

# 2. Markdown (the paper's layout: truth row, one row per run) and CSV (header + one row per run).
md=$("$REPORT" compare "$WORK/hmc.pemc" "$WORK/nuts.pemc")
grep -q <<< "$md" '^| run | sampler | chains | E\[x\[1\]\] | E\[x\[2\]\] |' || { echo "$md"; fail "markdown header"; }
grep -q <<< "$md" '^| \*truth\* |  |  | 1 | -1 |' || { echo "$md"; fail "markdown truth row"; }
grep -q <<< "$md" '^| gauss_hmc | hmc | 3 |' || { echo "$md"; fail "markdown hmc row"; }
grep -q <<< "$md" 'RMSE against the exact truth' || fail "markdown RMSE table"
csv=$("$REPORT" compare "$WORK/hmc.pemc" "$WORK/nuts.pemc" --format csv)
[ "$(echo "$csv" | wc -l)" -eq 3 ] || { echo "$csv"; fail "CSV: expected header + 2 rows"; }
echo "$csv" | head -1 | grep -c >/dev/null '^key,sampler,target,dim,n_chains,' || fail "CSV header"
grep -q <<< "$csv" '^gauss_nuts,nuts,gaussian,2,3,' || fail "CSV nuts row"
passed=$((passed + 1))

# 3. Grouping across files: the partial NUTS file adds its chain to the gauss_nuts group
#    (seed 4 again: diagnose warns that identical chains appear twice).
json=$("$REPORT" compare "$WORK/nuts.pemc" "$WORK/nuts_part.pemc" --format json)
grep -q <<< "$json" '"n_chains": 4' || fail "chains of one run in two files were not grouped"
"$REPORT" compare "$WORK/hmc.pemc" "$WORK/nuts.pemc" --by target --format json | grep -c >/dev/null '"n_chains": 6' \
  || fail "--by target did not merge the two runs"
passed=$((passed + 1))

# 4. diagnose: well-mixing chains have R-hat < 1.05 and a bulk ESS in the hundreds at least.
diag=$("$REPORT" diagnose "$WORK/hmc.pemc" "$WORK/nuts.pemc" --format json)
for key in '"run_id"' '"quantity"' '"max_rhat"' '"min_ess_bulk"' '"min_ess_tail"' '"parameters"' \
           '"rhat_bulk"' '"rhat_folded"' '"ess_bulk"' '"ess_tail"' '"chains"' '"mean_accept_stat"' \
           '"n_divergent"' '"mean_tree_depth"' '"kish_ess"' '"estimates"' '"files"'; do
  grep -q <<< "$diag" "$key:" || fail "diagnose JSON lacks key $key"
done
for v in $(echo "$diag" | grep '"max_rhat"' | sed 's/.*: //; s/,//'); do
  awk -v r="$v" 'BEGIN { exit !(r < 1.05) }' || fail "max R-hat $v >= 1.05 for a 2-D Gaussian"
done
for v in $(echo "$diag" | grep '"min_ess_bulk"' | sed 's/.*: //; s/,//'); do
  awk -v e="$v" 'BEGIN { exit !(e > 300) }' || fail "min bulk ESS $v <= 300 from 4500 draws"
done
"$REPORT" diagnose "$WORK/nuts.pemc" "$WORK/nuts_part.pemc" | grep -c >/dev/null "appears in more than one file" \
  || fail "duplicate chains not noted"
"$REPORT" diagnose "$WORK/hmc.pemc" --coords 1 --max-draws 500 --format json > "$WORK/d.json"
grep -q '"thinned_by": 3' "$WORK/d.json" || fail "--max-draws 500 on 1500 draws: expected stride 3"
# Every quantity is diagnosed (Stan's 1-based names); --coords only cuts the table.
grep -q '"name": "x\[2\]"' "$WORK/d.json" || fail "diagnose JSON lacks x[2]"
grep -q '"name": "x\[0\]"' "$WORK/d.json" && fail "diagnose JSON names a 0-based x[0]"
# The table lists lp__ (which stands for the potential) first, then the --coords worst.
"$REPORT" diagnose "$WORK/hmc.pemc" --coords 1 > "$WORK/d1.txt"
grep -q "and 1 more" "$WORK/d1.txt" || { cat "$WORK/d1.txt" >&2; fail "--coords 1: no 'and 1 more'"; }
passed=$((passed + 1))

# 5. A torn file: compare and diagnose still report the good part, warn, and exit 1.
head -c -200 "$WORK/hmc.pemc" > "$WORK/torn.pemc"
set +e
"$REPORT" compare "$WORK/torn.pemc" --include-incomplete --format json > "$WORK/c.json" 2> "$WORK/c.err"
rc_c=$?
"$REPORT" diagnose "$WORK/torn.pemc" > "$WORK/d.txt" 2> "$WORK/d.err"
rc_d=$?
set -e
[ "$rc_c" -eq 1 ] || fail "compare of a torn file: expected exit 1, got $rc_c"
[ "$rc_d" -eq 1 ] || fail "diagnose of a torn file: expected exit 1, got $rc_d"
grep -q "damaged at byte" "$WORK/c.err" || fail "compare: no damage warning"
grep -q "damaged at byte" "$WORK/d.err" || fail "diagnose: no damage warning"
grep -q '"n_chains": 3' "$WORK/c.json" || fail "compare --include-incomplete lost chains of the torn file"
grep -q "gauss_hmc" "$WORK/d.txt" || fail "diagnose of the torn file reported nothing"
passed=$((passed + 1))

echo "$passed passed, 0 failed"
