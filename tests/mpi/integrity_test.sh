#!/usr/bin/env bash
# Checkpoints are checked before they resume anything, one job writes an output at a time, the
# resume hint is a command that works, and a crash or a write failure leaves the other chains'
# draws in the file and a log that says what is on disk (docs/bad-inputs.md, "Checkpoint and
# resume", "One writer per output", "A crashing user model"; docs/checkpointing.md).
source "$(dirname "$0")/common.sh"
export OMPI_MCA_mpi_yield_when_idle=1
cd "$WORK"
passed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }

bg_pid=""
trap '[ -n "$bg_pid" ] && kill -KILL "$bg_pid" 2>/dev/null; rm -rf "$WORK"' EXIT

# flip FILE OFFSET: XOR one byte with 1, in place.
flip() {
  local b
  b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\%03o' $((b ^ 1)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# expect_refused NAME PATTERN COMMAND...: exit status 2 and a message matching PATTERN.
expect_refused() {
  local name=$1 pattern=$2 rc
  shift 2
  set +e
  "$@" > "$name.log" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || { cat "$name.log"; fail "$name: exit $rc, expected 2"; }
  grep -qE -- "$pattern" "$name.log" || { cat "$name.log"; fail "$name: no message matching '$pattern'"; }
  echo "$name: $(grep -m1 -E -- "$pattern" "$name.log" | cut -c1-240)"
}

# ---- 1. a damaged checkpoint is refused, and nothing changes ------------------------------------
# A pseudo-extended chain (N = 4 pseudo-samples, NUTS with a diagonal metric): the checkpoint is a
# few KB, so byte 0x200 (the issue's case) is inside the kernel's state.
cat > pe.pbtxt <<CFG
target { mixture { preset: KOU_B } }
sampler { pseudo_extended { n_pseudo: 4 nuts { step_size: 0.1 metric: DIAGONAL
  adaptation { enabled: true adapt_metric: true } } } }
warmup: 60
iterations: 90
seeds { values: [7] }
init { uniform_radius: 2.0 }
output { path: "pe.pemc" write_warmup: true }
CFG
run_mpi 2 "$DIST" pe.pbtxt --output full.pemc --log-level warn
"$REPORT" export full.pemc --include-warmup | sort > full.csv
set +e
run_mpi 2 "$DIST" pe.pbtxt --stop-after-iterations 40 --log-level warn 2> stop.err
rc=$?
set -e
[ "$rc" -eq 4 ] || { cat stop.err; fail "stop: exit $rc, expected 4"; }
[ "$(stat -c %s pe.pemc.ckpt)" -gt 1024 ] || fail "the checkpoint is smaller than expected"
cp pe.pemc good.pemc
cp pe.pemc.ckpt good.ckpt
size=$(stat -c %s good.ckpt)
damaged() {  # damaged NAME PATTERN: pe.pemc.ckpt as prepared by the caller is refused, nothing changes
  cp pe.pemc.ckpt bad.ckpt
  expect_refused "$1" "$2" run_mpi 2 "$DIST" pe.pbtxt --resume
  cmp -s pe.pemc good.pemc || fail "$1: the record file changed"
  cmp -s pe.pemc.ckpt bad.ckpt || fail "$1: the checkpoint changed"
  [ ! -e pe.pemc.resume.tmp ] || fail "$1: a partial copy was left behind"
  cp good.ckpt pe.pemc.ckpt
}
flip pe.pemc.ckpt $((0x200))
damaged ckpt-flip-0x200 "pe.pemc.ckpt: damaged checkpoint: checksum mismatch \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8} over [0-9]+ bytes of content\)"
flip pe.pemc.ckpt $((size - 1))
damaged ckpt-flip-last "damaged checkpoint: checksum mismatch"
flip pe.pemc.ckpt 17
damaged ckpt-flip-length "damaged checkpoint: the header says [0-9]+ bytes of content but $((size - 24)) follow"
truncate -s $((size - 100)) pe.pemc.ckpt
damaged ckpt-truncated "damaged checkpoint: the header says $((size - 24)) bytes of content but $((size - 124)) follow \(a truncated file, or a damaged header\)"
tail -c +25 good.ckpt > pe.pemc.ckpt  # the content alone: a checkpoint of format 1
damaged ckpt-format-1 "pe.pemc.ckpt: not a pemc checkpoint \(bad magic: expected \"PEMCCKPT\""
# A damaged record file (one flipped bit inside the records the checkpoint covers) is refused too.
flip pe.pemc 300
cp pe.pemc good.pemc
expect_refused record-flip "pe.pemc: cannot resume: the records the checkpoint covers are damaged: record [0-9]+ at byte [0-9]+: checksum mismatch" \
  run_mpi 2 "$DIST" pe.pbtxt --resume
cmp -s pe.pemc good.pemc || fail "record-flip: the record file changed"
ok "damaged checkpoints and record files are refused with the reason (exit 2), nothing changed"

# The intact checkpoint, after all that, resumes to the uninterrupted run's records.
run_mpi 2 "$DIST" pe.pbtxt --stop-after-iterations 40 --output pe2.pemc --log-level warn 2> /dev/null || true
run_mpi 3 "$DIST" pe.pbtxt --output pe2.pemc --resume --log-level warn || fail "resume of the intact checkpoint failed"
"$REPORT" export pe2.pemc --include-warmup | sort > pe2.csv
cmp -s full.csv pe2.csv || fail "resumed records differ from the uninterrupted run's"
ok "an intact checkpoint resumes bit-identically"

# ---- 2. the resume hint works as printed; a moved run resumes; differences are named ------------
cat > h.pbtxt <<CFG
target { gaussian { mean: [1.0, -2.0, 0.5] } }
sampler { hmc { step_size: 0.2 n_leapfrog: 8 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } } }
warmup: 60
iterations: 300
seeds { base: 3 count: 2 }
init { uniform_radius: 2.0 }
output { path: "h.pemc" }
CFG
OPTS=(--iterations 90 --warmup 50 --set output.thin=2 --set "sampler.hmc.step_size=0.25")
run_mpi 2 "$DIST" "$PWD/h.pbtxt" --output h.full.pemc "${OPTS[@]}" --log-level warn
"$REPORT" export h.full.pemc | sort > h.full.csv
set +e
run_mpi 2 "$DIST" "$PWD/h.pbtxt" --output h.pemc "${OPTS[@]}" --stop-after-iterations 70 2> h.stop.err
set -e
hint=$(grep -oE "resume with: pemc-dist .*" h.stop.err | sed 's/^resume with: pemc-dist //') ||
  { cat h.stop.err; fail "no resume hint"; }
grep -q -- "--iterations 90 --warmup 50 --set output.thin=2 --set sampler.hmc.step_size=0.25 --resume" <<< "$hint" ||
  fail "the hint omits the run's options: $hint"
eval "run_mpi 3 \"\$DIST\" $hint --log-level warn" || fail "the printed resume command failed: pemc-dist $hint"
"$REPORT" export h.pemc | sort > h.csv
cmp -s h.full.csv h.csv || fail "the hint's resume differs from the uninterrupted run"
ok "the resume hint (pemc-dist $hint) works as printed"

# Output and checkpoint moved together to another directory: resumes there.
set +e
run_mpi 2 "$DIST" h.pbtxt --output m.pemc "${OPTS[@]}" --stop-after-iterations 70 --log-level warn 2> /dev/null
set -e
mkdir moved
mv m.pemc m.pemc.ckpt moved/
run_mpi 2 "$DIST" h.pbtxt --output moved/m.pemc "${OPTS[@]}" --resume --log-level warn ||
  fail "resume of a run moved to another directory failed"
"$REPORT" export moved/m.pemc | sort > m.csv
cmp -s h.full.csv m.csv || fail "the moved run's records differ"
ok "output and checkpoint moved to another directory resume there"

# Another option: refused, naming the field and the options the checkpoint was written with.
set +e
run_mpi 2 "$DIST" h.pbtxt --output d.pemc "${OPTS[@]}" --stop-after-iterations 70 --log-level warn 2> /dev/null
set -e
expect_refused ckpt-other-config "iterations: checkpoint 90, now 91" \
  run_mpi 2 "$DIST" h.pbtxt --output d.pemc --iterations 91 --warmup 50 --set output.thin=2 --resume
grep -q "the checkpointed run's options were: --iterations 90 --warmup 50 --set output.thin=2 --set sampler.hmc.step_size=0.25" \
  ckpt-other-config.log || { cat ckpt-other-config.log; fail "the refusal does not give the checkpoint's options"; }
expect_refused ckpt-other-set "sampler.hmc.step_size: checkpoint 0.25, now 0.2" \
  run_mpi 2 "$DIST" h.pbtxt --output d.pemc --iterations 90 --warmup 50 --set output.thin=2 --resume
ok "a resume with other options names what differs"

# ---- 3. one writer per output ---------------------------------------------------------------
cat > slow.pbtxt <<CFG
target { gaussian { mean: [1.0, -2.0, 0.5] } }
sampler { nuts { step_size: 0.2 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } } }
warmup: 200
iterations: 1000000000
seeds { values: [5] }
init { uniform_radius: 2.0 }
output { path: "slow.pemc" thin: 2000 }
CFG
start_slow() {  # start_slow ARGS...: job A in the background (bg_pid = mpirun), until its file grows
  mpirun --oversubscribe -n 2 "$DIST" slow.pbtxt "$@" 2> A.err &
  bg_pid=$!
  for _ in $(seq 1 300); do [ -s slow.pemc.lock ] && [ "$(stat -c %s slow.pemc 2>/dev/null || echo 0)" -gt 2000 ] && break; sleep 0.05; done
  [ -s slow.pemc.lock ] || { cat A.err; fail "job A holds no lock"; }
}
stop_slow() {  # SIGUSR1: A checkpoints and exits 4
  local rc
  kill -USR1 "$bg_pid"
  set +e
  wait "$bg_pid"
  rc=$?
  set -e
  bg_pid=""
  [ "$rc" -eq 4 ] || { cat A.err; fail "job A: exit $rc after SIGUSR1, expected 4"; }
}
touch slow.pemc
start_slow --overwrite
a_rank0=$(sed -n 's/^pid \([0-9]*\) on host.*/\1/p' slow.pemc.lock)
pgrep -P "$bg_pid" | grep -qx "$a_rank0" || fail "the lock file names pid $a_rank0, not one of job A's ranks"
before=$(stat -c %s slow.pemc)
t0=$(date +%s.%N)
expect_refused lock-overwrite "slow.pemc is in use by another pemc-dist job \(pid $a_rank0 on host $(hostname) since .*; lock file slow.pemc.lock\)" \
  run_mpi 2 "$DIST" slow.pbtxt --overwrite
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
expect_refused lock-resume "slow.pemc is in use by another pemc-dist job \(pid $a_rank0" run_mpi 1 "$DIST" slow.pbtxt --resume
expect_refused lock-plain "slow.pemc is in use by another pemc-dist job" run_mpi 1 "$DIST" slow.pbtxt
"$DIST" slow.pbtxt --validate > lock-validate.log 2>&1 || { cat lock-validate.log; fail "--validate failed"; }
grep -q "warning: slow.pemc is in use by another pemc-dist job (pid $a_rank0" lock-validate.log ||
  { cat lock-validate.log; fail "--validate does not warn about the job holding the output"; }
sleep 0.5
[ "$(stat -c %s slow.pemc)" -gt "$before" ] || fail "job A stopped writing after the refused jobs"
stop_slow
v=$("$REPORT" verify slow.pemc || true)
grep -q "checksums OK" <<< "$v" || fail "job A's file does not verify: $v"
[ ! -e slow.pemc.lock ] || fail "job A left its lock file"
# The lock holds through a resume too.
start_slow --resume
expect_refused lock-during-resume "slow.pemc is in use by another pemc-dist job" run_mpi 1 "$DIST" slow.pbtxt --resume
stop_slow
grep -q "resuming from checkpoint 1" A.err || { cat A.err; fail "job A did not resume"; }
ok "a second job on the same output is refused in ${secs}s naming the holder (pid $a_rank0), the first goes on"

# ---- 4. a crashing user model: the other chains' draws reach the file; the log is true ----------
cat > crash.c <<'C'
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "plugin_abi.h"
/* A slow 2-d standard normal whose gradient dereferences NULL on MPI rank CRASH_RANK after
   CRASH_AFTER_MS milliseconds: a user model crashing with SIGSEGV on one rank. */
typedef struct { int crash; long after_ms; struct timespec t0; } Model;
int pemc_plugin_abi_version(void) { return 1; }
void* pemc_model_create(const char* a, char* e, size_t n) {
  Model* m = malloc(sizeof *m);
  const char* r = getenv("OMPI_COMM_WORLD_RANK");
  const char* c = getenv("CRASH_RANK");
  m->crash = r && c && atoi(r) == atoi(c);
  m->after_ms = getenv("CRASH_AFTER_MS") ? atol(getenv("CRASH_AFTER_MS")) : 1000;
  clock_gettime(CLOCK_MONOTONIC, &m->t0);
  return m;
}
void pemc_model_destroy(void* m) { free(m); }
int pemc_model_dim(const void* m) { return 2; }
double pemc_model_potential_gradient(void* mv, const double* x, double* g) {
  Model* m = mv;
  struct timespec t;
  usleep(20);
  if (m->crash) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - m->t0.tv_sec) * 1000 + (t.tv_nsec - m->t0.tv_nsec) / 1000000 > m->after_ms)
      *(volatile int*)0 = 1;
  }
  g[0] = x[0];
  g[1] = x[1];
  return 0.5 * (x[0] * x[0] + x[1] * x[1]);
}
C
${CC:-cc} -O1 -shared -fPIC -I"$PEMC_SOURCE_DIR/src/targets" -o libcrash.so crash.c || fail "cannot compile the crashing plugin"
# Draws are batched (flush_every: a million) so that none reaches the collector before the crash;
# rank 0 (the coordinator, which starts checkpoints) crashes after 2 s. 4 ranks: chains 0, 1, 2 on
# ranks 0, 1, 2, the collector on rank 3.
cat > crash.pbtxt <<CFG
target { plugin { library: "./libcrash.so" } }
sampler { hmc { step_size: 0.5 n_leapfrog: 5 } }
modes { enabled: false }  # no mode search on the slow model: sampling starts at once
warmup: 0
iterations: 1000000000
seeds { values: [1, 2, 3] }
init { uniform_radius: 1.0 }
output { path: "crash.pemc" flush_every: 1000000 }
CFG
set +e
CRASH_RANK=0 CRASH_AFTER_MS=2000 timeout 120 mpirun --oversubscribe -n 4 -x CRASH_RANK -x CRASH_AFTER_MS \
  "$DIST" crash.pbtxt > crash.log 2>&1
rc=$?
set -e
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || { cat crash.log; fail "crash: exit $rc"; }
grep -q "exited on signal 11" crash.log || { cat crash.log; fail "crash: mpirun did not report the SIGSEGV"; }
"$REPORT" summarize crash.pemc > crash.sum 2>&1 || true
# Whichever chain ran on rank 0 is lost with it; the chains on ranks 1 and 2 must be in the file.
n_kept=$(awk '$1 == "crash" && $4 >= 500 { n++ } END { print n + 0 }' crash.sum)
[ "$n_kept" -ge 2 ] || { cat crash.sum crash.log; fail "crash: only $n_kept chain(s) have draws in the file"; }
if grep -qE "checkpoint [0-9]+ written|checkpointed \(" crash.log; then
  cat crash.log; fail "crash: the log claims a checkpoint"
fi
grep -qE "\[rank 3\] \[warning\] signal 15 \(SIGTERM\) received: writing the records the chains send; on disk now: crash.pemc holds [0-9]+ records \([0-9]+ bytes\), no checkpoint yet" crash.log ||
  { cat crash.log; fail "crash: the collector does not say what is on disk"; }
ok "a SIGSEGV in the user model on rank 0: the other ranks' chains keep their draws ($(awk '$1 == "crash" { printf "%s ", $4 }' crash.sum)), the log claims no checkpoint"

# ---- 5. a write failure says what is on disk and how to continue -------------------------------
# (btl tcp: Open MPI's shared-memory files would hit the file-size limit, see fault_output_test.sh)
set +e
OMPI_MCA_btl=self,tcp timeout 120 mpirun --oversubscribe -n 3 bash -c "ulimit -f 256; exec \"$DIST\" \
  \"$PEMC_SOURCE_DIR/configs/quickstart.pbtxt\" --iterations 100000000 --output fsize.pemc \
  --set checkpoint.every_seconds=0.3 --set output.thin=20" > fsize.log 2>&1
rc=$?
set -e
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || { cat fsize.log; fail "file-size limit: exit $rc"; }
grep -qE "^  on disk: fsize.pemc holds [0-9]+ records \([0-9]+ bytes\), then a failed write \(the file may end in a partial record\); (checkpoint [0-9]+ \(fsize.pemc.ckpt\) covers the first [0-9]+ records \([0-9]+ bytes\): continue from it with: pemc-dist .* --resume|no checkpoint: a new run must start over)" fsize.log ||
  { cat fsize.log; fail "file-size limit: no 'on disk' description"; }
ok "a write failure says: $(grep -m1 -oE "on disk: .*" fsize.log | cut -c1-200)"

echo "$passed passed, 0 failed"
