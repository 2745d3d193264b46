#!/usr/bin/env bash
# Running target moments in the EstimatesSnapshot records (mean, packed covariance, the base's
# moments and log zeta) of continuous tempering (JOINT, GIBBS), simulated tempering and AIS: the
# same bits from -n 1 and -n 2 (wall times aside), present where documented, and read back by
# `pemc-report errors` / `plot --kind error-vs-time --normalise base` (CT paper Figure 2).
source "$(dirname "$0")/common.sh"
TARGET='gaussian { mean: [1.0, -0.5, 0.25] covariance: [1.0, 0.3, 0.0, 0.3, 0.8, -0.2, 0.0, -0.2, 0.5] }'
write_cfg() {  # write_cfg NAME SAMPLER-BLOCK WARMUP ITERATIONS EVERY
  cat > "$WORK/$1.pbtxt" <<CFG
name: "$1"
target { $TARGET }
sampler { $2 }
warmup: $3
iterations: $4
seeds { base: 1 count: 3 }
init { uniform_radius: 1.0 }
output { path: "$1.pemc" estimates_every: $5 }
CFG
}
HMC='hmc { step_size: 0.3 n_leapfrog: 8 jitter_n_leapfrog: true adaptation { enabled: true } }'
write_cfg ct_joint "continuous_tempering { variant: JOINT $HMC
  base { gaussian { mean: [0.0, 0.0, 0.0] variance: [2.0, 2.0, 2.0] log_zeta: 0.5 } } }" 100 600 100
write_cfg ct_gibbs "continuous_tempering { variant: GIBBS $HMC
  base { gaussian { mean: [0.0, 0.0, 0.0] variance: [2.0, 2.0, 2.0] log_zeta: 0.5 } } }" 100 600 100
write_cfg st "simulated_tempering { $HMC reference { mean: [0, 0, 0] variance: [2, 2, 2] }
  ladder { kind: LINEAR n_levels: 6 } first_pilot_length: 20 }" 100 600 100
write_cfg ais "annealed_importance { $HMC reference { mean: [0, 0, 0] variance: [2, 2, 2] }
  ladder { kind: LINEAR n_levels: 20 } }" 10 60 10

# 3 d: mean_x[1..3], 6 packed covariance entries, the same for the base, base_log_zeta.
for name in ct_joint ct_gibbs st ais; do
  for n in 1 2; do
    mkdir -p "$WORK/n$n"
    (cd "$WORK/n$n" && run_mpi "$n" "$DIST" "$WORK/$name.pbtxt" --log-level warn) ||
      fail "$name on -n $n failed"
    # Column 5 is wall_seconds: the only thing allowed to differ.
    "$REPORT" export "$WORK/n$n/$name.pemc" --estimates --moments | cut -d, -f5 --complement \
      > "$WORK/raw.csv"
    { head -1 "$WORK/raw.csv"; tail -n +2 "$WORK/raw.csv" | sort; } > "$WORK/$name.n$n.csv"
  done
  cmp -s "$WORK/$name.n1.csv" "$WORK/$name.n2.csv" || fail "$name: snapshots differ between -n 1 and -n 2"
  python3 - "$WORK/$name.n1.csv" "$name" <<'PY' || fail "$name: snapshot moment columns"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
name = sys.argv[2]
assert len(rows) == 18, f"expected 3 chains x 6 snapshots, got {len(rows)}"
for r in rows:
    for k in ["mean_x[1]", "mean_x[3]", "cov_x[1]_x[1]", "cov_x[1]_x[3]", "cov_x[3]_x[3]",
              "base_mean_x[1]", "base_cov_x[2]_x[2]"]:
        assert r[k] != "", (k, r)
    assert float(r["cov_x[1]_x[1]"]) > 0 and float(r["cov_x[3]_x[3]"]) > 0
    # L L' of the Cholesky factor: 2 up to rounding.
    assert abs(float(r["base_cov_x[2]_x[2]"]) - 2.0) < 1e-12 and float(r["base_cov_x[1]_x[2]"]) == 0.0, r
    # log zeta only where the base came with one (the CT base here; a plain reference has none).
    assert (r["base_log_zeta"] == "0.5") == name.startswith("ct"), r["base_log_zeta"]
# The last snapshot's running mean is near the target's (1, -0.5, 0.25).
last = [r for r in rows if int(r["iteration"]) == max(int(x["iteration"]) for x in rows)]
for r in last:
    assert abs(float(r["mean_x[1]"]) - 1.0) < 0.6, r["mean_x[1]"]
PY
done

# Stopped (exit 4, checkpoint) after warmup and resumed on another rank count: the snapshots,
# moments included, are those of the uninterrupted run (the moment sums are in the checkpoint).
for name in ct_joint st ais; do
  stop=$([ "$name" = ais ] && echo 40 || echo 350)
  set +e
  (cd "$WORK/n1" && run_mpi 2 "$DIST" "$WORK/$name.pbtxt" --output "r_$name.pemc" \
    --stop-after-iterations "$stop" --log-level warn 2> "$WORK/stop.err")
  rc=$?
  set -e
  [ "$rc" -eq 4 ] || { cat "$WORK/stop.err" >&2; fail "$name: stop: exit status $rc, expected 4"; }
  (cd "$WORK/n1" && run_mpi 1 "$DIST" "$WORK/$name.pbtxt" --output "r_$name.pemc" --resume \
    --log-level warn) || fail "$name: resume failed"
  "$REPORT" export "$WORK/n1/r_$name.pemc" --estimates --moments | cut -d, -f5 --complement \
    > "$WORK/raw.csv"
  { head -1 "$WORK/raw.csv"; tail -n +2 "$WORK/raw.csv" | sort; } > "$WORK/$name.resumed.csv"
  cmp -s "$WORK/$name.n1.csv" "$WORK/$name.resumed.csv" ||
    fail "$name: snapshots after stop and resume differ from the uninterrupted run's"
done

# A plain HMC run has no moments (the columns stay empty) and nothing breaks.
cat > "$WORK/hmc.pbtxt" <<CFG
name: "hmc"
target { $TARGET }
sampler { $HMC }
warmup: 50
iterations: 200
seeds { base: 1 count: 1 }
output { path: "hmc.pemc" estimates_every: 100 }
CFG
(cd "$WORK" && run_mpi 1 "$DIST" hmc.pbtxt --log-level warn) || fail "hmc run failed"

# The errors of the running mean normalised by the base's (the report rebuilds the Gaussian target
# for its exact moments): one row per file with --final, 3 chains each.
"$REPORT" errors "$WORK"/n1/ct_joint.pemc "$WORK"/n1/st.pemc --estimate mean --normalise base \
  --final > "$WORK/errors.csv" || fail "pemc-report errors failed"
python3 - "$WORK/errors.csv" <<'PY' || fail "errors CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["file"] for r in rows] == ["ct_joint.pemc", "st.pemc"], rows
for r in rows:
    assert r["n_chains"] == "3" and r["index"] == "5", r
    # The base's mean (0, 0, 0) is far from (1, -0.5, 0.25): the chains improve on it.
    assert 0 < float(r["mean_error"]) < 1, r
PY
"$REPORT" errors "$WORK/n1/ct_joint.pemc" --estimate log_z --normalise base > "$WORK/logz.csv" ||
  fail "errors --estimate log_z failed"
[ "$(wc -l < "$WORK/logz.csv")" -eq 7 ] || fail "expected 6 log Z points and a header"
# ST's reference has no log zeta: nothing to normalise log Z by, said so, no rows.
"$REPORT" errors "$WORK/n1/st.pemc" --estimate log_z --normalise base > "$WORK/st_logz.csv" \
  2> "$WORK/st_logz.err" || fail "errors on st failed"
[ "$(wc -l < "$WORK/st_logz.csv")" -eq 1 ] || fail "st log Z normalised rows without a log zeta"
grep -q "no base log_z to normalise by" "$WORK/st_logz.err" || { cat "$WORK/st_logz.err" >&2; fail "no note"; }
for est in mean covariance; do
  "$REPORT" plot "$WORK"/n1/ct_joint.pemc "$WORK"/n1/ct_gibbs.pemc "$WORK"/n1/st.pemc "$WORK"/n1/ais.pemc \
    --kind error-vs-time --estimate $est --normalise base -o "$WORK/$est.png" > "$WORK/plot.log" 2>&1 ||
    { cat "$WORK/plot.log" >&2; fail "error-vs-time plot of $est failed"; }
  [ "$(stat -c %s "$WORK/$est.png")" -gt 5000 ] || fail "$est.png is too small"
done
echo "1 passed, 0 failed"
