#!/usr/bin/env bash
# End-to-end tests of deploy/slurm/*.sbatch against a real single-node Slurm (slurm-local.sh).
# In ctest's default suite as slurm.sbatch_scripts (label "slurm"); needs root (slurm-local installs
# and starts Slurm daemons; skipped, status 77, otherwise) and takes about three minutes, most of it
# the long-job tests waiting for Slurm's time-limit signal.
#
#   tests/slurm/run_slurm_tests.sh [BUILD_DIR]       (default BUILD_DIR: ./build; needs pemc-dist and
#                                                     pemc-report built there)
# Environment:
#   SLURM_LOCAL      path of slurm-local.sh (default: ../shared/tools/slurm-local.sh next to the repo)
#   KEEP_SLURM=1     leave Slurm running afterwards (default: stop it - unless it was already running
#                    before the tests, in which case it is left as found)
#   SKIP_REQUEUE=1   skip the requeue test (the slow one: two time-limit signals, ~1-2 min)
#   KEEP_WORK=1      keep the work directory (job logs and record files) for inspection
# Each test prints PASS/FAIL with its wall time; the script exits non-zero if any failed. The
# long-job tests send the time-limit signal themselves once pemc-dist runs (time_limit_signal), so
# they do not depend on how fast a loaded machine starts a job.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "${1:-$ROOT/build}" && pwd)
SLURM_LOCAL=${SLURM_LOCAL:-$ROOT/../shared/tools/slurm-local.sh}
DIST="$BIN/pemc-dist"
REPORT="$BIN/pemc-report"
CFG="$ROOT/tests/data/configs/slurm_gaussian.pbtxt"
[ -x "$DIST" ] && [ -x "$REPORT" ] || { echo "run_slurm_tests: build pemc-dist and pemc-report in $BIN first" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
  echo "run_slurm_tests: SKIPPED: slurm-local.sh installs and starts the Slurm daemons, which needs root" >&2
  exit 77  # ctest: skipped
fi
[ -x "$SLURM_LOCAL" ] || { echo "run_slurm_tests: no slurm-local.sh at $SLURM_LOCAL (set SLURM_LOCAL)" >&2; exit 2; }

T_START=$(date +%s)
WORK=$(mktemp -d /tmp/pemc-slurm-test.XXXXXX)
# The jobs inherit this environment (sbatch --export=ALL): the repo and build to use, and Open MPI
# settings for a container (loopback only, no fabric warnings).
export PEMC_ROOT="$ROOT" PEMC_BIN="$BIN"
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl=self,tcp,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none

already_up=0
"$SLURM_LOCAL" status >/dev/null 2>&1 && already_up=1
cleanup() {
  if [ "${KEEP_SLURM:-0}" != 1 ] && [ "$already_up" = 0 ]; then "$SLURM_LOCAL" stop | sed 's/^/  /'; fi
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "run_slurm_tests: work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

t0=$(date +%s)
"$SLURM_LOCAL" start | sed 's/^/  /' || { echo "run_slurm_tests: slurm-local start failed" >&2; exit 1; }
echo "run_slurm_tests: Slurm ready in $(( $(date +%s) - t0 ))s (was already running: $already_up)"

passed=0; failed=0; failures=()
pass() { echo "PASS $1 ($(( $(date +%s) - T0 ))s)"; passed=$((passed + 1)); }
fail() {
  echo "FAIL $1 ($(( $(date +%s) - T0 ))s): $2"; failed=$((failed + 1)); failures+=("$1")
  for f in "${@:3}"; do [ -f "$f" ] && { echo "----- $f"; tail -n 30 "$f"; }; done
}

submit() {  # submit SBATCH_ARGS... -> prints the job id
  (cd "$WORK" && sbatch --parsable "$@") | cut -d';' -f1
}
job_field() {  # job_field JOBID FIELD -> value from scontrol show job (first record)
  scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | grep -m1 "^$2=" | cut -d= -f2-
}
# wait_jobs SECONDS JOBID... : true once no job (or array element) of those ids is pending/running.
wait_jobs() {
  local deadline=$(( $(date +%s) + $1 )); shift
  local ids; ids=$(IFS=,; echo "$*")
  while [ -n "$(squeue -h -j "$ids" -o %i 2>/dev/null)" ]; do
    [ "$(date +%s)" -ge "$deadline" ] && { echo "  timeout: still queued: $(squeue -h -j "$ids" -o '%i:%T' | tr '\n' ' ')"; return 1; }
    sleep 2
  done
}
draws_of() { "$REPORT" summarize "$@" --format json 2>/dev/null | grep -o '"n_draws": [0-9]*' | awk '{print $2}' | sort | uniq -c | awk '{printf "%sx%s ", $1, $2}'; }
# Per-chain (chain id, mean) pairs from a summary, sorted: equal across files = same draws.
means_of() {
  "$REPORT" summarize "$@" --format json 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)
rows = s if isinstance(s, list) else s.get("chains", s.get("summaries", []))
out = []
def walk(x):
    if isinstance(x, dict):
        if "chain_id" in x and "mean" in x: out.append((x.get("seed"), x["chain_id"], tuple(x["mean"])))
        for v in x.values(): walk(v)
    elif isinstance(x, list):
        for v in x: walk(v)
walk(s)
for r in sorted(out): print(r)'
}

# ---- 1. one pemc-dist job over 3 ranks, srun --mpi=pmix ------------------------------------
T0=$(date +%s); name=single-srun
id=$(submit --ntasks=3 --time=5 -J "$name" "$ROOT/deploy/slurm/pemc-dist.sbatch" "$CFG" --iterations 300 --warmup 100 \
       --output out/single.pemc --log-level warn)
if wait_jobs 240 "$id"; then
  st=$(job_field "$id" JobState); ec=$(job_field "$id" ExitCode); log="$WORK/slurm-$name-$id.out"
  if [ "$st" != COMPLETED ] || [ "$ec" != 0:0 ]; then fail $name "job $id state $st exit $ec" "$log"
  elif ! "$REPORT" verify "$WORK/out/single.pemc" | grep -c >/dev/null ": OK ("; then fail $name "verify did not say OK" "$log"
  elif [ "$(draws_of "$WORK/out/single.pemc")" != "4x300 " ]; then fail $name "expected 4 chains x 300 draws, got $(draws_of "$WORK/out/single.pemc")" "$log"
  elif ! grep -q "3 ranks via srun" "$log"; then fail $name "log does not show 3 ranks via srun" "$log"
  else pass $name; fi
else fail $name "job $id did not finish in 240 s"; scancel "$id"; fi

# ---- 2. the same with mpirun inside the allocation (default output name) --------------------
T0=$(date +%s); name=single-mpirun
id=$(PEMC_LAUNCHER=mpirun submit --ntasks=3 --time=5 -J "$name" "$ROOT/deploy/slurm/pemc-dist.sbatch" "$CFG" \
       --iterations 300 --warmup 100 --log-level warn)
if wait_jobs 240 "$id"; then
  st=$(job_field "$id" JobState); ec=$(job_field "$id" ExitCode); log="$WORK/slurm-$name-$id.out"
  out="$WORK/out/slurm_gaussian.$id.pemc"
  if [ "$st" != COMPLETED ] || [ "$ec" != 0:0 ]; then fail $name "job $id state $st exit $ec" "$log"
  elif ! "$REPORT" verify "$out" | grep -c >/dev/null ": OK ("; then fail $name "verify of the default output $out did not say OK" "$log"
  elif [ "$(means_of "$out")" != "$(means_of "$WORK/out/single.pemc")" ]; then fail $name "draws differ from the srun job's" "$log"
  else pass $name; fi
else fail $name "job $id did not finish in 240 s"; scancel "$id"; fi

# ---- 3. a bad config fails the job with pemc-dist's exit status 2, writing nothing ----------
T0=$(date +%s); name=bad-config
id=$(submit --ntasks=2 --time=2 -J "$name" "$ROOT/deploy/slurm/pemc-dist.sbatch" "$CFG" --set sampler.hmc.step_size=-1 \
       --output out/bad.pemc)
if wait_jobs 120 "$id"; then
  st=$(job_field "$id" JobState); ec=$(job_field "$id" ExitCode); log="$WORK/slurm-$name-$id.out"
  if [ "$st" != FAILED ] || [ "$ec" != 2:0 ]; then fail $name "expected FAILED with exit 2:0, got $st $ec" "$log"
  elif ! grep -q "sampler.hmc.step_size" "$log"; then fail $name "log does not name the field" "$log"
  elif [ -e "$WORK/out/bad.pemc" ]; then fail $name "an output file was created" "$log"
  else pass $name; fi
else fail $name "job $id did not finish in 120 s"; scancel "$id"; fi

# ---- 4. job array, split by task: 4 array tasks x 1 chain = the unsplit run's draws ----------
T0=$(date +%s); name=array-tasks
id=$(submit --array=0-3 --ntasks=2 --time=5 -J "$name" "$ROOT/deploy/slurm/pemc-array.sbatch" "$CFG" \
       --iterations 300 --warmup 100 --log-level warn)
if wait_jobs 400 "$id"; then
  bad=""
  for i in 0 1 2 3; do
    f="$WORK/out/slurm_gaussian.task-$i.pemc"
    "$REPORT" verify "$f" 2>&1 | grep -c >/dev/null ": OK (" || bad="$bad task-$i"
  done
  logs=("$WORK"/slurm-$name-"${id}"_*.out)
  if [ -n "$bad" ]; then fail $name "not OK:$bad" "${logs[@]}"
  elif [ "$(draws_of "$WORK"/out/slurm_gaussian.task-*.pemc)" != "4x300 " ]; then fail $name "merged summary: $(draws_of "$WORK"/out/slurm_gaussian.task-*.pemc)" "${logs[@]}"
  elif [ "$(means_of "$WORK"/out/slurm_gaussian.task-*.pemc)" != "$(means_of "$WORK/out/single.pemc")" ]; then
    fail $name "merged array draws differ from the single job's" "${logs[@]}"
  else pass $name; fi
else fail $name "array $id did not finish in 400 s"; scancel "$id"; fi

# ---- 5. job array, split by seeds: base + i*K, count K ---------------------------------------
T0=$(date +%s); name=array-seeds
sed -e 's/^seeds {.*/seeds { base: 1 count: 2 }/' -e 's/^name: .*/name: "seedsplit"/' "$CFG" > "$WORK/seedsplit.pbtxt"
id=$(PEMC_SPLIT=seeds PEMC_PER_TASK=2 PEMC_SEED_BASE=100 submit --array=0-1 --ntasks=2 --time=5 -J "$name" \
       "$ROOT/deploy/slurm/pemc-array.sbatch" "$WORK/seedsplit.pbtxt" --iterations 200 --warmup 50 --log-level warn)
if wait_jobs 300 "$id"; then
  seeds=$("$REPORT" summarize "$WORK"/out/seedsplit.task-*.pemc --format json 2>/dev/null | grep -o '"seed": [0-9]*' | awk '{print $2}' | sort -n | tr '\n' ' ')
  logs=("$WORK"/slurm-$name-"${id}"_*.out)
  if [ "$seeds" != "100 101 102 103 " ]; then fail $name "expected seeds 100..103 across 2 files, got '$seeds'" "${logs[@]}"
  elif ! "$REPORT" verify "$WORK"/out/seedsplit.task-*.pemc >/dev/null; then fail $name "verify failed" "${logs[@]}"
  else pass $name; fi
else fail $name "array $id did not finish in 300 s"; scancel "$id"; fi

# ---- 6. a rank killed with SIGKILL inside a job: srun --kill-on-bad-exit ends the step ---------
T0=$(date +%s); name=rank-killed
id=$(submit --ntasks=3 --time=5 -J "$name" "$ROOT/deploy/slurm/pemc-dist.sbatch" "$CFG" --iterations 1000000000 \
       --set output.thin=1000 --set output.flush_every=4 --output out/killed.pemc --log-level warn)
log="$WORK/slurm-$name-$id.out"
victim=""
for _ in $(seq 1 150); do  # up to 30 s for the job to start and flush its first batches
  for p in $(pgrep -x pemc-dist); do
    env=$(tr '\0' '\n' 2>/dev/null < "/proc/$p/environ" || true)
    if grep -qx <<< "$env" "SLURM_JOB_ID=$id" && grep -qx <<< "$env" "SLURM_PROCID=1"; then victim=$p; fi
  done
  [ -n "$victim" ] && [ "$(stat -c %s "$WORK/out/killed.pemc" 2>/dev/null || echo 0)" -gt 4096 ] && break
  sleep 0.2
done
if [ -z "$victim" ]; then fail $name "no pemc-dist process of job $id with SLURM_PROCID=1" "$log"; scancel "$id"
else
  kill -9 "$victim"; t_kill=$(date +%s)
  if wait_jobs 60 "$id"; then
    took=$(( $(date +%s) - t_kill )); st=$(job_field "$id" JobState); ec=$(job_field "$id" ExitCode)
    v=$("$REPORT" verify "$WORK/out/killed.pemc" 2>&1)
    if [ "$took" -gt 30 ]; then fail $name "the job took ${took}s to end after the kill" "$log"
    elif [ "$st" != FAILED ]; then fail $name "expected FAILED, got $st $ec" "$log"
    elif ! grep -qE "task 1: Killed" "$log"; then fail $name "the log does not name task 1" "$log"
    # The killed rank may leave a zero-filled gap where it was to write (direct writes): verify
    # reports it and reads the records after it.
    elif ! grep -qE <<< "$v" "no footer|torn frame|zero-filled gap|zero-length frame"; then fail $name "unexpected verify result: $v" "$log"
    else echo "  ended ${took}s after the kill: $st $ec; $(grep -m1 'task 1: Killed' "$log"); $v"; pass $name; fi
  else fail $name "job $id still running 60 s after a rank was killed (hang)" "$log"; scancel "$id"; fi
fi

# ranks_ready JOBID N: N pemc-dist processes of the job run with their SIGUSR1 handler installed
# (bit 9 of SigCgt): a stop signal now checkpoints instead of killing a process still starting.
ranks_ready() {
  local p env mask count=0
  for p in $(pgrep -x pemc-dist); do
    env=$(tr '\0' '\n' 2>/dev/null < "/proc/$p/environ" || true)
    grep -qx <<< "$env" "SLURM_JOB_ID=$1" || continue
    mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
    [ -n "$mask" ] && (( (16#$mask >> 9) & 1 )) || return 1
    count=$((count + 1))
  done
  [ "$count" -ge "$2" ]
}
# time_limit_signal JOBID LOG WAIT_PATTERN: once the attempt's log matches WAIT_PATTERN (its
# pemc-dist started) and its ranks are ready, send the batch script the SIGUSR1 that Slurm's
# --signal=B:USR1@N sends before the time limit. Done by the test rather than by Slurm's clock, so
# that a slow start on a loaded machine cannot make the signal arrive before pemc-dist runs.
time_limit_signal() {
  for _ in $(seq 1 600); do
    if grep -q "$3" "$2" 2>/dev/null && ranks_ready "$1" 3; then
      sleep 2  # a few records into the file
      scancel --batch --signal=USR1 "$1"
      return 0
    fi
    sleep 0.5
  done
  echo "  no ready pemc-dist ranks for job $1 after 300 s (log: $(tail -n 2 "$2" 2>/dev/null))"
  return 1
}

# ---- 7. the long job: USR1 before the time limit -> stop pemc-dist, requeue, attempt 1 --------
# The time-limit signal (--signal=B:USR1@N) is sent by the test once pemc-dist runs (see
# time_limit_signal); --time=10 keeps Slurm's own far away. One requeue allowed; the second
# attempt is stopped the same way and ends.
if [ "${SKIP_REQUEUE:-0}" != 1 ]; then
  T0=$(date +%s); name=long-requeue
  id=$(PEMC_MAX_REQUEUES=1 PEMC_STOP_GRACE=60 submit --ntasks=3 --time=10 -J "$name" \
         "$ROOT/deploy/slurm/pemc-long.sbatch" "$CFG" --iterations 100000000 --output out/long.pemc)
  log="$WORK/slurm-$name-$id.out"
  time_limit_signal "$id" "$log" "\[attempt 0\].*ranks via" || fail $name "attempt 0 never ran" "$log"
  # Slurm holds a requeued job for about two minutes (EligibleTime). The test makes it eligible
  # sooner, but only once the first attempt's step daemons are gone and 5 s later: started while the
  # old instance is still being cleaned up, the new attempt's srun step is killed with it (seen here).
  hurried=0; gone_at=""
  for _ in $(seq 1 300); do
    [ -n "$(squeue -h -j "$id" -o %i 2>/dev/null)" ] || break
    if [ "$hurried" = 0 ] && [ "$(job_field "$id" Restarts)" = 1 ] && [ "$(job_field "$id" JobState)" = PENDING ]; then
      if pgrep -f "slurmstepd: \[$id\." >/dev/null; then gone_at=""
      elif [ -z "$gone_at" ]; then gone_at=$(date +%s)
      elif [ $(( $(date +%s) - gone_at )) -ge 5 ]; then
        scontrol update JobId="$id" StartTime=now >/dev/null 2>&1 && hurried=1
      fi
    fi
    if [ "$hurried" = 1 ] && grep -q "\[attempt 1\].*ranks via" "$log" 2>/dev/null; then
      time_limit_signal "$id" "$log" "\[attempt 1\].*ranks via" || break
      hurried=2
    fi
    sleep 1
  done
  if wait_jobs 120 "$id"; then
    restarts=$(job_field "$id" Restarts); st=$(job_field "$id" JobState)
    # Attempt 0 checkpoints on the stop; attempt 1 resumes the same file and checkpoints again.
    v0=$("$REPORT" verify "$WORK/out/long.pemc" 2>&1); v1=$v0
    n0=$(echo "$v0" | grep -oE '[0-9]+ (good )?records' | grep -oE '^[0-9]+'); n1=$n0
    if [ "$restarts" != 1 ]; then fail $name "expected Restarts=1, got '$restarts' (state $st)" "$log"
    elif ! grep -q "\[attempt 0\].*SIGUSR1" "$log" || ! grep -q "\[attempt 0\].*requeueing job $id" "$log"; then
      fail $name "attempt 0 did not log SIGUSR1 and the requeue" "$log"
    elif ! grep -q "\[attempt 1\].*SIGUSR1" "$log" || ! grep -q "\[attempt 1\].*not requeueing" "$log"; then
      fail $name "attempt 1 did not stop on SIGUSR1 without requeueing" "$log"
    elif ! grep -q "pemc-dist stopped (status" "$log"; then fail $name "no 'pemc-dist stopped' line" "$log"
    elif ! grep -q "\[attempt 1\].*--resume" "$log" || ! grep -q "resuming from checkpoint 1" "$log"; then
      fail $name "attempt 1 did not resume" "$log"
    elif [ "$(grep -c "checkpointed (" "$log")" != 2 ] || ! grep -q "checkpoint 2 written" "$log"; then
      fail $name "expected one checkpoint on each stop (checkpoint 1, then 2 after the resume)" "$log"
    elif [ ! -e "$WORK/out/long.pemc.ckpt" ]; then fail $name "no checkpoint after the last stop" "$log"
    elif [ -z "$n0" ] || [ "$n0" -lt 2 ] || [ -z "$n1" ] || [ "$n1" -lt 2 ]; then
      fail $name "interrupted files do not hold header + draws: '$v0' / '$v1'" "$log"
    elif echo "$v0$v1" | grep -c >/dev/null ": OK ("; then fail $name "an interrupted file has a footer?! '$v0' / '$v1'" "$log"
    else
      echo "  attempt 0: $v0"; echo "  attempt 1: $v1"
      grep -E "SIGUSR1|requeue|stopped" "$log" | sed 's/^/  log: /'
      pass $name
    fi
  else fail $name "job $id did not end in time" "$log"; scancel "$id"; fi
fi

# ---- 8. the long job under mpirun: the script's SIGUSR1 reaches the ranks through mpirun ------
if [ "${SKIP_REQUEUE:-0}" != 1 ]; then
  T0=$(date +%s); name=long-mpirun
  id=$(PEMC_LAUNCHER=mpirun PEMC_MAX_REQUEUES=0 PEMC_STOP_GRACE=60 submit --ntasks=3 --time=10 \
         -J "$name" "$ROOT/deploy/slurm/pemc-long.sbatch" "$CFG" \
         --iterations 100000000 --output out/long-mpirun.pemc)
  log="$WORK/slurm-$name-$id.out"
  time_limit_signal "$id" "$log" "\[attempt 0\].*ranks via" || fail $name "pemc-dist never ran" "$log"
  if wait_jobs 120 "$id"; then
    v=$("$REPORT" verify "$WORK/out/long-mpirun.pemc" 2>&1)
    if ! grep -q "pemc-dist stopped (status 4)" "$log"; then
      fail $name "pemc-dist did not stop with status 4 (checkpointed)" "$log"
    elif ! grep -q "checkpointed (" "$log" || [ ! -e "$WORK/out/long-mpirun.pemc.ckpt" ]; then
      fail $name "no checkpoint on the stop" "$log"
    elif ! grep -q <<< "$v" "checksums OK"; then fail $name "record file: $v" "$log"
    else
      echo "  $v"
      pass $name
    fi
  else fail $name "job $id did not end in time" "$log"; scancel "$id"; fi
fi

echo "run_slurm_tests: $passed passed, $failed failed${failures:+ (${failures[*]})} in $(( $(date +%s) - T_START ))s"
[ "$failed" -eq 0 ]
