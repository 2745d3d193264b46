#!/usr/bin/env bash
# Degenerate pseudo-extended weights are reported (issue 31): a 10-D mixture of 4 separated
# Gaussians with the paper's flat g(beta) (beta_instrumental.a = 1), where q's beta marginal
# ~ beta^-5 pins the instrumental pseudo-samples at beta_lower and one pseudo-sample carries every
# draw, must warn in the run log, in the footer (ChainSummary.warnings, read by summarize) and in
# diagnose (table, JSON, stderr); the same run with the default g (a = d/2 + 1 = 6) must not. Also: the
# default a the run used is filled into its config and logged.
source "$(dirname "$0")/common.sh"

# count_runs FILE EXPR: how many entries r of FILE's "runs" satisfy the Python expression EXPR;
# degenerate(ws) keeps the degeneracy warnings of a list (the run's mode check may add others).
count_runs() {
  python3 -c "import json, sys
degenerate = lambda ws: [w for w in ws if 'weights degenerate' in w]
print(sum(1 for r in json.load(open(sys.argv[1]))['runs'] if $2))" "$1"
}

# mixture_config NAME G: the 10-D mixture (means (+-6, +-6, 0, ..., 0), variance 0.25, weights
# 0.1 .. 0.4), PE NUTS with N = 5 and beta_lower 0.001 as in the issue, g given by G.
mixture_config() {
  local zeros=", 0, 0, 0, 0, 0, 0, 0, 0"
  cat <<CFG
name: "$1"
target { mixture {
  components { weight: 0.1 mean: [6, 6$zeros] variance: 0.25 }
  components { weight: 0.2 mean: [6, -6$zeros] variance: 0.25 }
  components { weight: 0.3 mean: [-6, 6$zeros] variance: 0.25 }
  components { weight: 0.4 mean: [-6, -6$zeros] variance: 0.25 }
} }
sampler { pseudo_extended {
  n_pseudo: 5
  beta_lower: 0.001
  $2
  nuts { step_size: 0.1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } }
} }
warmup: 300
iterations: 400
seeds { values: [1, 2] }
output { path: "$1.pemc" }
CFG
}
mixture_config flat "beta_instrumental { a: 1 }" > "$WORK/flat.pbtxt"
mixture_config default "" > "$WORK/default.pbtxt"
for run in flat default; do
  (cd "$WORK" && run_mpi 2 "$DIST" "$run.pbtxt" > "$run.log" 2>&1) || { cat "$WORK/$run.log"; fail "$run: pemc-dist failed"; }
done
passed=0

# 1. The run log: each degenerate chain when it ends, and the run at the end.
[ "$(grep -c 'pseudo-extended weights degenerate' "$WORK/flat.log")" -ge 3 ] \
  || { cat "$WORK/flat.log"; fail "flat g: the log does not warn per chain and at the end"; }
grep -qF '[warning] 2 of 2 chains: pseudo-extended weights degenerate' "$WORK/flat.log" \
  || { cat "$WORK/flat.log"; fail "flat g: no end-of-run warning"; }
if grep -q 'weights degenerate' "$WORK/default.log"; then
  cat "$WORK/default.log"; fail "default g: warned"
fi
passed=$((passed + 1))

# 2. The footer, through summarize: warnings per chain (JSON) and marked rows plus the full text
#    once (table); the statistics as estimates.
"$REPORT" summarize "$WORK/flat.pemc" --format json > "$WORK/flat.json"
[ "$(count_runs "$WORK/flat.json" "len(degenerate(r['warnings'])) == 1")" -eq 2 ] \
  || fail "flat g: summarize JSON lacks a warning per chain"
for key in max_weight_mean kish_ess_per_draw beta_at_lower_fraction weight_handoff_rate; do
  [ "$(count_runs "$WORK/flat.json" "'$key' in r['estimates']")" -eq 2 ] \
    || fail "flat g: estimate $key missing"
done
table=$("$REPORT" summarize "$WORK/flat.pemc")
[ "$(grep -c '\[warning: pseudo-extended weights degenerate\]' <<< "$table")" -eq 2 ] \
  || { echo "$table"; fail "flat g: summarize table does not mark both chains"; }
grep -q 'WARNING: run flat, 2 of 2 chains: pseudo-extended weights degenerate' <<< "$table" \
  || { echo "$table"; fail "flat g: summarize table does not print the warning"; }
"$REPORT" summarize "$WORK/default.pemc" --format json > "$WORK/default.json"
[ "$(count_runs "$WORK/default.json" "len(degenerate(r['warnings'])) > 0")" -eq 0 ] \
  || fail "default g: summarize reports warnings"
"$REPORT" summarize "$WORK/default.pemc" | grep -c 'weights degenerate' > /dev/null && fail "default g: summarize table warns"
passed=$((passed + 1))

# 3. diagnose: run-level warning (table, JSON, stderr) and per-chain warnings (JSON).
"$REPORT" diagnose "$WORK/flat.pemc" --format json > "$WORK/flat.diag.json" 2> "$WORK/flat.diag.err"
[ "$(count_runs "$WORK/flat.diag.json" "len(degenerate(r['warnings'])) == 1")" -eq 1 ] \
  || fail "flat g: diagnose JSON has no run warning"
[ "$(count_runs "$WORK/flat.diag.json" "sum(len(degenerate(c['warnings'])) == 1 for c in r['chains']) == 2")" -eq 1 ] \
  || fail "flat g: diagnose JSON lacks the chain warnings"
grep -q 'pemc-report: warning: run flat: 2 of 2 chains: pseudo-extended weights degenerate' "$WORK/flat.diag.err" \
  || { cat "$WORK/flat.diag.err"; fail "flat g: diagnose does not warn on stderr"; }
# (Captured first: grep -q in a pipe may close it before pemc-report has written everything,
# and pipefail would then report pemc-report's SIGPIPE.)
diag_table=$("$REPORT" diagnose "$WORK/flat.pemc" 2> /dev/null)
grep -q 'WARNING: 2 of 2 chains: pseudo-extended weights degenerate' <<< "$diag_table" \
  || { echo "$diag_table"; fail "flat g: diagnose table has no WARNING line"; }
"$REPORT" diagnose "$WORK/default.pemc" --format json > "$WORK/default.diag.json" 2> "$WORK/default.diag.err"
[ "$(count_runs "$WORK/default.diag.json" "len(degenerate(r['warnings'])) > 0")" -eq 0 ] \
  || fail "default g: diagnose JSON has a run warning"
! grep -q 'weights degenerate' "$WORK/default.diag.err" || { cat "$WORK/default.diag.err"; fail "default g: diagnose warned"; }
passed=$((passed + 1))

# 4. The default a = 6 (d/2 + 1 for d = 10) is filled in (and so recorded in the header's config) and
#    logged; the flat run's explicit a = 1 stays.
grep -q 'sampler.pseudo_extended.beta_instrumental.a = 6 (the default for the target.s dimension d = 10' "$WORK/default.log" \
  || { cat "$WORK/default.log"; fail "default g: the filled-in a is not logged"; }
grep -q 'beta_instrumental.a = ' "$WORK/flat.log" && fail "flat g: an explicit a was replaced"
passed=$((passed + 1))

echo "$passed passed, 0 failed"
