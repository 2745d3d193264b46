#!/usr/bin/env bash
# Log Z trust flags end to end (src/estimators/log_z_trust.hpp): a PT run far too short to make
# round trips on a well-separated mixture says so — a warning in pemc-dist's log, log_z_untrusted
# and its reason in the footer's estimates, a note in `pemc-report diagnose` and the count in
# `pemc-report compare` — while a long enough PT run on a Gaussian carries log_z_untrusted = 0.
source "$(dirname "$0")/common.sh"
passed=0

cat > "$WORK/short.pbtxt" <<'CFG'
name: "pt_short"
target { mixture { preset: KOU_A } }
sampler {
  parallel_tempering {
    hmc { step_size: 0.05 n_leapfrog: 10 adaptation { enabled: true } }
    reference { mean: [5, 5] variance: [9, 9] }
    ladder { kind: LINEAR n_levels: 8 }
  }
}
warmup: 50
iterations: 60
seeds { values: [1, 2, 3] }
init { uniform_box { lower: 0 upper: 10 } }
output { path: "short.pemc" }
CFG
cat > "$WORK/gauss.pbtxt" <<'CFG'
name: "pt_gauss"
target { gaussian { mean: [1, -1] } }
sampler {
  parallel_tempering {
    hmc { step_size: 0.5 n_leapfrog: 4 adaptation { enabled: true } }
    reference { mean: [0, 0] variance: [4, 4] }
    ladder { kind: LINEAR n_levels: 4 }
  }
}
warmup: 200
iterations: 3000
seeds { values: [1, 2, 3] }
output { path: "gauss.pemc" }
CFG
(cd "$WORK" && run_mpi 2 "$DIST" short.pbtxt > short.log 2>&1) || { cat "$WORK/short.log"; fail "short run failed"; }
(cd "$WORK" && run_mpi 2 "$DIST" gauss.pbtxt > gauss.log 2>&1) || { cat "$WORK/gauss.log"; fail "gauss run failed"; }

# 1. The log: one warning per chain of the short run, naming the reason; none for the Gaussian.
[ "$(grep -c 'pt_short chain .* log_z .* cannot be trusted: round_trips' "$WORK/short.log")" -eq 3 ] \
  || { cat "$WORK/short.log"; fail "expected 3 round-trip warnings"; }
if grep -q 'cannot be trusted' "$WORK/gauss.log"; then cat "$WORK/gauss.log"; fail "warning on the Gaussian"; fi
passed=$((passed + 1))

# 2. The footer's estimates (via summarize): the flag and its reason, or a clean 0.
python3 - "$REPORT" "$WORK/short.pemc" "$WORK/gauss.pemc" <<'PY' || fail "footer keys"
import json, subprocess, sys
report, short, gauss = sys.argv[1:4]
def chains(path):
    out = json.loads(subprocess.check_output([report, "summarize", path, "--format", "json"]))
    found = []
    def walk(o):
        if isinstance(o, dict):
            if "chain_id" in o and "estimates" in o: found.append(o["estimates"])
            for v in o.values(): walk(v)
        elif isinstance(o, list):
            for v in o: walk(v)
    walk(out)
    return found
s = chains(short)
assert len(s) == 3 and all(e["log_z_untrusted"] == 1 and e["log_z_untrusted_round_trips"] == 1 for e in s), s
assert all("log_z_batches" in e for e in s), s
g = chains(gauss)
assert len(g) == 3 and all(e["log_z_untrusted"] == 0 for e in g), g
assert all("log_z_chains_spread_ratio" in e for e in g), g
PY
passed=$((passed + 1))

# 3. diagnose: a headline and a note per chain; compare: the count beside the spread and mean SE.
diag=$("$REPORT" diagnose "$WORK/short.pemc")
grep -q <<< "$diag" 'log Z: 3 of 3 chains cannot be trusted' || { echo "$diag"; fail "diagnose headline"; }
[ "$(grep -c 'note: chain .*cannot be trusted: round_trips' <<< "$diag")" -eq 3 ] || { echo "$diag"; fail "diagnose notes"; }
md=$("$REPORT" compare "$WORK/short.pemc" "$WORK/gauss.pemc")
grep -q <<< "$md" '^| pt_short | parallel_tempering | 3 | .*(mean SE [0-9.e-]*) 3 of 3 untrusted' || { echo "$md"; fail "compare short row"; }
grep -q <<< "$md" '^| pt_gauss | parallel_tempering | 3 | .*(mean SE [0-9.e-]*) |' || { echo "$md"; fail "compare gauss row"; }
passed=$((passed + 1))
echo "$passed passed, 0 failed"
