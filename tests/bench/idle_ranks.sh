#!/usr/bin/env bash
# CPU that ranks with nothing left to do spend while the last chain finishes (issue: idle ranks
# must wait asleep, not spin). A study of two runs on a 10-D Gaussian, one chain each: a short
# one (100 iterations) and a long one (ITERS iterations, thinned), on 2 ranks without
# oversubscription (Open MPI then polls at full speed in blocking calls). Run in both task
# orders; which rank gets the long chain depends on which asks first (rank 0 is also coordinator
# and collector: idle, it serves the other; rank 1 idle waits for the end of the run). Printed per
# rank: user + system CPU seconds, wall seconds (/usr/bin/time) and their ratio: the rank that ran
# the long chain is near 1, the idle one should be near 0.
#
# Usage: PEMC_BIN=build tests/bench/idle_ranks.sh [-i ITERS] [-w WORKDIR]
# Needs 2 free cores (fewer: Open MPI refuses to start 2 ranks without --oversubscribe).
set -euo pipefail

PEMC_BIN=${PEMC_BIN:-build}
iters=4000000 work=/tmp/pemc-idle-bench
while (($#)); do
  case $1 in
    -i) iters=$2; shift 2 ;;
    -w) work=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cat > "$work/wrap.sh" <<'WRAP'
#!/bin/bash
exec /usr/bin/time -f "$OMPI_COMM_WORLD_RANK %U %S %e" -o "$PEMC_IDLE_TIMES.$OMPI_COMM_WORLD_RANK" "$@"
WRAP
chmod +x "$work/wrap.sh"

study() {  # $1 $2: the runs in task order
  cat <<CFG
name: "idle_ranks"
target { gaussian { mean: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0] } }
sampler { nuts { } }
warmup: 500
seeds { values: [1] }
output { path: "$work/idle.pemc" thin: 100 }
runs { $1 }
runs { $2 }
CFG
}

echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %5s %10s %10s %12s\n' order rank "CPU s" "wall s" "CPU / wall"
for order in short-first long-first; do
  short='name: "short" iterations: 100' long="name: \"long\" iterations: $iters"
  if [ "$order" = short-first ]; then study "$short" "$long"; else study "$long" "$short"; fi > "$work/study.pbtxt"
  PEMC_IDLE_TIMES="$work/times" mpirun -n 2 -x PEMC_IDLE_TIMES "$work/wrap.sh" \
    "$PEMC_BIN/pemc-dist" "$work/study.pbtxt" --overwrite --log-level warn
  for rank in 0 1; do
    read -r _ user sys wall < "$work/times.$rank"
    awk -v o="$order" -v r="$rank" -v u="$user" -v s="$sys" -v w="$wall" \
      'BEGIN { printf "%-22s %5d %10.2f %10.2f %12.3f\n", o, r, u + s, w, (u + s) / w }'
  done
done
