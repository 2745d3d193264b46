#!/usr/bin/env bash
# The run-level warnings at the end of a run (issue 38 item 4; src/runner/run_warnings.hpp):
# a NUTS run on a 3-D Gaussian with scales 0.1 .. 10, a unit metric and max_tree_depth 5 saturates
# its trees on part of its draws. Its log must end with the tree-depth warning exactly once (not
# once per chain), every footer warning must be in the log exactly once, and the footer
# (Footer.warnings) must carry the same tree-depth line with the numbers pemc-report summarize
# computes from the draws. A healthy run (a standard Gaussian, default depth) has no warnings.
# R-hat and bulk ESS, judged from the draws read back at the run's end (report/draw_checks.hpp):
# NUTS chains stuck in the two far-apart modes of a 2-D mixture get summarize's R-hat line, word
# for word, in the footer and the log, and Footer.draw_checks says checked with the largest R-hat;
# the healthy run is checked and has none; and with the read-back bound lowered (the test-only
# PEMC_TEST_DRAW_CHECK_MAX_BYTES) the runs say "R-hat and bulk ESS unchecked: ..." instead, with
# no R-hat line and draw_checks unchecked.
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
# Modes 22 standard deviations apart: no NUTS chain crosses; the four start on both sides (their
# uniform starting points fall on either side of x[1] + x[2] = 0; seeds 21..24 split 2 : 2 or so).
config split "mixture { components { weight: 1 mean: [-8, -8] variance: 1 }
  components { weight: 1 mean: [8, 8] variance: 1 } }" "" \
  | sed 's/uniform_radius: 1/uniform_radius: 10/' > "$WORK/split.pbtxt"
for run in deep healthy split; do
  (cd "$WORK" && run_mpi 2 "$DIST" "$run.pbtxt" > "$run.log" 2>&1) \
    || { cat "$WORK/$run.log"; fail "$run: pemc-dist failed"; }
done

footer_text() {  # FILE: the footer record in text format
  local last
  last=$("${TOOL[@]}" kinds "$1" | awk '$2 == "footer" { print $1 }')
  [ -n "$last" ] || fail "$1: no footer"
  "${TOOL[@]}" decode "$1" "$last"
}
footer_warnings() {  # FILE: the footer's warnings, one per line (text format's \' and \" undone)
  footer_text "$1" | sed -n 's/^  warnings: "\(.*\)"$/\1/p' | sed -e "s/\\\\'/'/g" -e 's/\\"/"/g'
}
draw_checks() {  # FILE: the footer's draw_checks fields, one "key: value" per line
  footer_text "$1" | sed -n '/^  draw_checks {/,/^  }/p' | sed -n 's/^    //p'
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
draw_checks "$WORK/healthy.pemc" > "$WORK/healthy.checks"
grep -qx 'checked: true' "$WORK/healthy.checks" && grep -q '^max_rhat: 1\.00' "$WORK/healthy.checks" \
  || { cat "$WORK/healthy.checks"; fail "healthy: draw_checks does not say checked with R-hat 1.00x"; }

# 3. Chains in different modes: summarize's R-hat line in the footer and once in the log.
footer_warnings "$WORK/split.pemc" > "$WORK/split.footer"
[ "$(grep -c '^R-hat: ' "$WORK/split.footer")" -eq 1 ] \
  || { cat "$WORK/split.footer" "$WORK/split.log"; fail "split: the footer lacks the R-hat warning"; }
rhat_line=$(grep '^R-hat: ' "$WORK/split.footer")
[ "$(grep -cF "[warning] $rhat_line" "$WORK/split.log")" -eq 1 ] \
  || { cat "$WORK/split.log"; fail "split: the R-hat warning is not logged exactly once"; }
"$REPORT" summarize "$WORK/split.pemc" --format json > "$WORK/split.json" || fail "summarize split"
"${PEMC_PYTHON:-/usr/bin/python3}" - "$WORK/split.json" "$rhat_line" <<'PY' || fail "split: footer's R-hat line is not summarize's"
import json, sys
warnings = json.load(open(sys.argv[1]))["posterior"][0]["warnings"]
rhat = [w for w in warnings if w.startswith("R-hat: ")]
if rhat != [sys.argv[2]]:
    sys.exit(f"summarize: {rhat}\nfooter:    {sys.argv[2]}")
PY
draw_checks "$WORK/split.pemc" > "$WORK/split.checks"
grep -qx 'checked: true' "$WORK/split.checks" \
  && awk '$1 == "max_rhat:" && $2 > 1.01 { ok = 1 } END { exit !ok }' "$WORK/split.checks" \
  || { cat "$WORK/split.checks"; fail "split: draw_checks does not say checked with R-hat > 1.01"; }

# 4. The read-back bound (lowered for the test): unchecked, said in the log and the footer, and no
#    R-hat line passes for a check.
for run in healthy split; do
  sed "s/$run.pemc/${run}_big.pemc/" "$WORK/$run.pbtxt" > "$WORK/${run}_big.pbtxt"
  (cd "$WORK" && PEMC_TEST_DRAW_CHECK_MAX_BYTES=1000 run_mpi 2 -x PEMC_TEST_DRAW_CHECK_MAX_BYTES \
     "$DIST" "${run}_big.pbtxt" > "${run}_big.log" 2>&1) \
    || { cat "$WORK/${run}_big.log"; fail "${run}_big: pemc-dist failed"; }
  footer_warnings "$WORK/${run}_big.pemc" > "$WORK/${run}_big.footer"
  line=$(grep '^R-hat and bulk ESS unchecked: ' "$WORK/${run}_big.footer") \
    || { cat "$WORK/${run}_big.footer"; fail "${run}_big: no unchecked line in the footer"; }
  pattern="^R-hat and bulk ESS unchecked: the file holds [0-9]+ bytes, more than the 1000 read "
  pattern+="back at the run's end; \`pemc-report summarize .*${run}_big\.pemc\` gives them$"
  [[ "$line" =~ $pattern ]] || fail "${run}_big: unexpected unchecked line: $line"
  [ "$(grep -cF "[warning] $line" "$WORK/${run}_big.log")" -eq 1 ] \
    || { cat "$WORK/${run}_big.log"; fail "${run}_big: the unchecked line is not logged exactly once"; }
  ! grep -q '^R-hat: \|^bulk ESS: ' "$WORK/${run}_big.footer" \
    || { cat "$WORK/${run}_big.footer"; fail "${run}_big: an R-hat or ESS line without a check"; }
  draw_checks "$WORK/${run}_big.pemc" > "$WORK/${run}_big.checks"
  ! grep -q '^checked: true\|^max_rhat\|^min_ess_bulk' "$WORK/${run}_big.checks" \
    && grep -q '^unchecked_reason: "the file holds' "$WORK/${run}_big.checks" \
    || { cat "$WORK/${run}_big.checks"; fail "${run}_big: draw_checks passes for checked"; }
done
echo "run_end_warnings: 4 checks passed"
