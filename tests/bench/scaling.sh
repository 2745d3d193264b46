#!/usr/bin/env bash
# Scaling study (docs/performance.md#scaling): what the coordinator, the collector and a chain's
# group of ranks cost per message, at -n 2 ... 64. Runs pemc-dist with --log-level debug and reads
# the per-rank "rank stats" lines (src/runner/rank_stats.hpp). On a machine with fewer cores than
# ranks wall time means nothing: printed are CPU seconds and counts.
#   farm-strong  a study's task farm: 64 chains of 10-D Gaussian NUTS, whatever -n
#   farm-weak    one chain per rank (-n chains)
#   farm-wide    farm-weak with a 100-D Gaussian: records of ~0.9 kB, as a Stan model's with
#                about 50 parameters (state + constrained outputs)
#   pt-strong    one parallel-tempering chain, 32 replicas (10-D Gaussian, HMC), over min(32, workers) ranks
#   pt-weak      one PT chain with 2 replicas per worker rank
# Each scenario runs with direct writes on (the default: leaders write their own batches,
# src/runner/direct_writes.hpp) and/or off (-d "on off": every record through the collector).
# Columns: total CPU of all ranks; coordinator messages, its handler CPU per message; collector
# records, MB, handler CPU per record and MB per collector CPU second; the leaders' CPU per record
# for writing their own batches (crc32 and pwrite; 0 with direct writes off); the largest send queue met
# (pending sends, mean/max over ranks), the longest drain (messages in a row waiting at a rank);
# summed over ranks: the wall seconds workers waited for a task (coordinator), for a free send slot
# (collector), in the group's collectives (PT exchanges), and those collectives' count.
#
# Usage: nice -n 5 tests/bench/scaling.sh [-n "2 4 8 16 32 64"] [-s "farm-strong farm-weak ..."]
#            [-d "on off"] [-i ITERS] [-w WORKDIR]
# PEMC_BIN=build by default. About 5 CPU minutes (35 min of wall time on the loaded 2-core machine).
set -euo pipefail

PEMC_BIN=${PEMC_BIN:-build}
ranks="2 4 8 16 32 64" scenarios="farm-strong farm-weak farm-wide pt-strong pt-weak"
iters=20000 work=/tmp/pemc-scaling writes="on"
while (($#)); do
  case $1 in
    -n) ranks=$2; shift 2 ;;
    -s) scenarios=$2; shift 2 ;;
    -i) iters=$2; shift 2 ;;
    -d) writes=$2; shift 2 ;;
    -w) work=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

zeros() { printf '0%.0s,' $(seq "$1") | sed 's/,$//'; }
workers() { (($1 >= 4)) && echo $(($1 - 1)) || echo "$1"; }  # parallel/layout.hpp

config() {  # scenario n direct(on|off): the config on stdout
  local s=$1 n=$2 d=$3 w; w=$(workers "$n")
  local dim=10 chains=$n sampler="nuts { }" it=$iters
  case $s in
    farm-strong) chains=64 ;;
    farm-wide) dim=100 ;;
    pt-strong|pt-weak)
      local k=32 r=$((w < 32 ? w : 32))
      [ "$s" = pt-weak ] && k=$((2 * r)) && ((k < 2)) && k=2
      chains=1 it=$((iters / 100))
      sampler="parallel_tempering { hmc { step_size: 0.3 n_leapfrog: 5 } reference { mean: [$(zeros $dim)] variance: [$(printf '4,%.0s' $(seq $dim) | sed 's/,$//')] }
        ladder { kind: LINEAR n_levels: $k } adapt_schedule: false choose_replicas: false ranks_per_chain: $r }" ;;
  esac
  cat <<CFG
name: "scaling"
modes { enabled: false }
target { gaussian { mean: [$(zeros $dim)] } }
sampler { $sampler }
warmup: $((it / 10))
iterations: $it
seeds { base: 1 count: $chains }
output { path: "$work/out.pemc" direct_writes: $([ "$d" = on ] && echo true || echo false) }
CFG
}

# The rank stats lines of one run -> one table row.
summarize() {
  awk -v s="$1" -v n="$2" -v d="$3" '
    /rank stats:/ {
      for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) v[kv[1]] = kv[2]
      cpu += v["cpu_s"]; cm += v["coord_msgs"]; cc += v["coord_cpu_s"]
      rec += v["records"]; by += v["record_bytes"]; lc += v["coll_cpu_s"]
      if (v["max_in_flight"] > qmax) qmax = v["max_in_flight"]
      if (v["mean_in_flight"] > qmean) qmean = v["mean_in_flight"]
      if (v["max_drain"] > drain) drain = v["max_drain"]
      tw += v["task_wait_s"]; ww += v["window_wait_s"]; wn += v["window_waits"]
      gw += v["group_wait_s"]; gc += v["group_calls"]; dc += v["direct_cpu_s"]
    }
    END {
      printf "| %s | %d | %s | %.2f | %d | %.1f | %d | %.1f | %.3f | %.0f | %.3f | %.2f / %d | %d | %.3f | %d / %.3f | %.3f | %d |\n",
        s, n, d, cpu, cm, cm ? 1e6 * cc / cm : 0, rec, by / 1e6, rec ? 1e6 * lc / rec : 0,
        lc ? by / 1e6 / lc : 0, rec ? 1e6 * dc / rec : 0, qmean, qmax, drain, tw, wn, ww, gw, gc
    }'
}

echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $iters iterations per chain (PT: /100)"
echo "| scenario | -n | direct writes | CPU s (all ranks) | coord msgs | coord µs/msg | records | MB | collector µs/record | MB per collector CPU s | leaders' write µs/record | send queue mean / max | max drain | task wait s | window waits / s | group wait s | group calls |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for s in $scenarios; do
  for n in $ranks; do
    for d in $writes; do
      base="$work/$s-$n-$d"
      config "$s" "$n" "$d" > "$base.pbtxt"
      if ! nice -n 5 mpirun --oversubscribe -n "$n" "$PEMC_BIN/pemc-dist" "$base.pbtxt" \
          --overwrite --log-level debug > "$base.log" 2>&1; then
        echo "| $s | $n | $d | failed: see $base.log |"; continue
      fi
      summarize "$s" "$n" "$d" < "$base.log"
    done
  done
done
rm -f "$work/out.pemc"
