#!/usr/bin/env bash
# Running estimates: with output.estimates_every = E a chain writes an EstimatesSnapshot every E
# post-warmup iterations, the last of which equals its footer estimates; pemc-report plots them
# against time (estimate-vs-time) and draws a PT chain's final ladder and barrier (schedule).
source "$(dirname "$0")/common.sh"
cat > "$WORK/pt.pbtxt" <<'CFG'
name: "pt_running"
target { mixture { preset: KOU_A } }
sampler {
  parallel_tempering {
    hmc { step_size: 0.05 n_leapfrog: 10 adaptation { enabled: true } }
    reference { mean: [5, 5] variance: [9, 9] }
    ladder { kind: LINEAR n_levels: 6 }
    adapt_schedule: true
  }
}
warmup: 300
iterations: 1000
seeds { values: [1, 2] }
init { uniform_box { lower: 0 upper: 10 } }
output { path: "pt.pemc" estimates_every: 100 }
CFG
(cd "$WORK" && run_mpi 2 "$DIST" pt.pbtxt --log-level warn) || fail "pemc-dist failed"
"$REPORT" export "$WORK/pt.pemc" --format csv > "$WORK/draws.csv" || fail "export failed"
# 2 chains x 1000 draws + the header line: snapshots do not disturb readers of draws.
[ "$(wc -l < "$WORK/draws.csv")" -eq 2001 ] || fail "expected 2001 CSV lines, got $(wc -l < "$WORK/draws.csv")"
"$REPORT" verify "$WORK/pt.pemc" > /dev/null || fail "verify failed"

# 10 snapshots per chain at iterations 100, ..., 1000; the last one's estimates equal the footer's.
"$REPORT" export "$WORK/pt.pemc" --estimates > "$WORK/est.csv" || fail "export --estimates failed"
python3 - "$PEMC_BIN" "$WORK/pt.pemc" "$WORK/est.csv" <<'PY' || fail "snapshot check failed"
import csv, json, subprocess, sys
bin_dir, path, est = sys.argv[1:4]
rows = list(csv.DictReader(open(est)))
assert len(rows) == 20, f"expected 20 snapshots, got {len(rows)}"
for chain in ("0", "1"):
    its = [int(r["iteration"]) for r in rows if r["chain_id"] == chain]
    assert its == list(range(100, 1001, 100)), its
    walls = [float(r["wall_seconds"]) for r in rows if r["chain_id"] == chain]
    assert walls == sorted(walls), "wall time goes back"
out = json.loads(subprocess.check_output([bin_dir + "/pemc-report", "summarize", path, "--format", "json"]))
def chains(o):
    if isinstance(o, dict):
        if "chain_id" in o and "estimates" in o: yield o
        for v in o.values(): yield from chains(v)
    elif isinstance(o, list):
        for v in o: yield from chains(v)
final = {str(c["chain_id"]): c["estimates"] for c in chains(out)}
assert set(final) == {"0", "1"}, final.keys()
for chain, est_final in final.items():
    last = [r for r in rows if r["chain_id"] == chain][-1]
    for key in ("log_z", "round_trips", "barrier", "swap_accept_0"):
        assert abs(float(last[key]) - est_final[key]) <= 1e-12 * max(1, abs(est_final[key])), (chain, key, last[key], est_final[key])
PY
"$REPORT" plot "$WORK/pt.pemc" --kind estimate-vs-time --estimate log_z -o "$WORK/logz.png" > "$WORK/plot1.log" 2>&1 || { cat "$WORK/plot1.log" >&2; fail "estimate-vs-time plot failed"; }
[ "$(stat -c %s "$WORK/logz.png")" -gt 5000 ] || fail "logz.png is too small"
"$REPORT" plot "$WORK/pt.pemc" --kind schedule -o "$WORK/schedule.svg" > "$WORK/plot2.log" 2>&1 || { cat "$WORK/plot2.log" >&2; fail "schedule plot failed"; }
grep -q "<path" "$WORK/schedule.svg" || fail "schedule.svg has no drawing"
# The RMSE of the running log Z over the two chains against the exact log Z (0: the mixture is
# normalised), per snapshot.
"$REPORT" plot "$WORK/pt.pemc" --kind error-vs-time -o "$WORK/err.png" > "$WORK/plot3.log" 2>&1 || { cat "$WORK/plot3.log" >&2; fail "error-vs-time plot failed"; }
[ "$(stat -c %s "$WORK/err.png")" -gt 5000 ] || fail "err.png is too small"
# An estimate no chain reports is a clear error naming what exists.
if "$REPORT" plot "$WORK/pt.pemc" --kind estimate-vs-time --estimate no_such -o "$WORK/x.png" 2> "$WORK/err.txt"; then
  fail "plotting a missing estimate succeeded"
fi
grep -q "no running estimate 'no_such'" "$WORK/err.txt" || { cat "$WORK/err.txt" >&2; fail "unclear error"; }
grep -q "round_trips" "$WORK/err.txt" || fail "the error does not list the available estimates"
echo "1 passed, 0 failed"
