#!/usr/bin/env bash
# A rank killed with SIGKILL mid-run: the job must end non-zero within 30 s with a message naming
# the rank (never hang), and the output must verify up to the last flushed batch (torn tail, or a
# gap of zeros where the killed rank was to write, allowed).
# Tried for a pure worker rank and for rank 0 (coordinator, collector and worker at once).
source "$(dirname "$0")/common.sh"
cfg="$PEMC_SOURCE_DIR/configs/quickstart.pbtxt"
passed=0

# rank_pid MPIRUN_PID RANK -> the PID of that rank's process (a direct child of mpirun on one node).
rank_pid() {
  local p
  for p in $(pgrep -P "$1"); do
    if tr '\0' '\n' 2>/dev/null < "/proc/$p/environ" | grep -cx >/dev/null "OMPI_COMM_WORLD_RANK=$2"; then
      echo "$p"; return 0
    fi
  done
  return 1
}

# good_records FILE -> the number of intact records pemc-report verify reports (0 if none).
good_records() {
  local v n
  v=$("$REPORT" verify "$1" 2>/dev/null || true)
  n=$(echo "$v" | grep -oE '[0-9]+ (good )?records' | grep -oE '^[0-9]+' || true)
  echo "${n:-0}"
}

# has_draws FILE -> true once summarize counts a draw in FILE (the first records can be others:
# the header, a pooled warmup's round estimates).
has_draws() { "$REPORT" summarize "$1" --format json 2>/dev/null | grep -qE '"n_draws": [1-9]'; }

tpid=""
# Never leave a run behind, whatever fails.
trap '[ -n "$tpid" ] && kill "$tpid" 2>/dev/null; rm -rf "$WORK"' EXIT

for victim in 2 0; do
  out="$WORK/kill$victim.pemc"
  log="$WORK/kill$victim.log"
  # Effectively endless (about 10^6 iterations/s per chain here); thinned so the file stays small
  # (a few hundred KB per second) while batches are flushed often.
  timeout 120 mpirun --oversubscribe -n 3 "$DIST" "$cfg" --output "$out" --iterations 1000000000 \
    --set output.thin=1000 --set output.flush_every=4 --log-level warn > "$log" 2>&1 &
  tpid=$!
  # Wait (at most 30 s) until the header and at least one batch of draws are on disk.
  for _ in $(seq 1 150); do
    [ -s "$out" ] && [ "$(good_records "$out")" -ge 2 ] && has_draws "$out" && break
    sleep 0.2
  done
  [ "$(good_records "$out")" -ge 2 ] && has_draws "$out" ||
    { cat "$log"; fail "rank $victim: no draws flushed within 30 s"; }
  mpirun_pid=$(pgrep -P "$tpid" mpirun || true)
  [ -n "$mpirun_pid" ] || fail "rank $victim: mpirun not found under timeout (pid $tpid)"
  pid=$(rank_pid "$mpirun_pid" "$victim") || fail "rank $victim: no process with OMPI_COMM_WORLD_RANK=$victim"
  t0=$(date +%s.%N)
  kill -9 "$pid"
  set +e
  wait "$tpid"
  rc=$?
  set -e
  tpid=""
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  [ "$rc" -ne 124 ] || { cat "$log"; fail "rank $victim killed: the job hung until timeout"; }
  [ "$rc" -ne 0 ] || fail "rank $victim killed: exit status 0"
  awk -v s="$secs" 'BEGIN { exit !(s < 30) }' || fail "rank $victim killed: the job took ${secs}s to end"
  grep -qE "rank $victim\b" "$log" || { cat "$log"; fail "rank $victim killed: no message names rank $victim"; }
  # The file verifies up to the last flushed record: intact header + draws, no footer.
  v=$("$REPORT" verify "$out" || true)
  n=$(good_records "$out")
  [ "$n" -ge 2 ] || fail "rank $victim killed: verify found $n good records: $v"
  if grep -q <<< "$v" ": OK ("; then fail "rank $victim killed: a footer was written?! $v"; fi
  # A leader that writes its own records (direct writes) and dies between being given an offset
  # and writing there leaves zeros: a gap that verify reports and reads past, or a zero tail.
  grep -qE <<< "$v" "no footer|DAMAGED at byte [0-9]+ \(record [0-9]+\): (torn frame|zero-length frame|a zero-filled gap)" ||
    fail "rank $victim killed: unexpected verify result: $v"
  # ... and is summarised up to there.
  # summarize exits 1 for a damaged (torn) file, after summarising it: look at what it printed.
  s=$("$REPORT" summarize "$out" --format json 2>/dev/null || true)
  grep -qE <<< "$s" '"n_draws": [1-9]' || fail "rank $victim killed: summarize found no draws"
  echo "rank $victim killed: exit $rc after ${secs}s; $(grep -m1 -oE "process rank $victim .*" "$log"); $v"
  passed=$((passed + 1))
done

echo "$passed passed, 0 failed"
