#!/usr/bin/env bash
# Continuous tempering's per-chain standard error of log Z (issue 31, item 3; "log_z_se", the
# batch-means delta-method SE of src/estimators/log_ratio_batch_means.hpp): over 64 seeds on a
# generated 10-unit Boltzmann relaxation (exact log Z by enumeration, pemc-report truth), the
# errors of the chains' log Z divided by their own SEs must look like standard normals.
#  - mean of z^2: E = 1 (a little above for SEs estimated from ~32-64 batches), sd of one z^2
#    ~ sqrt(2), so over n = 64 chains the mean has sd 0.18; allowed: [0.47, 1.53] (3 sd). An SE
#    half the true one gives ~4, twice it ~0.25.
#  - mean of z: sd 1 / sqrt(64) = 0.125; allowed |mean z| < 0.375 (3 sd): no bias beyond the SE.
source "$(dirname "$0")/common.sh"

cat > "$WORK/ct.pbtxt" <<'CFG'
name: "ct_se"
target { boltzmann { generated { seed: 31 n_units: 10 } } }
sampler {
  continuous_tempering {
    variant: GIBBS
    hmc { step_size: 0.2 n_leapfrog: 10 jitter_step_size: true jitter_n_leapfrog: true
          adaptation { enabled: true } }
    base { boltzmann_mean_field { seed: 1 } }
    sweeps_per_draw: 5
  }
}
warmup: 300
iterations: 2000
seeds { base: 1 count: 64 }
init { uniform_radius: 2.0 }
output { path: "out.pemc" thin: 10 }
CFG
"$REPORT" truth "$WORK/ct.pbtxt" --format json > "$WORK/truth.json" || fail "pemc-report truth"
run_mpi 3 "$DIST" "$WORK/ct.pbtxt" --output "$WORK/ct.pemc" --log-level warn || fail "run failed"
"$REPORT" summarize "$WORK/ct.pemc" --format json > "$WORK/s.json" || fail "summarize"
python3 - "$WORK/truth.json" "$WORK/s.json" <<'PY' || fail "log Z errors are not calibrated by log_z_se"
import json, math, sys
truth = json.load(open(sys.argv[1]))["log_z"]
runs = json.load(open(sys.argv[2]))["runs"]
assert len(runs) == 64, len(runs)
z = []
for r in runs:
    e = r["estimates"]
    assert r["status"] == "ok" and e["log_z_se"] > 0, r
    z.append((e["log_z"] - truth) / e["log_z_se"])
n = len(z)
mean_z = sum(z) / n
mean_z2 = sum(v * v for v in z) / n
se = [r["estimates"]["log_z_se"] for r in runs]
lz = [r["estimates"]["log_z"] for r in runs]
m = sum(lz) / n
spread = math.sqrt(sum((v - m) ** 2 for v in lz) / (n - 1))
print(f"truth {truth:.5f}; {n} chains: mean log Z {m:.5f}, sd across chains {spread:.4f}, "
      f"mean reported SE {sum(se) / n:.4f}; mean z {mean_z:+.3f}, mean z^2 {mean_z2:.3f}, "
      f"max |z| {max(abs(v) for v in z):.2f}")
assert 0.47 <= mean_z2 <= 1.53, mean_z2
assert abs(mean_z) < 0.375, mean_z
PY
echo "1 passed, 0 failed"
