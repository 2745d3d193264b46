#!/usr/bin/env bash
# Log Z trust flags end to end (src/estimators/log_z_trust.hpp, log_z_run_checks.hpp): a PT run far
# too short to make round trips on a well-separated mixture says so — a warning in pemc-dist's log,
# log_z_untrusted and its reason in the footer's estimates, a note in `pemc-report diagnose` and the
# count in `pemc-report compare` — while a long enough PT run on a Gaussian carries
# log_z_untrusted = 0. The same Gaussian run with 2 chains is unchecked (too few chains to compare)
# in the log, the footer, summarize and diagnose; and an AIS run whose weights have a heavy tail
# flags every chain and logs the estimate pooled over its chains' runs.
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
sed -e 's/name: "pt_gauss"/name: "pt_gauss2"/' -e 's/values: \[1, 2, 3\]/values: [1, 2]/' \
    -e 's/gauss.pemc/gauss2.pemc/' "$WORK/gauss.pbtxt" > "$WORK/gauss2.pbtxt"
# One annealing step from N(0, 1) to N(0, 25): the weights exp(z^2 (1 - 1/25) / 2) have a Pareto
# tail of shape 0.96 (tests/unit/tempering/st_ais_test.cpp, HeavyWeightTailIsFlagged).
cat > "$WORK/ais.pbtxt" <<'CFG'
name: "ais_heavy"
target { gaussian { mean: [0] variance: [25] } }
sampler {
  annealed_importance {
    hmc { step_size: 0.5 n_leapfrog: 3 }
    reference { mean: [0] variance: [1] }
    ladder { kind: EXPLICIT betas: [0, 1] }
  }
}
warmup: 0
iterations: 2000
seeds { values: [1, 2, 3, 4] }
output { path: "ais.pemc" }
CFG
(cd "$WORK" && run_mpi 2 "$DIST" short.pbtxt > short.log 2>&1) || { cat "$WORK/short.log"; fail "short run failed"; }
(cd "$WORK" && run_mpi 2 "$DIST" gauss2.pbtxt > gauss2.log 2>&1) || { cat "$WORK/gauss2.log"; fail "gauss2 run failed"; }
(cd "$WORK" && run_mpi 2 "$DIST" ais.pbtxt > ais.log 2>&1) || { cat "$WORK/ais.log"; fail "ais run failed"; }
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
# 4. Two chains: unchecked, never trusted — a warning per chain, the footer keys, summarize's line
#    and diagnose's headline; no "cannot be trusted".
[ "$(grep -c 'pt_gauss2 chain .* log_z .* is unchecked: the run has 2 chains with a log Z' "$WORK/gauss2.log")" -eq 2 ] \
  || { cat "$WORK/gauss2.log"; fail "expected 2 unchecked warnings"; }
python3 - "$REPORT" "$WORK/gauss2.pemc" <<'PY' || fail "unchecked footer keys"
import json, subprocess, sys
out = json.loads(subprocess.check_output([sys.argv[1], "summarize", sys.argv[2], "--format", "json"]))
e = [r["estimates"] for r in out["runs"]]
assert len(e) == 2, e
assert all(x["log_z_unchecked"] == 1 and x["log_z_chains_compared"] == 2 and x["log_z_untrusted"] == 0 for x in e), e
PY
"$REPORT" summarize "$WORK/gauss2.pemc" | grep -c 'run pt_gauss2: log Z: 0 of 2 chains cannot be trusted; 2 unchecked: 2 chains with a log Z and an SE' > /dev/null \
  || { "$REPORT" summarize "$WORK/gauss2.pemc"; fail "summarize unchecked line"; }
diag=$("$REPORT" diagnose "$WORK/gauss2.pemc")
grep -q <<< "$diag" 'log Z: 0 of 2 chains cannot be trusted; 2 unchecked' || { echo "$diag"; fail "diagnose unchecked headline"; }
[ "$(grep -c 'note: chain .*is unchecked' <<< "$diag")" -eq 2 ] || { echo "$diag"; fail "diagnose unchecked notes"; }
# The three-chain Gaussian run is checked: no unchecked line.
if "$REPORT" summarize "$WORK/gauss.pemc" | grep -c unchecked > /dev/null; then fail "unchecked on a 3-chain run"; fi
passed=$((passed + 1))

# 5. AIS with a heavy weight tail: every chain flagged weight_tail, the footer carries the pooled
#    estimate, the log a line with it, diagnose a note.
[ "$(grep -c 'ais_heavy chain .* cannot be trusted: .*weight_tail' "$WORK/ais.log")" -eq 4 ] \
  || { cat "$WORK/ais.log"; fail "expected 4 weight_tail warnings"; }
grep -q "ais_heavy: pooled over 4 chains' 8000 runs: log_z .*it cannot be trusted" "$WORK/ais.log" \
  || { cat "$WORK/ais.log"; fail "pooled AIS line"; }
python3 - "$REPORT" "$WORK/ais.pemc" <<'PY' || fail "pooled footer keys"
import json, subprocess, sys
out = json.loads(subprocess.check_output([sys.argv[1], "summarize", sys.argv[2], "--format", "json"]))
e = [r["estimates"] for r in out["runs"]]
assert len(e) == 4, e
assert all(x["log_z_untrusted_weight_tail"] == 1 and x["pooled_n_runs"] == 8000 and x["pooled_log_z_untrusted"] == 1 for x in e), e
assert len({x["pooled_log_z"] for x in e}) == 1, e
PY
"$REPORT" diagnose "$WORK/ais.pemc" | grep -c "note: log Z pooled over 4 chains' 8000 runs" > /dev/null \
  || { "$REPORT" diagnose "$WORK/ais.pemc"; fail "diagnose pooled note"; }
passed=$((passed + 1))
echo "$passed passed, 0 failed"
