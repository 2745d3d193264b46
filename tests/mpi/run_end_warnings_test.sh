#!/usr/bin/env bash
# The run-level warnings at the end of a run (issue 38 item 4; src/runner/run_warnings.hpp):
# a NUTS run on a 3-D Gaussian with scales 0.1 .. 10, a unit metric and max_tree_depth 5 saturates
# its trees on part of its draws. Its log must end with the tree-depth warning exactly once (not
# once per chain), every footer warning must be in the log exactly once, and the footer
# (Footer.warnings) must carry the same tree-depth line with the numbers pemc-report summarize
# computes from the draws. A healthy run (a standard Gaussian, default depth) has no warnings.
source "$(dirname "$0")/common.sh"
TOOL=(python3 "$PEMC_SOURCE_DIR/tests/support/record_tool.py")

config() {  # NAME TARGET NUTS
  cat <<CFG
name: "$1"
target { $2 }
warmup: 300
iterations: 500
seeds { values: [21, 22, 23, 24] }
init { uniform_radius: 1 }
output { path: "$1.pemc" }
sampler { nuts { $3 adaptation { enabled: true } } }
CFG
}
config deep "gaussian { mean: [1, -1, 0] variance: [0.01, 1, 100] }" \
  "step_size: 0.1 max_tree_depth: 5 metric: UNIT" > "$WORK/deep.pbtxt"
config healthy "gaussian { mean: [0, 0, 0] variance: [1, 1, 1] }" "" > "$WORK/healthy.pbtxt"
for run in deep healthy; do
  (cd "$WORK" && run_mpi 2 "$DIST" "$run.pbtxt" > "$run.log" 2>&1) \
    || { cat "$WORK/$run.log"; fail "$run: pemc-dist failed"; }
done

footer_warnings() {  # FILE: the footer's warnings, one per line
  local last
  last=$("${TOOL[@]}" kinds "$1" | awk '$2 == "footer" { print $1 }')
  [ -n "$last" ] || fail "$1: no footer"
  "${TOOL[@]}" decode "$1" "$last" | sed -n 's/^  warnings: "\(.*\)"$/\1/p'
}

# 1. The saturating run: the tree-depth line once in the log, after the chain lines, and in the
#    footer with summarize's numbers (draws at the maximum depth, from the records).
footer_warnings "$WORK/deep.pemc" > "$WORK/deep.footer"
[ "$(grep -c '^tree depth: ' "$WORK/deep.footer")" -eq 1 ] \
  || { cat "$WORK/deep.footer"; fail "deep: the footer lacks the tree-depth warning"; }
[ "$(grep -c '\[warning\] tree depth: ' "$WORK/deep.log")" -eq 1 ] \
  || { cat "$WORK/deep.log"; fail "deep: the log does not warn about tree depth exactly once"; }
while IFS= read -r line; do
  [ "$(grep -cF "[warning] $line" "$WORK/deep.log")" -eq 1 ] \
    || { cat "$WORK/deep.log"; fail "deep: footer warning not logged exactly once: $line"; }
done < "$WORK/deep.footer"
chain_line=$(grep -n ' chain   3 seed ' "$WORK/deep.log" | cut -d: -f1)
depth_line=$(grep -n '\[warning\] tree depth: ' "$WORK/deep.log" | cut -d: -f1)
[ "$depth_line" -gt "$chain_line" ] || { cat "$WORK/deep.log"; fail "deep: warning before the chain lines"; }
"$REPORT" summarize "$WORK/deep.pemc" --format json > "$WORK/deep.json" || fail "summarize"
expected=$("${PEMC_PYTHON:-/usr/bin/python3}" - "$WORK/deep.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["posterior"][0]
n = sum(c["n_max_tree_depth"] for c in run["chains"])
total = sum(c["draws"] for c in run["chains"])
print(f"tree depth: {n} of {total} post-warmup draws")
PY
)
grep -qF "$expected" "$WORK/deep.footer" \
  || { cat "$WORK/deep.footer"; fail "deep: footer's tree-depth numbers differ from summarize's ($expected)"; }

# 2. The healthy run: no warning in the footer or the log.
footer_warnings "$WORK/healthy.pemc" > "$WORK/healthy.footer"
[ ! -s "$WORK/healthy.footer" ] || { cat "$WORK/healthy.footer"; fail "healthy: footer warnings"; }
if grep -q '\[warning\]' "$WORK/healthy.log"; then cat "$WORK/healthy.log"; fail "healthy: warned"; fi
echo "run_end_warnings: 2 checks passed"
