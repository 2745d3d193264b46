#!/usr/bin/env bash
# A sampler that makes records faster than the collector can write them (a 3-D Gaussian, every draw
# kept, 3 ranks: rank 0 is collector, coordinator and worker at once). Record batches are sent in
# synchronous mode, so the workers wait for the collector (src/parallel/messenger.hpp) and the
# collector's loop still reaches its control messages: a SIGUSR1 mid-run must end in a checkpoint
# and status 4 within seconds. (Without the flow control the collector never got past the flood of
# batches and the stop hung until Slurm's SIGKILL; seen under srun.)
source "$(dirname "$0")/common.sh"

cat > "$WORK/flood.pbtxt" <<CFG
name: "flood"
target { gaussian { mean: [1.0, -2.0, 0.5] covariance: [1.0, 0.6, 0.0, 0.6, 2.0, -0.3, 0.0, -0.3, 0.5] } }
sampler { hmc { step_size: 0.25 n_leapfrog: 12 jitter_step_size: true adaptation { enabled: true } } }
warmup: 500
iterations: 100000000
seeds { values: [11, 12, 13] }
init { uniform_radius: 2.0 }
output { path: "$WORK/flood.pemc" }
CFG

out="$WORK/flood.pemc"
set +e
mpirun --oversubscribe -n 3 "$DIST" "$WORK/flood.pbtxt" \
  --log-level info 2> "$WORK/flood.err" &
pid=$!
for _ in $(seq 1 500); do [ -s "$out" ] && break; sleep 0.02; done
sleep 4
t0=$(date +%s%N)
kill -s USR1 "$pid"
# The stop must complete within 30 s; then it is a hang.
for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
  pkill -KILL -P "$pid" 2>/dev/null; kill -KILL "$pid" 2>/dev/null
  wait "$pid"; tail -20 "$WORK/flood.err" >&2
  fail "no stop within 30 s of SIGUSR1 (the collector never reached the stop request)"
fi
wait "$pid"
rc=$?
set -e
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$rc" -eq 4 ] || { tail -20 "$WORK/flood.err" >&2; fail "status $rc, expected 4 (stopped with a checkpoint)"; }
[ -e "$out.ckpt" ] || fail "no checkpoint $out.ckpt"
grep -q "checkpointed (" "$WORK/flood.err" || fail "no 'checkpointed' log line"
v=$("$REPORT" verify "$out" 2>&1 || true)
grep -q <<< "$v" "checksums OK" || fail "record file after the stop: $v"
echo "ok: stopped with a checkpoint ${ms} ms after SIGUSR1; $v"
