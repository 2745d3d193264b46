#!/usr/bin/env bash
# pemc-report plot on real runs: every kind writes a non-trivial PNG (magic bytes, > 10 KB) or SVG
# (a document with paths); a missing gnuplot and a bad output name are clear errors.
source "$(dirname "$0")/common.sh"
command -v gnuplot > /dev/null || { echo "SKIP: gnuplot not installed"; exit 0; }
passed=0
# Work directories that a failing plot keeps (named in its error) go away with $WORK.
export TMPDIR="$WORK"

# Two runs of different lengths on the 2-D Kou mixture (contours) and a 1-D run (density overlay).
for n in 500 2000; do
  cat > "$WORK/mix$n.pbtxt" <<CFG
name: "mix_nuts_$n"
target { mixture { preset: KOU_B } }
sampler { nuts { step_size: 0.1 adaptation { enabled: true } } }
warmup: 200
iterations: $n
seeds { values: [1, 2] }
init { uniform_box { lower: 0 upper: 10 } }
output { path: "mix$n.pemc" }
CFG
  (cd "$WORK" && run_mpi 2 "$DIST" "mix$n.pbtxt" --log-level warn) || fail "pemc-dist mix$n failed"
done
cat > "$WORK/bimodal.pbtxt" <<'CFG'
name: "bimodal_rwm"
target { mixture { preset: BIMODAL_1D } }
sampler { rwm { proposal_scale: 1.5 } }
iterations: 4000
seeds { values: [1, 2] }
output { path: "bimodal.pemc" }
CFG
(cd "$WORK" && run_mpi 2 "$DIST" bimodal.pbtxt --log-level warn) || fail "pemc-dist bimodal failed"

png_ok() {  # png_ok FILE: PNG magic and more than 10 KB
  [ -f "$1" ] || fail "$1 was not written"
  [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$1 is not a PNG"
  [ "$(stat -c %s "$1")" -gt 10000 ] || fail "$1 is suspiciously small ($(stat -c %s "$1") bytes)"
}
svg_ok() {  # svg_ok FILE: an SVG document with drawn paths
  [ -f "$1" ] || fail "$1 was not written"
  grep -q "<svg" "$1" && grep -q "</svg>" "$1" || fail "$1 is not an SVG document"
  [ "$(grep -c "<path" "$1")" -gt 10 ] || fail "$1 has almost no paths"
}

M="$WORK/mix500.pemc $WORK/mix2000.pemc"
"$REPORT" plot $M --kind scatter -o "$WORK/scatter.png" > /dev/null && png_ok "$WORK/scatter.png"
"$REPORT" plot $M --kind scatter --dims 1,0 -o "$WORK/scatter.svg" > /dev/null && svg_ok "$WORK/scatter.svg"
passed=$((passed + 1))
"$REPORT" plot $M --kind trace --dims 0,1 -o "$WORK/trace.png" > /dev/null && png_ok "$WORK/trace.png"
"$REPORT" plot "$WORK/bimodal.pemc" --kind hist -o "$WORK/hist.svg" > /dev/null && svg_ok "$WORK/hist.svg"
"$REPORT" plot $M --kind hist --dims 0,1 -o "$WORK/hist.png" > /dev/null && png_ok "$WORK/hist.png"
passed=$((passed + 1))
"$REPORT" plot $M --kind rmse-vs-n -o "$WORK/rmse_n.png" > /dev/null 2> "$WORK/n.err" && png_ok "$WORK/rmse_n.png"
grep -q "x axis: iterations" "$WORK/n.err" || fail "rmse-vs-n did not pick iterations as the x axis"
"$REPORT" plot $M "$WORK/bimodal.pemc" --kind rmse-vs-time -o "$WORK/rmse_t.svg" > /dev/null 2>&1 \
  && svg_ok "$WORK/rmse_t.svg"
passed=$((passed + 1))

# Errors: no gnuplot, unknown image type, coordinate outside the target.
set +e
"$REPORT" plot $M --gnuplot /nonexistent/gnuplot -o "$WORK/x.png" > /dev/null 2> "$WORK/e1"
rc1=$?
"$REPORT" plot $M -o "$WORK/x.gif" > /dev/null 2> "$WORK/e2"
rc2=$?
"$REPORT" plot "$WORK/bimodal.pemc" --kind hist --dims 3 -o "$WORK/x.png" > /dev/null 2> "$WORK/e3"
rc3=$?
set -e
[ "$rc1" -eq 1 ] && grep -q "gnuplot is needed" "$WORK/e1" || fail "missing gnuplot: rc $rc1, $(cat "$WORK/e1")"
[ "$rc2" -eq 1 ] && grep -q "use a .png or .svg" "$WORK/e2" || fail "bad extension: rc $rc2, $(cat "$WORK/e2")"
[ "$rc3" -eq 1 ] && grep -q "coordinate 3" "$WORK/e3" || fail "bad --dims: rc $rc3, $(cat "$WORK/e3")"
[ ! -e "$WORK/x.png" ] || fail "a failed plot left an output file"
passed=$((passed + 1))

echo "$passed passed, 0 failed"
